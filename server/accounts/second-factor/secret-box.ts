/**
 * The second-factor key (spec second-factor.md, "Factors"): TOTP secrets are encrypted at rest and
 * recovery codes hashed with a key that lives in a file of the data directory,
 * `<data>/second-factor.key` (0600), not in the database — a copy of `gatehouse.db` alone reveals
 * no TOTP secret and cannot be used to try recovery codes offline. Created on first use. Backups
 * must carry it (ops/backup.ts): without it, enrolled TOTP authenticators cannot be read back.
 *
 * PostgreSQL mode (issue 26): instances share no directory, so the key lives in the database, in
 * the `meta` row `second_factor_key`, sealed under GATEHOUSE_KEY_SECRET (db/secrets-at-rest.ts):
 * a dump of the database alone still opens no TOTP secret. The first instance to start creates it
 * (`INSERT … ON CONFLICT DO NOTHING`, then every instance reads the one row that won), and
 * `loadSharedKey` opens it before the app serves, so `secretBox` stays synchronous.
 *
 * Encryption is AES-256-GCM with a random 96-bit IV per value; stored as `v1.<iv>.<tag>.<data>`
 * (base64url). Recovery codes are HMAC-SHA256 under a sub-key derived with HKDF, so the two uses
 * never share a key.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { meta } from '../../db/schema.js';
import { engineOf, exec, one } from '../../db/store.js';
import { openAtRest, sealAtRest } from '../../db/secrets-at-rest.js';

export const SECOND_FACTOR_KEY_FILE = 'second-factor.key';

export interface SecretBox {
  encrypt(plaintext: string): string;
  /** The plaintext, or throws when the value was not sealed with this key. */
  decrypt(sealed: string): string;
  /** HMAC-SHA256 hex of `value` under the hashing sub-key. */
  keyedHash(value: string): string;
}

function makeBox(key: Buffer): SecretBox {
  const encKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'gatehouse second-factor encryption', 32));
  const macKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'gatehouse second-factor hashing', 32));
  return {
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', encKey, iv);
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
    },
    decrypt(sealed) {
      const [version, iv, tag, data] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('not a sealed second-factor secret');
      const decipher = createDecipheriv('aes-256-gcm', encKey, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    },
    keyedHash(value) {
      return createHmac('sha256', macKey).update(value).digest('hex');
    },
  };
}

/** Reads the key file, creating it (32 random bytes, base64, mode 0600) when missing. */
export function loadOrCreateKey(dataDir: string): Buffer {
  const file = join(dataDir, SECOND_FACTOR_KEY_FILE);
  if (!existsSync(file)) {
    try {
      // `wx`: of two processes creating it at once, one wins and the other reads the winner's.
      writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte key`);
  return key;
}

const boxes = new Map<string, SecretBox>();
/** PostgreSQL mode: the box of each database, opened by `loadSharedKey`. */
const sharedBoxes = new WeakMap<object, SecretBox>();

/** The `meta` row that holds the sealed key in PostgreSQL mode. */
export const SHARED_KEY_ROW = 'second_factor_key';
const PURPOSE = 'second-factor key';

/**
 * PostgreSQL mode: creates the shared key if no instance has yet (race-free: of instances
 * starting together one insert wins, and all read the winner's), and opens it under the key
 * secret. Fails at start, with the sealer's message, when the key secret is not the one it was
 * sealed under. A no-op on SQLite.
 */
export async function loadSharedKey(db: Db, now: Date): Promise<void> {
  if (engineOf(db) !== 'postgres' || sharedBoxes.has(db)) return;
  const fresh = sealAtRest(db, randomBytes(32).toString('base64'), PURPOSE);
  await exec(db.insert(meta).values({ key: SHARED_KEY_ROW, value: fresh, updatedAt: now }).onConflictDoNothing());
  const row = await one(db.select({ value: meta.value }).from(meta).where(eq(meta.key, SHARED_KEY_ROW)));
  const key = Buffer.from(openAtRest(db, row!.value, PURPOSE), 'base64');
  if (key.length !== 32) throw new Error(`the ${PURPOSE} in the database is not a 32-byte key`);
  sharedBoxes.set(db, makeBox(key));
}

/**
 * The box of the app's store: in PostgreSQL mode the database's (`loadSharedKey`), otherwise the
 * configured data directory's, read once per process. A database in memory (tests, `buildApp`
 * without a data directory) gets a key that lives as long as the process.
 */
export function secretBox(ctx: { config: Pick<Config, 'dataDir'>; db: object }): SecretBox {
  if (engineOf(ctx.db) === 'postgres') {
    const shared = sharedBoxes.get(ctx.db);
    if (!shared) throw new Error('the second-factor key was not loaded (buildApp loads it in PostgreSQL mode)');
    return shared;
  }
  const config = ctx.config;
  let box = boxes.get(config.dataDir);
  if (!box) {
    box = makeBox(config.dataDir === ':memory:' ? randomBytes(32) : loadOrCreateKey(config.dataDir));
    boxes.set(config.dataDir, box);
  }
  return box;
}
