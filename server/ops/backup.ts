/**
 * Backup files, written as a stream in constant memory whatever the size of the database.
 *
 * 1. SQLite's online backup API copies the live database, page by page, into a temporary file
 *    beside the backups. In the server the copy runs on the serving connection a few hundred
 *    pages per step, yielding to requests between steps; the server's own writes meanwhile
 *    reach the copy too (SQLite updates a backup made on the writing connection). From another
 *    process (`gatehouse backup`) it copies in one step: one consistent snapshot, which a
 *    server writing through its own connection would otherwise restart at every commit.
 * 2. The copy and the registered data-directory files (backup-files.ts) are streamed through the
 *    archive (backup-archive.ts: per-file SHA-256), gzip, and chunked authenticated encryption
 *    (backup-crypto.ts) into `<file>.tmp`, which is synced and renamed into place.
 *
 * File layout (container version 2, docs/decisions/0055-backup-and-restore.md):
 *   line 1  JSON header {format, version: 2, createdAt, schema, encrypted, compression: "gzip",
 *           contents: [paths], kdf?, cipher?}: listings read it without the secret;
 *   rest    gzip(archive), encrypted when `encrypted` (the header line is each chunk's AAD).
 *
 * A backup holds the signing keys and other secrets, so it is written only encrypted, unless the
 * caller says otherwise: `gatehouse backup --unencrypted`, or the pre-migration copy kept in the
 * data directory itself (main.ts; same trust as the live database). Unencrypted ones leave the
 * `encryptedOnly` files out.
 */
import {
  closeSync,
  createWriteStream,
  existsSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { createGzip } from 'node:zlib';
import Database from 'better-sqlite3';
import type { Config } from '../config.js';
import { schemaState } from './schema-version.js';
import { BACKUP_FILES, DATABASE_ENTRY } from './backup-files.js';
import { pipeAll, writeArchive, type ArchiveEntry } from './backup-archive.js';
import { EncryptStream, headerDigest, MIN_KEY_FILE_BYTES, newEncryption, type CipherParams, type Kdf, type Secret } from './backup-crypto.js';

export const FORMAT = 'gatehouse-backup';
export const BACKUP_EXT = '.gatehouse-backup';
export const BACKUPS_DIR = 'backups';
/** gzip level 1: a database compresses about as well at 1 as at 6, several times faster. */
const GZIP_LEVEL = 1;
/** Each step of the paced copy aims to take about this long. */
const STEP_TARGET_MS = 4;

/** A backup or restore that cannot proceed; the message is one sentence for the administrator. */
export class BackupError extends Error {
  override name = 'BackupError';
}

export interface BackupHeader {
  format: typeof FORMAT;
  version: 1 | 2;
  createdAt: string;
  encrypted: boolean;
  /** Newest migration applied in the backed-up database. */
  schema: string;
  compression?: 'gzip';
  /** Paths in the archive (version 2). */
  contents?: string[];
  kdf?: Kdf;
  cipher?: CipherParams | { name: 'aes-256-gcm'; iv: string; tag: string };
}

export interface BackupRecord {
  id: string;
  createdAt: string;
  size: number;
  encrypted: boolean;
}

/** The bytes of a key file (GATEHOUSE_BACKUP_KEY_FILE, `--key-file`), checked. */
export function readKeyFile(path: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    throw new BackupError(`Cannot read the key file ${path}.`);
  }
  if (bytes.length < MIN_KEY_FILE_BYTES) {
    throw new BackupError(`The key file ${path} holds ${bytes.length} bytes; it must hold at least ${MIN_KEY_FILE_BYTES} random bytes (e.g. openssl rand -out FILE 32).`);
  }
  return bytes;
}

/** The secret the configuration gives backups (a key file wins over a passphrase), if any. */
export function configuredSecret(config: Pick<Config, 'backupPassphrase' | 'backupKeyFile'>): Secret | undefined {
  if (config.backupKeyFile) return { keyFile: readKeyFile(config.backupKeyFile) };
  if (config.backupPassphrase) return { passphrase: config.backupPassphrase };
  return undefined;
}

