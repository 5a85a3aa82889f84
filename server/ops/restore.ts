/**
 * Restores a backup file into a data directory whose server is stopped. Everything is staged
 * first, beside its destination: the database is checked (`PRAGMA integrity_check`, schema not
 * newer than this build) in a temporary file and the TLS files are written under temporary names.
 * Only then are they renamed into place, the database last, so a restore that fails leaves the
 * data directory as it was (and no staging files). The database it replaces is kept beside it;
 * one that cannot even be opened is set aside as it is, with its -wal/-shm.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from '../config.js';
import { BackupError, unpackBackup, type BackupHeader } from './backup.js';
import { claimPidFile, removePidFile, runningServerPid } from './pid-file.js';
import { schemaState } from './schema-version.js';

export const DATABASE_FILE = 'gatehouse.db';
const STAGED = '.restoring';

export interface RestoreResult {
  header: BackupHeader;
  /** Where the replaced database was moved, when there was one. */
  previous?: string;
  files: string[];
}

const FS_REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'part of that path is not a directory',
  EEXIST: 'something else is in the way',
  EISDIR: 'it is a directory',
  ERR_FS_EISDIR: 'it is a directory',
};

/** A file-system failure while restoring, as one sentence for the administrator. */
function restoreFailure(error: unknown, dataDir: string): Error {
  if (error instanceof BackupError || error instanceof ConfigError) return error;
  const { code, path } = error as NodeJS.ErrnoException;
  const why = (code && FS_REASONS[code]) ?? code ?? (error as Error)?.message ?? String(error);
  return new BackupError(`Cannot restore into ${dataDir}: writing ${path ?? dataDir} failed (${why}); nothing was changed.`);
}

