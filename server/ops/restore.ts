/**
 * Restores a backup file into a data directory whose server is stopped, as a stream in constant
 * memory. Everything is staged first, beside its destination: the file is decrypted chunk by
 * chunk (each authenticated before use), decompressed and unpacked into `<name>.restoring`
 * files; the archive's checksums are compared; the database is checked (`PRAGMA
 * integrity_check`, schema not newer than this build). Only then are the files renamed into
 * place, the database last, so a restore that fails at any point — a wrong passphrase, a file cut
 * short or altered, a full disk, something in the way — leaves the data directory as it was (and
 * no staging files). The database it replaces is kept beside it; one that cannot even be opened
 * is set aside as it is, with its -wal/-shm.
 */
import { chmodSync, closeSync, createReadStream, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createGunzip } from 'node:zlib';
import Database from 'better-sqlite3';
import { ConfigError } from '../config.js';
import { BackupError, readHeaderLine, type BackupHeader } from './backup.js';
import { carriedFile, DATABASE_ENTRY } from './backup-files.js';
import { ArchiveError, pipeAll, readArchive } from './backup-archive.js';
import { DamagedError, DecryptStream, headerDigest, openEncryption, WrongKeyError, type CipherParams, type Kdf, type Secret } from './backup-crypto.js';
import { LegacyBackupError, unpackLegacy, type LegacyHeader } from './backup-legacy.js';
import { claimPidFile, removePidFile, runningServerPid } from './pid-file.js';
import { schemaState } from './schema-version.js';

export const DATABASE_FILE = DATABASE_ENTRY;
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

/** Any failure while restoring, as one sentence for the administrator. */
function restoreFailure(error: unknown, dataDir: string): Error {
  if (error instanceof BackupError || error instanceof ConfigError) return error;
  if (error instanceof WrongKeyError) return new BackupError(error.message);
  if (error instanceof DamagedError || error instanceof ArchiveError) return new BackupError(`This backup is damaged: ${error.message}; nothing was changed.`);
  const { code, path } = error as NodeJS.ErrnoException;
  // zlib: a body that is not gzip, or one cut short.
  if (code === 'Z_BUF_ERROR' || (error as Error)?.message === 'unexpected end of file') return new BackupError('This backup is damaged: it ends early; nothing was changed.');
  if (typeof code === 'string' && code.startsWith('Z_')) return new BackupError('This backup is damaged: its contents cannot be read; nothing was changed.');
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

/** Files staged so far and directories created for them: what a failed restore removes again. */
class Staging {
  readonly files: { path: string; dest: string; staged: string; mode: number }[] = [];
  readonly createdDirs: string[] = [];

  constructor(private readonly dataDir: string) {}

  /** The staging name for an archive path; creates its directory; refuses unknown names. */
  place(path: string, mode: number): string {
    try {
      return this.prepare(path, mode);
    } catch (error) {
      throw restoreFailure(error, this.dataDir);
    }
  }

  private prepare(path: string, mode: number): string {
    const carried = carriedFile(path);
    if (path !== DATABASE_ENTRY && !carried) throw new BackupError(`This backup is damaged: it contains an unexpected file "${path}".`);
    const dest = join(this.dataDir, ...path.split('/'));
    const dir = dirname(dest);
    if (!existsSync(dir)) {
      mkdirSync(dir, { mode: 0o700 });
      this.createdDirs.push(dir);
    } else if (!isDirectory(dir)) {
      throw notADirectory(this.dataDir, dir);
    }
    if (path !== DATABASE_ENTRY && isDirectory(dest)) throw new BackupError(`Cannot restore into ${this.dataDir}: ${dest} is a directory; nothing was changed.`);
    const staged = `${dest}${STAGED}`;
    rmSync(staged, { force: true });
    const fileMode = carried?.mode ?? (mode === 0o644 ? 0o644 : 0o600);
    this.files.push({ path, dest, staged, mode: fileMode });
    return staged;
  }

  discard(): void {
    for (const file of this.files) {
      try {
        rmSync(file.staged, { force: true });
      } catch {
        // not ours to remove (e.g. a directory in the way)
      }
    }
    for (const dir of [...this.createdDirs].reverse()) {
      try {
        rmdirSync(dir);
      } catch {
        // not empty: it held something before
      }
    }
  }
}

export async function restoreBackup(options: { file: string; dataDir: string; secret?: Secret; now: Date }): Promise<RestoreResult> {
  const { dataDir } = options;
  const refuse = (pid: number) => new BackupError(`A Gatehouse server (pid ${pid}) is using ${dataDir}; stop it before restoring.`);
  const running = runningServerPid(dataDir);
  if (running !== undefined) throw refuse(running);
  let read: ReturnType<typeof readHeaderLine>;
  try {
    read = readHeaderLine(options.file);
  } catch {
    throw new BackupError(`Cannot read the backup file ${options.file}.`);
  }
  if (!read) throw new BackupError('This file is not a Gatehouse backup.');
  const { header, line } = read;
  if (header.version !== 1 && header.version !== 2) {
    throw new BackupError(`This backup uses container version ${String(header.version)}, which this Gatehouse does not know; upgrade Gatehouse to restore it.`);
  }
  let key: Buffer | undefined;
  if (header.encrypted) {
    if (!options.secret) throw new BackupError('This backup is encrypted; give its passphrase with --passphrase-env VAR or its key file with --key-file FILE.');
    if (header.version === 2) {
      if (!header.kdf || header.cipher?.name !== 'aes-256-gcm-stream') throw new BackupError('This backup is damaged: its encryption parameters are missing.');
      try {
        key = await openEncryption(options.secret, header.kdf, header.cipher);
      } catch (error) {
        throw restoreFailure(error, dataDir);
      }
    } else if (!('passphrase' in options.secret)) {
      throw new BackupError('This backup was encrypted with a passphrase, not a key file.');
    }
  }

  let holder: number | undefined;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    // Hold the pid file while restoring, so a server cannot start on a half-restored directory.
    holder = claimPidFile(dataDir, 'held');
  } catch (error) {
    throw restoreFailure(error, dataDir);
  }
  if (holder !== undefined) throw refuse(holder);
  const staging = new Staging(dataDir);
  try {
    if (header.version === 2) await extract(options.file, line, header, key, staging);
    else await extractLegacy(options.file, header as BackupHeader & LegacyHeader, options.secret, staging);
    const db = staging.files.find((f) => f.path === DATABASE_ENTRY);
    if (!db) throw new BackupError('This backup is damaged: it holds no database.');
    checkDatabase(db.staged);
    return replace(dataDir, header, staging, options.now);
  } catch (error) {
    staging.discard();
    throw restoreFailure(error, dataDir);
  } finally {
    removePidFile(dataDir);
  }
}

