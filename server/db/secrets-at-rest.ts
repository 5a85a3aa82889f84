/**
 * Secrets at rest in PostgreSQL mode (issue 26): the signing keys' private PEM, the second-factor
 * key and the webhook secrets are stored sealed under a key-encryption key (KEK) that every
 * instance is given, never in the database: `GATEHOUSE_KEY_SECRET`, or the file named by
 * `GATEHOUSE_KEY_SECRET_FILE`. A dump of the database (or a replica, a backup of it) then holds
 * nothing that signs a token or a webhook, or opens a TOTP secret. SQLite mode is unchanged: its
 * values stay as they are (the database file and `second-factor.key` sit in one data directory
 * the operator protects as a whole), and `seal`/`open` pass them through.
 *
 * Construction (node:crypto only):
 * - The KEK is derived from the secret with HKDF-SHA256, not scrypt: the secret must be a random
 *   key (at least 32 bytes: `openssl rand -base64 32`), not a password, so a slow hash would buy
 *   nothing against guessing and would cost every instance's start (and its memory) for it. A
 *   shorter secret is refused rather than stretched.
 * - Each value is AES-256-GCM with a random 96-bit IV, its place as associated data (`purpose`:
 *   which column of which row), so a sealed value copied to another row or column does not open.
 * - Format, versioned: `gks1.<key id>.<iv>.<tag>.<ciphertext>` (base64url). The key id (8 bytes
 *   derived from the KEK by HKDF under another label) tells a wrong KEK apart from a damaged
 *   value, and lets a later version accept an old KEK beside a new one.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { ConfigError } from '../config.js';
import { engineOf } from './store.js';

const VERSION = 'gks1';
/** Bytes a key secret must have at least: a random key, not a password. */
export const MIN_KEY_SECRET_BYTES = 32;

export const MISSING_KEY_SECRET =
  'PostgreSQL mode needs GATEHOUSE_KEY_SECRET (or GATEHOUSE_KEY_SECRET_FILE): at least 32 random bytes, the same on every instance, that encrypt the signing keys and secrets stored in the database (e.g. openssl rand -base64 32).';

/** A value that does not open under this KEK: sealed under another one, or damaged. */
export class SealedSecretError extends Error {
  override name = 'SealedSecretError';
}

export interface Sealer {
  seal(plaintext: string, purpose: string): string;
  open(sealed: string, purpose: string): string;
}

/** The key secret from the environment (the file wins when both are set), or undefined. */
export function keySecretFromEnv(env: Record<string, string | undefined>): Buffer | undefined {
  const file = env.GATEHOUSE_KEY_SECRET_FILE;
  let secret: Buffer | undefined;
  if (file) {
    if (!existsSync(file)) throw new ConfigError(`GATEHOUSE_KEY_SECRET_FILE names ${file}, which does not exist.`);
    secret = Buffer.from(readFileSync(file, 'utf8').trim(), 'utf8');
  } else if (env.GATEHOUSE_KEY_SECRET) {
    secret = Buffer.from(env.GATEHOUSE_KEY_SECRET.trim(), 'utf8');
  }
  if (secret && secret.length < MIN_KEY_SECRET_BYTES) {
    throw new ConfigError(`${file ? 'GATEHOUSE_KEY_SECRET_FILE' : 'GATEHOUSE_KEY_SECRET'} holds fewer than ${MIN_KEY_SECRET_BYTES} bytes; use a random key (e.g. openssl rand -base64 32).`);
  }
  return secret;
}

/** The sealer of a key secret. */
export function makeSealer(secret: Buffer): Sealer {
  const key = Buffer.from(hkdfSync('sha256', secret, 'gatehouse', 'gatehouse secrets at rest v1 encryption', 32));
  const keyId = Buffer.from(hkdfSync('sha256', secret, 'gatehouse', 'gatehouse secrets at rest v1 key id', 8)).toString('base64url');
  return {
    seal(plaintext, purpose) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(purpose, 'utf8'));
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, keyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
    },
    open(sealed, purpose) {
      const [version, id, iv, tag, data] = sealed.split('.');
      if (version !== VERSION || !id || !iv || !tag || data === undefined) {
        throw new SealedSecretError(`The ${purpose} in the database is not sealed (or not in a format this version knows).`);
      }
      if (id !== keyId) {
        throw new SealedSecretError(`The ${purpose} in the database was sealed under another GATEHOUSE_KEY_SECRET than this instance's; every instance needs the same one.`);
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(purpose, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SealedSecretError(`The ${purpose} in the database does not open: it was altered, or moved from another row.`);
      }
    },
  };
}

const sealers = new WeakMap<object, Sealer>();

/**
 * Gives a PostgreSQL database its sealer (buildApp, from the configuration); refuses without a
 * key secret. A no-op on SQLite.
 */
export function useKeySecret(db: object, env: Record<string, string | undefined>): void {
  if (engineOf(db) !== 'postgres' || sealers.has(db)) return;
  const secret = keySecretFromEnv(env);
  if (!secret) throw new ConfigError(MISSING_KEY_SECRET);
  sealers.set(db, makeSealer(secret));
}

function sealerOf(db: object): Sealer | undefined {
  const sealer = sealers.get(db);
  if (!sealer && engineOf(db) === 'postgres') throw new ConfigError(MISSING_KEY_SECRET);
  return sealer;
}

/** `plaintext` as it is stored in `db`: sealed on PostgreSQL, as is on SQLite. */
export function sealAtRest(db: object, plaintext: string, purpose: string): string {
  return sealerOf(db)?.seal(plaintext, purpose) ?? plaintext;
}

/** The plaintext of a value read from `db` (see `sealAtRest`). */
export function openAtRest(db: object, stored: string, purpose: string): string {
  const sealer = sealerOf(db);
  return sealer ? sealer.open(stored, purpose) : stored;
}

/** Nullable columns: null stays null. */
export const sealNullable = (db: object, value: string | null, purpose: string): string | null => (value === null ? null : sealAtRest(db, value, purpose));
export const openNullable = (db: object, value: string | null, purpose: string): string | null => (value === null ? null : openAtRest(db, value, purpose));
