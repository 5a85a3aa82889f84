/**
 * Reading backups of container version 1 (Gatehouse before issue 21): a JSON header line, then
 * gzip(JSON {files: [{path, mode, data (base64)}]}), optionally AES-256-GCM in one piece under a
 * scrypt key. They were built in memory and so are small (a large one could not be written); they
 * are read the same way, only to be restored. New backups are version 2 (backup.ts).
 */
import { createDecipheriv, scrypt as scryptCallback } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { BACKUP_FILES, DATABASE_ENTRY } from './backup-files.js';

const scrypt = promisify(scryptCallback) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;

export interface LegacyHeader {
  version: 1;
  kdf?: { name: 'scrypt'; salt: string; N: number; r: number; p: number };
  cipher?: { name: 'aes-256-gcm'; iv: string; tag: string };
}

export type LegacyFailure = 'passphrase_needed' | 'wrong_or_damaged' | 'unreadable' | 'damaged_params' | { unexpected: string } | 'no_database';

export class LegacyBackupError extends Error {
  constructor(readonly reason: LegacyFailure) {
    super(typeof reason === 'string' ? reason : `unexpected file ${reason.unexpected}`);
  }
}

/** The files of a version-1 backup, decrypted and checked; throws `LegacyBackupError`. */
export async function unpackLegacy(file: string, header: LegacyHeader & { encrypted: boolean }, passphrase: string | undefined): Promise<Map<string, { mode: number; data: Buffer }>> {
  const bytes = readFileSync(file);
  let body = bytes.subarray(bytes.indexOf(0x0a) + 1);
  if (header.encrypted) {
    if (!passphrase) throw new LegacyBackupError('passphrase_needed');
    if (!header.kdf || !header.cipher) throw new LegacyBackupError('damaged_params');
    try {
      const { kdf, cipher } = header;
      const key = await scrypt(passphrase, Buffer.from(kdf.salt, 'base64'), 32, { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: 64 * 1024 * 1024 });
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(cipher.iv, 'base64'));
      decipher.setAuthTag(Buffer.from(cipher.tag, 'base64'));
      body = Buffer.concat([decipher.update(body), decipher.final()]);
    } catch {
      throw new LegacyBackupError('wrong_or_damaged');
    }
  }
  let payload: { files: { path: string; mode: number; data: string }[] };
  try {
    payload = JSON.parse(gunzipSync(body).toString('utf8')) as typeof payload;
    if (!Array.isArray(payload.files)) throw new Error('no files');
  } catch {
    throw new LegacyBackupError('unreadable');
  }
  const files = new Map<string, { mode: number; data: Buffer }>();
  for (const f of payload.files) {
    if (f.path !== DATABASE_ENTRY && !BACKUP_FILES.some((known) => known.path === f.path)) throw new LegacyBackupError({ unexpected: String(f.path) });
    files.set(f.path, { mode: f.mode === 0o644 ? 0o644 : 0o600, data: Buffer.from(f.data, 'base64') });
  }
  if (!files.has(DATABASE_ENTRY)) throw new LegacyBackupError('no_database');
  return files;
}
