/**
 * Backup files: one self-describing file holding a consistent copy of the database (signing keys
 * included) and the `<data>/tls/` material.
 *
 * Container (documented in docs/decisions.md):
 *   line 1   JSON header `{format:"gatehouse-backup", version:1, createdAt, encrypted, schema, kdf?, cipher?}`
 *   rest     payload = gzip(JSON `{createdAt, schema, files:[{path, mode, data(base64)}]}`),
 *            encrypted with AES-256-GCM under a scrypt-derived key when a passphrase is given.
 * The header lets `list` and the admin API describe a backup without the passphrase; restore trusts
 * only the authenticated payload.
 *
 * The database copy uses SQLite's online backup API through better-sqlite3, asked to copy every
 * page in one step: that step reads one snapshot, so writers in other processes (WAL mode) neither
 * block on it nor restart it, and the copy contains every transaction committed before it began.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  renameSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { schemaState } from './schema-version.js';
import { TLS_DIR } from './tls.js';

export const FORMAT = 'gatehouse-backup';
export const BACKUP_EXT = '.gatehouse-backup';
export const BACKUPS_DIR = 'backups';
const TLS_FILES = ['ca.pem', 'ca-key.pem', 'server.pem', 'server-key.pem'];
// scrypt N=2^15, r=8, p=1: the interactive-login cost OWASP lists; needs 32 MiB, so maxmem is raised.
const SCRYPT = { N: 1 << 15, r: 8, p: 1 };
const SCRYPT_MAXMEM = 64 * 1024 * 1024;

/** A backup or restore that cannot proceed; the message is one sentence for the administrator. */
export class BackupError extends Error {
  override name = 'BackupError';
}

export interface BackupHeader {
  format: typeof FORMAT;
  version: 1;
  createdAt: string;
  encrypted: boolean;
  /** Newest migration applied in the backed-up database. */
  schema: string;
  kdf?: { name: 'scrypt'; salt: string; N: number; r: number; p: number };
  cipher?: { name: 'aes-256-gcm'; iv: string; tag: string };
}

interface Payload {
  createdAt: string;
  schema: string;
  files: { path: string; mode: number; data: string }[];
}

export interface BackupRecord {
  id: string;
  createdAt: string;
  size: number;
  encrypted: boolean;
}

function deriveKey(passphrase: string, kdf: NonNullable<BackupHeader['kdf']>): Buffer {
  return scryptSync(passphrase, Buffer.from(kdf.salt, 'base64'), 32, { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: SCRYPT_MAXMEM });
}

/** Copies a live database into `dest` in one backup step (a single consistent snapshot). */
export async function snapshotDatabase(sqlite: Database.Database, dest: string): Promise<void> {
  await sqlite.backup(dest, { progress: () => 0x7fffffff });
}