/** How backups are protected under this configuration (status, admin API). */
export function encryptionSetting(config: Pick<Config, 'backupPassphrase' | 'backupKeyFile'>): 'key-file' | 'passphrase' | null {
  return config.backupKeyFile ? 'key-file' : config.backupPassphrase ? 'passphrase' : null;
}

export const ENCRYPTION_REQUIRED =
  'A backup holds the signing keys and other secrets; set GATEHOUSE_BACKUP_PASSPHRASE or GATEHOUSE_BACKUP_KEY_FILE to encrypt it.';

/** Copies a live database into `dest` with SQLite's online backup API. */
async function snapshotDatabase(sqlite: Database.Database, dest: string, paced: boolean): Promise<void> {
  if (!paced) {
    await sqlite.backup(dest, { progress: () => 0x7fffffff });
    return;
  }
  let pages = 64;
  let last = performance.now();
  await sqlite.backup(dest, {
    progress: () => {
      // The time since the last call bounds the step's own (it includes the pause for requests).
      const now = performance.now();
      const ms = now - last;
      last = now;
      if (ms > STEP_TARGET_MS) pages = Math.max(16, Math.floor(pages / 2));
      else if (ms < STEP_TARGET_MS / 2) pages = Math.min(4096, pages * 2);
      return pages;
    },
  });
}

export interface WriteBackupOptions {
  sqlite: Database.Database;
  dataDir: string;
  now: Date;
  /** The secret to encrypt with, or null for an unencrypted backup (the caller decided it may be). */
  secret: Secret | null;
  /** The backup file to write (replaced atomically). */
  dest: string;
  /** Copy in small steps on the serving connection (in the server), or in one snapshot (another process). */
  paced: boolean;
}

