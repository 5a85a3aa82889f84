/**
 * The second-factor key (spec second-factor.md, "Factors"): TOTP secrets are encrypted at rest and
 * recovery codes hashed with a key that lives in a file of the data directory,
 * `<data>/second-factor.key` (0600), not in the database — a copy of `gatehouse.db` alone reveals
 * no TOTP secret and cannot be used to try recovery codes offline. Created on first use. Backups
 * must carry it (ops/backup.ts): without it, enrolled TOTP authenticators cannot be read back.
 *
 * Encryption is AES-256-GCM with a random 96-bit IV per value; stored as `v1.<iv>.<tag>.<data>`
 * (base64url). Recovery codes are HMAC-SHA256 under a sub-key derived with HKDF, so the two uses
 * never share a key.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../config.js';

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

/**
 * The box of the configured data directory, read once per process. A database in memory (tests,
 * `buildApp` without a data directory) gets a key that lives as long as the process.
 */
export function secretBox(config: Pick<Config, 'dataDir'>): SecretBox {
  let box = boxes.get(config.dataDir);
  if (!box) {
    box = makeBox(config.dataDir === ':memory:' ? randomBytes(32) : loadOrCreateKey(config.dataDir));
    boxes.set(config.dataDir, box);
  }
  return box;
}