/** Takes a backup of `sqlite` plus `<dataDir>/tls/` and returns the file's bytes. */
export async function createBackup(options: {
  sqlite: Database.Database;
  dataDir: string;
  now: Date;
  passphrase?: string;
}): Promise<Buffer> {
  const work = mkdtempSync(join(tmpdir(), 'gatehouse-backup-'));
  try {
    const copy = join(work, 'gatehouse.db');
    await snapshotDatabase(options.sqlite, copy);
    const check = new Database(copy);
    let schema: string;
    try {
      // A self-contained file: fold any WAL into the main file and switch the copy to rollback mode.
      check.pragma('journal_mode = DELETE');
      schema = schemaState(check).applied.at(-1) ?? 'none';
    } finally {
      check.close();
    }
    const files: Payload['files'] = [{ path: 'gatehouse.db', mode: 0o600, data: readFileSync(copy).toString('base64') }];
    for (const name of TLS_FILES) {
      const path = join(options.dataDir, TLS_DIR, name);
      if (existsSync(path)) {
        files.push({ path: `${TLS_DIR}/${name}`, mode: name.endsWith('key.pem') ? 0o600 : 0o644, data: readFileSync(path).toString('base64') });
      }
    }
    const createdAt = options.now.toISOString();
    let body = gzipSync(JSON.stringify({ createdAt, schema, files } satisfies Payload));
    const header: BackupHeader = { format: FORMAT, version: 1, createdAt, encrypted: Boolean(options.passphrase), schema };
    if (options.passphrase) {
      header.kdf = { name: 'scrypt', salt: randomBytes(16).toString('base64'), ...SCRYPT };
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', deriveKey(options.passphrase, header.kdf), iv);
      body = Buffer.concat([cipher.update(body), cipher.final()]);
      header.cipher = { name: 'aes-256-gcm', iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
    }
    return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), body]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function parseHeader(line: string): BackupHeader | undefined {
  try {
    const header = JSON.parse(line) as BackupHeader;
    if (header?.format !== FORMAT || typeof header.createdAt !== 'string') return undefined;
    return header;
  } catch {
    return undefined;
  }
}

/** Reads only the header line of a backup file (for listings). */
export function readHeader(file: string): BackupHeader | undefined {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const end = buffer.subarray(0, read).indexOf(0x0a);
    return end < 0 ? undefined : parseHeader(buffer.subarray(0, end).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}

/** Decodes a backup file's bytes into its files; throws `BackupError` with a clear sentence. */
export function unpackBackup(bytes: Buffer, passphrase: string | undefined): { header: BackupHeader; files: Map<string, { mode: number; data: Buffer }> } {
  const end = bytes.subarray(0, 4096).indexOf(0x0a);
  const header = end < 0 ? undefined : parseHeader(bytes.subarray(0, end).toString('utf8'));
  if (!header) throw new BackupError('This file is not a Gatehouse backup.');
  if (header.version !== 1) throw new BackupError(`This backup uses container version ${String(header.version)}, which this Gatehouse does not know; upgrade Gatehouse to restore it.`);
  let body = bytes.subarray(end + 1);
  if (header.encrypted) {
    if (!passphrase) throw new BackupError('This backup is encrypted; give its passphrase with --passphrase-env VAR.');
    if (!header.kdf || !header.cipher) throw new BackupError('This backup is damaged: its encryption parameters are missing.');
    try {
      const decipher = createDecipheriv('aes-256-gcm', deriveKey(passphrase, header.kdf), Buffer.from(header.cipher.iv, 'base64'));
      decipher.setAuthTag(Buffer.from(header.cipher.tag, 'base64'));
      body = Buffer.concat([decipher.update(body), decipher.final()]);
    } catch {
      throw new BackupError('The passphrase is wrong or the backup file is damaged.');
    }
  }
  let payload: Payload;
  try {
    payload = JSON.parse(gunzipSync(body).toString('utf8')) as Payload;
    if (!Array.isArray(payload.files)) throw new Error('no files');
  } catch {
    throw new BackupError('This backup is damaged: its contents cannot be read.');
  }
  const files = new Map<string, { mode: number; data: Buffer }>();
  for (const f of payload.files) {
    // Only the names this code writes; never a path that could escape the data directory.
    if (f.path !== 'gatehouse.db' && !TLS_FILES.some((n) => f.path === `${TLS_DIR}/${n}`)) {
      throw new BackupError(`This backup is damaged: it contains an unexpected file "${String(f.path)}".`);
    }
    files.set(f.path, { mode: f.mode === 0o644 ? 0o644 : 0o600, data: Buffer.from(f.data, 'base64') });
  }
  if (!files.has('gatehouse.db')) throw new BackupError('This backup is damaged: it holds no database.');
  return { header, files };
}

function stamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/** Writes a backup into `<data>/backups/` and returns its record. */
export function storeBackup(dataDir: string, bytes: Buffer, now: Date): BackupRecord {
  const dir = join(dataDir, BACKUPS_DIR);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const id = `gatehouse-${stamp(now)}-${randomBytes(3).toString('hex')}`;
  const path = join(dir, `${id}${BACKUP_EXT}`);
  writeFileSync(`${path}.tmp`, bytes, { mode: 0o600 });
  chmodSync(`${path}.tmp`, 0o600);
  renameSync(`${path}.tmp`, path);
  const header = readHeader(path)!;
  return { id, createdAt: header.createdAt, size: bytes.length, encrypted: header.encrypted };
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

/** Deletes all but the newest `keep` backups. */
export function pruneBackups(dataDir: string, keep: number): void {
  for (const old of listBackups(dataDir).slice(keep)) unlinkSync(join(dataDir, BACKUPS_DIR, `${old.id}${BACKUP_EXT}`));
}