/** Writes one backup file; returns its header and size. */
export async function writeBackup(options: WriteBackupOptions): Promise<{ header: BackupHeader; size: number }> {
  const { dataDir, dest } = options;
  mkdirSync(join(dataDir, BACKUPS_DIR), { recursive: true, mode: 0o700 });
  // The copy goes beside the backups (same file system as the data, never a RAM-backed /tmp).
  const work = mkdtempSync(join(dataDir, BACKUPS_DIR, '.work-'));
  const temp = `${dest}.tmp`;
  try {
    const copy = join(work, DATABASE_ENTRY);
    await snapshotDatabase(options.sqlite, copy, options.paced);
    let schema: string;
    const check = new Database(copy);
    try {
      // A self-contained file: fold any WAL into it and switch it to rollback mode.
      check.pragma('journal_mode = DELETE');
      schema = schemaState(check).applied.at(-1) ?? 'none';
    } finally {
      check.close();
    }

    const encrypted = options.secret !== null;
    const entries: ArchiveEntry[] = [{ path: DATABASE_ENTRY, mode: 0o600, file: copy, size: statSync(copy).size }];
    for (const carried of BACKUP_FILES) {
      if (carried.encryptedOnly && !encrypted) continue;
      const file = join(dataDir, ...carried.path.split('/'));
      if (existsSync(file)) entries.push({ path: carried.path, mode: carried.mode, file, size: statSync(file).size });
    }

    const createdAt = options.now.toISOString();
    const header: BackupHeader = { format: FORMAT, version: 2, createdAt, encrypted, schema, compression: 'gzip', contents: entries.map((e) => e.path) };
    let encryption: Awaited<ReturnType<typeof newEncryption>> | undefined;
    if (options.secret) {
      encryption = await newEncryption(options.secret);
      header.kdf = encryption.kdf;
      header.cipher = encryption.cipher;
    }
    const headerLine = Buffer.from(`${JSON.stringify(header)}\n`);

    const out = createWriteStream(temp, { mode: 0o600 });
    out.write(headerLine);
    const stages: NodeJS.ReadWriteStream[] = [createGzip({ level: GZIP_LEVEL })];
    if (encryption) stages.push(new EncryptStream(encryption.key, encryption.cipher, headerDigest(headerLine)));
    await pipeAll([writeArchive(entries, { createdAt, schema }), ...stages, out]);
    const fd = openSync(temp, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, dest);
    return { header, size: statSync(dest).size };
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function stamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/** Writes a backup into `<data>/backups/` and returns its record. */
export async function backupIntoStore(options: Omit<WriteBackupOptions, 'dest'>): Promise<BackupRecord> {
  const id = `gatehouse-${stamp(options.now)}-${randomBytes(3).toString('hex')}`;
  const dest = join(options.dataDir, BACKUPS_DIR, `${id}${BACKUP_EXT}`);
  const { header, size } = await writeBackup({ ...options, dest });
  return { id, createdAt: header.createdAt, size, encrypted: header.encrypted };
}

export function parseHeader(line: string): BackupHeader | undefined {
  try {
    const header = JSON.parse(line) as BackupHeader;
    if (header?.format !== FORMAT || typeof header.createdAt !== 'string') return undefined;
    return header;
  } catch {
    return undefined;
  }
}

/** Reads a backup's header line and its length in bytes (undefined when it is not a backup). */
export function readHeaderLine(file: string): { header: BackupHeader; line: Buffer } | undefined {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(8192);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const end = buffer.subarray(0, read).indexOf(0x0a);
    if (end < 0) return undefined;
    const header = parseHeader(buffer.subarray(0, end).toString('utf8'));
    return header ? { header, line: Buffer.from(buffer.subarray(0, end + 1)) } : undefined;
  } finally {
    closeSync(fd);
  }
}

/** Reads only the header line of a backup file (for listings). */
export function readHeader(file: string): BackupHeader | undefined {
  return readHeaderLine(file)?.header;
}

/** Backups in `<data>/backups/`, newest first. */
export function listBackups(dataDir: string): BackupRecord[] {
  const dir = join(dataDir, BACKUPS_DIR);
  if (!existsSync(dir)) return [];
  const records: BackupRecord[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(BACKUP_EXT)) continue;
    const path = join(dir, name);
    const header = readHeader(path);
    if (!header) continue;
    records.push({ id: basename(name, BACKUP_EXT), createdAt: header.createdAt, size: statSync(path).size, encrypted: header.encrypted });
  }
  return records.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1));
}

/** Path of a stored backup by id, or undefined (ids are file stems; anything else is refused). */
export function backupPath(dataDir: string, id: string): string | undefined {
  if (!/^gatehouse-[0-9TZ]+-[0-9a-f]+$/.test(id)) return undefined;
  const path = join(dataDir, BACKUPS_DIR, `${id}${BACKUP_EXT}`);
  return existsSync(path) ? path : undefined;
}

/** Work files older than this in `<data>/backups/` were left by an interrupted backup. */
const LEFTOVER_AGE_MS = 24 * 3600 * 1000;

/** Deletes all but the newest `keep` backups, and work files an interrupted backup left behind. */
export function pruneBackups(dataDir: string, keep: number, now = new Date()): void {
  const dir = join(dataDir, BACKUPS_DIR);
  for (const old of listBackups(dataDir).slice(keep)) unlinkSync(join(dir, `${old.id}${BACKUP_EXT}`));
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    if (!name.startsWith('.work-') && !name.endsWith(`${BACKUP_EXT}.tmp`)) continue;
    const path = join(dir, name);
    // Not one being written right now (a `gatehouse backup` may run beside the server).
    if (now.getTime() - statSync(path).mtimeMs > LEFTOVER_AGE_MS) rmSync(path, { recursive: true, force: true });
  }
}

/** The directory a backup file is written into exists (for `--out`). */
export function checkOutputDirectory(file: string): void {
  if (!existsSync(dirname(file))) throw new BackupError(`Cannot write ${file}: its directory does not exist.`);
}