function notADirectory(dataDir: string, path: string): BackupError {
  return new BackupError(`Cannot restore into ${dataDir}: ${path} is in the way and is not a directory; nothing was changed.`);
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

/** Checks the staged database; throws `BackupError` when it is damaged or too new. */
function checkDatabase(staged: string): void {
  let check: Database.Database;
  try {
    check = new Database(staged, { fileMustExist: true });
  } catch {
    throw new BackupError('This backup is damaged: its database cannot be opened.');
  }
  try {
    let result: string;
    try {
      result = String(check.pragma('integrity_check', { simple: true }));
    } catch {
      result = 'unreadable';
    }
    if (result !== 'ok') throw new BackupError('This backup is damaged: its database fails the integrity check.');
    const state = schemaState(check);
    if (state.newer) {
      throw new BackupError(
        `This backup was made by a newer Gatehouse (schema ${state.applied.at(-1)}, this one knows up to ${state.latest}); upgrade Gatehouse before restoring it.`,
      );
    }
  } finally {
    check.close();
  }
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0');

/** Whether a file starts like an SQLite database (read without opening it in SQLite). */
function looksLikeSqlite(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const head = Buffer.alloc(SQLITE_HEADER.length);
    return readSync(fd, head, 0, head.length, 0) === head.length && head.equals(SQLITE_HEADER);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Moves the current database, with its -wal and -shm as they are, to `previous`. A readable one
 * then has its WAL folded in so the kept copy stands alone; one that is not a database (or cannot
 * be checkpointed) is left exactly as it was, since SQLite may discard a WAL it cannot use.
 * Returns how to put it back.
 */
function setAside(target: string, previous: string): () => void {
  const moved: string[] = [];
  const putBack = () => {
    for (const suffix of moved.reverse()) {
      if (existsSync(`${previous}${suffix}`)) renameSync(`${previous}${suffix}`, `${target}${suffix}`);
    }
  };
  try {
    for (const suffix of ['', '-wal', '-shm']) {
      if (!existsSync(`${target}${suffix}`)) continue;
      renameSync(`${target}${suffix}`, `${previous}${suffix}`);
      moved.push(suffix);
    }
  } catch (error) {
    putBack();
    throw error;
  }
  if (looksLikeSqlite(previous)) {
    try {
      const old = new Database(previous, { fileMustExist: true });
      try {
        // Closing the last connection then removes the emptied -wal and the -shm.
        old.pragma('wal_checkpoint(TRUNCATE)');
      } finally {
        old.close();
      }
    } catch {
      // damaged inside: kept as it is
    }
  }
  return putBack;
}

export function restoreBackup(options: { file: string; dataDir: string; passphrase?: string; now: Date }): RestoreResult {
  const { dataDir } = options;
  const refuse = (pid: number) => new BackupError(`A Gatehouse server (pid ${pid}) is using ${dataDir}; stop it before restoring.`);
  const running = runningServerPid(dataDir);
  if (running !== undefined) throw refuse(running);
  let bytes: Buffer;
  try {
    bytes = readFileSync(options.file);
  } catch {
    throw new BackupError(`Cannot read the backup file ${options.file}.`);
  }
  const { header, files } = unpackBackup(bytes, options.passphrase);

  let holder: number | undefined;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    // Hold the pid file while restoring, so a server cannot start on a half-restored directory.
    holder = claimPidFile(dataDir, 'held');
  } catch (error) {
    throw restoreFailure(error, dataDir);
  }
  if (holder !== undefined) throw refuse(holder);
  try {
    return restoreClaimed(dataDir, header, files, options.now);
  } finally {
    removePidFile(dataDir);
  }
}

function restoreClaimed(
  dataDir: string,
  header: BackupHeader,
  files: ReturnType<typeof unpackBackup>['files'],
  now: Date,
): RestoreResult {
  const target = join(dataDir, DATABASE_FILE);
  const stagedDb = `${target}${STAGED}`;
  const others = [...files].filter(([path]) => path !== DATABASE_FILE).map(([path, file]) => ({ path, dest: join(dataDir, path), ...file }));
  // Cleanup on failure: staged files still to be removed, directories this restore created.
  const stagedFiles: string[] = [];
  const createdDirs: string[] = [];
  const undo: (() => void)[] = [];
  let previous: string | undefined;
  try {
    // 1. Stage: nothing the data directory already holds changes.
    rmSync(stagedDb, { force: true });
    stagedFiles.push(stagedDb);
    writeFileSync(stagedDb, files.get(DATABASE_FILE)!.data, { mode: 0o600 });
    checkDatabase(stagedDb);
    for (const file of others) {
      const dir = dirname(file.dest);
      if (!existsSync(dir)) {
        mkdirSync(dir, { mode: 0o700 });
        createdDirs.push(dir);
      } else if (!isDirectory(dir)) {
        throw notADirectory(dataDir, dir);
      }
      if (isDirectory(file.dest)) throw new BackupError(`Cannot restore into ${dataDir}: ${file.dest} is a directory; nothing was changed.`);
      const temp = `${file.dest}${STAGED}`;
      stagedFiles.push(temp);
      writeFileSync(temp, file.data, { mode: file.mode });
      chmodSync(temp, file.mode);
    }

    // 2. Rename into place, the database last; each step can be undone until the last one.
    for (const file of others) {
      const old = existsSync(file.dest) ? { data: readFileSync(file.dest), mode: statSync(file.dest).mode & 0o777 } : undefined;
      renameSync(`${file.dest}${STAGED}`, file.dest);
      undo.push(() => {
        if (!old) return rmSync(file.dest, { force: true });
        writeFileSync(file.dest, old.data, { mode: old.mode });
        chmodSync(file.dest, old.mode);
      });
    }
    if (existsSync(target)) {
      previous = `${target}.before-restore-${now.toISOString().replace(/[-:.]/g, '')}`;
      undo.push(setAside(target, previous));
    }
    for (const suffix of ['-wal', '-shm']) rmSync(`${target}${suffix}`, { force: true });
    renameSync(stagedDb, target);
    chmodSync(target, 0o600);
  } catch (error) {
    for (const step of undo.reverse()) {
      try {
        step();
      } catch {
        // keep undoing the rest
      }
    }
    for (const path of stagedFiles) {
      try {
        rmSync(path, { force: true });
      } catch {
        // not ours to remove (e.g. a directory in the way)
      }
    }
    for (const dir of createdDirs.reverse()) {
      try {
        rmdirSync(dir);
      } catch {
        // not empty: it held something before
      }
    }
    throw restoreFailure(error, dataDir);
  }
  return { header, previous, files: [DATABASE_FILE, ...others.map((f) => f.path)] };
}