/** Version 2: decrypt, gunzip and unpack into the staging files, checksums compared. */
async function extract(file: string, line: Buffer, header: BackupHeader, key: Buffer | undefined, staging: Staging): Promise<void> {
  const stages: NodeJS.ReadWriteStream[] = [];
  if (key) stages.push(new DecryptStream(key, header.cipher as CipherParams, headerDigest(line)));
  stages.push(createGunzip());
  const plain = new PassThrough({ highWaterMark: 64 * 1024 });
  const feeding = pipeAll([createReadStream(file, { start: line.length, highWaterMark: 64 * 1024 }), ...stages, plain]);
  // Reading stops at the first failure of either side; the other is then ended too.
  const reading = readArchive(plain as AsyncIterable<Buffer>, (path, mode) => staging.place(path, mode)).catch((error: unknown) => {
    plain.destroy();
    throw error;
  });
  const [fed, unpacked] = await Promise.allSettled([feeding, reading]);
  // The unpacking's own refusal (a foreign name, a checksum, something in the way) comes first:
  // the stream then only reports being stopped. Otherwise the stream's failure (a chunk that
  // fails its tag, gzip cut short) explains what the unpacking saw.
  const own = unpacked.status === 'rejected' && (unpacked.reason instanceof BackupError || unpacked.reason instanceof ArchiveError);
  if (own) throw unpacked.reason;
  if (fed.status === 'rejected') throw fed.reason;
  if (unpacked.status === 'rejected') throw unpacked.reason;
}

/** Version 1 (in memory, see backup-legacy.ts) into the same staging files. */
async function extractLegacy(file: string, header: LegacyHeader & { encrypted: boolean }, secret: Secret | undefined, staging: Staging): Promise<void> {
  let files: Awaited<ReturnType<typeof unpackLegacy>>;
  try {
    files = await unpackLegacy(file, header, secret && 'passphrase' in secret ? secret.passphrase : undefined);
  } catch (error) {
    if (!(error instanceof LegacyBackupError)) throw error;
    const reason = error.reason;
    if (reason === 'passphrase_needed') throw new BackupError('This backup is encrypted; give its passphrase with --passphrase-env VAR.');
    if (reason === 'wrong_or_damaged') throw new BackupError('The passphrase is wrong or the backup file is damaged.');
    if (reason === 'damaged_params') throw new BackupError('This backup is damaged: its encryption parameters are missing.');
    if (reason === 'no_database') throw new BackupError('This backup is damaged: it holds no database.');
    if (typeof reason === 'object') throw new BackupError(`This backup is damaged: it contains an unexpected file "${reason.unexpected}".`);
    throw new BackupError('This backup is damaged: its contents cannot be read.');
  }
  // The database first, as version 2 orders it.
  for (const [path, entry] of [...files].sort(([a], [b]) => (a === DATABASE_ENTRY ? -1 : b === DATABASE_ENTRY ? 1 : 0))) {
    const staged = staging.place(path, entry.mode);
    writeFileSync(staged, entry.data, { mode: entry.mode });
  }
}

/** Renames the staged files into place, the database last; each step is undone if a later one fails. */
function replace(dataDir: string, header: BackupHeader, staging: Staging, now: Date): RestoreResult {
  const target = join(dataDir, DATABASE_FILE);
  const others = staging.files.filter((f) => f.path !== DATABASE_ENTRY);
  const db = staging.files.find((f) => f.path === DATABASE_ENTRY)!;
  const undo: (() => void)[] = [];
  let previous: string | undefined;
  try {
    for (const file of others) {
      chmodSync(file.staged, file.mode);
      const old = existsSync(file.dest) ? { data: readFileSync(file.dest), mode: statSync(file.dest).mode & 0o777 } : undefined;
      renameSync(file.staged, file.dest);
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
    renameSync(db.staged, target);
    chmodSync(target, 0o600);
  } catch (error) {
    for (const step of undo.reverse()) {
      try {
        step();
      } catch {
        // keep undoing the rest
      }
    }
    throw error;
  }
  return { header, previous, files: [DATABASE_FILE, ...others.map((f) => f.path)] };
}
