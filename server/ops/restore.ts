/**
 * Restores a backup file into a data directory whose server is stopped. The database is checked
 * (`PRAGMA integrity_check`, schema not newer than this build) in a temporary file before anything
 * in the data directory changes; the database it replaces is kept beside it.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { BackupError, unpackBackup, type BackupHeader } from './backup.js';
import { runningServerPid } from './pid-file.js';
import { schemaState } from './schema-version.js';

export const DATABASE_FILE = 'gatehouse.db';

export interface RestoreResult {
  header: BackupHeader;
  /** Where the replaced database was moved, when there was one. */
  previous?: string;
  files: string[];
}

export function restoreBackup(options: { file: string; dataDir: string; passphrase?: string; now: Date }): RestoreResult {
  const { dataDir } = options;
  const pid = runningServerPid(dataDir);
  if (pid !== undefined) {
    throw new BackupError(`A Gatehouse server (pid ${pid}) is using ${dataDir}; stop it before restoring.`);
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(options.file);
  } catch {
    throw new BackupError(`Cannot read the backup file ${options.file}.`);
  }
  const { header, files } = unpackBackup(bytes, options.passphrase);

  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const target = join(dataDir, DATABASE_FILE);
  const staged = `${target}.restoring`;
  rmSync(staged, { force: true });
  writeFileSync(staged, files.get(DATABASE_FILE)!.data, { mode: 0o600 });
  try {
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
  } catch (error) {
    rmSync(staged, { force: true });
    throw error;
  }

  let previous: string | undefined;
  if (existsSync(target)) {
    // Fold the old WAL into the old file first so the kept copy is complete on its own.
    const old = new Database(target);
    old.pragma('wal_checkpoint(TRUNCATE)');
    old.close();
    previous = `${target}.before-restore-${options.now.toISOString().replace(/[-:.]/g, '')}`;
    renameSync(target, previous);
  }
  for (const suffix of ['-wal', '-shm']) rmSync(`${target}${suffix}`, { force: true });
  renameSync(staged, target);
  chmodSync(target, 0o600);
  const written = [DATABASE_FILE];
  for (const [path, file] of files) {
    if (path === DATABASE_FILE) continue;
    const dest = join(dataDir, path);
    mkdirSync(join(dest, '..'), { recursive: true, mode: 0o700 });
    writeFileSync(dest, file.data, { mode: file.mode });
    chmodSync(dest, file.mode);
    written.push(path);
  }
  return { header, previous, files: written };
}
