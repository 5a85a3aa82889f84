/**
 * Encryption of backup files, in chunks, so a backup of any size is encrypted and decrypted in
 * constant memory and every chunk is authenticated before any of its bytes is used.
 *
 * Construction: the STREAM scheme of Hoang, Reyhanitabar, Rogaway and Vizár ("Online
 * authenticated-encryption and its nonce-reuse misuse-resistance", 2015), as used by Tink and
 * age, over AES-256-GCM from node:crypto. The plaintext is cut into CHUNK_SIZE pieces; piece i
 * is sealed with nonce = prefix (7 random bytes) ‖ i (4 bytes, big-endian) ‖ last (1 byte, 1 on
 * the final piece only) and the SHA-256 of the file's header line as associated data. Reordered,
 * dropped, repeated or altered pieces fail their tag; a file cut at a piece boundary fails too,
 * because its new last piece was not sealed as the last; an edited header fails every piece.
 *
 * Keys: a passphrase goes through scrypt (N = 2^15, r = 8, p = 1: OWASP's interactive cost,
 * 32 MiB, run on libuv's pool); a key file (GATEHOUSE_BACKUP_KEY_FILE, ≥ 32 random bytes)
 * through HKDF-SHA256. Both with a random salt. From that master key HKDF derives the
 * encryption key and a 16-byte key check kept in the header, so a wrong passphrase is told
 * apart from a damaged file (it offers an attacker nothing the first tag would not).
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { promisify } from 'node:util';

const scrypt = promisify(scryptCallback) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;

export const CHUNK_SIZE = 64 * 1024;
const TAG = 16;
const PREFIX = 7;
const SCRYPT = { N: 1 << 15, r: 8, p: 1 };
const SCRYPT_MAXMEM = 64 * 1024 * 1024;
/** Key files shorter than this are refused: they must hold a random key, not a password. */
export const MIN_KEY_FILE_BYTES = 32;

export type Kdf = { name: 'scrypt'; salt: string; N: number; r: number; p: number } | { name: 'hkdf-sha256'; salt: string };

export interface CipherParams {
  name: 'aes-256-gcm-stream';
  chunkSize: number;
  noncePrefix: string;
  keyCheck: string;
}

/** What encrypts a backup: a passphrase or the bytes of a key file. */
export type Secret = { passphrase: string } | { keyFile: Buffer };

export class WrongKeyError extends Error {
  override name = 'WrongKeyError';
}

export class DamagedError extends Error {
  override name = 'DamagedError';
}

async function masterKey(secret: Secret, kdf: Kdf): Promise<Buffer> {
  const salt = Buffer.from(kdf.salt, 'base64');
  if ('passphrase' in secret) {
    if (kdf.name !== 'scrypt') throw new WrongKeyError('This backup was encrypted with a key file, not a passphrase.');
    return scrypt(secret.passphrase, salt, 32, { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: SCRYPT_MAXMEM });
  }
  if (kdf.name !== 'hkdf-sha256') throw new WrongKeyError('This backup was encrypted with a passphrase, not a key file.');
  return Buffer.from(hkdfSync('sha256', secret.keyFile, salt, 'gatehouse-backup key file', 32));
}

function subkeys(master: Buffer): { key: Buffer; check: Buffer } {
  return {
    key: Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'gatehouse-backup v2 encryption', 32)),
    check: Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'gatehouse-backup v2 key check', 16)),
  };
}

/** Fresh parameters and the key for a new backup. */
export async function newEncryption(secret: Secret): Promise<{ kdf: Kdf; cipher: CipherParams; key: Buffer }> {
  const salt = randomBytes(16).toString('base64');
  const kdf: Kdf = 'passphrase' in secret ? { name: 'scrypt', salt, ...SCRYPT } : { name: 'hkdf-sha256', salt };
  const { key, check } = subkeys(await masterKey(secret, kdf));
  const cipher: CipherParams = { name: 'aes-256-gcm-stream', chunkSize: CHUNK_SIZE, noncePrefix: randomBytes(PREFIX).toString('base64'), keyCheck: check.toString('base64') };
  return { kdf, cipher, key };
}

/** The key of an existing backup; `WrongKeyError` when the secret does not match its key check. */
export async function openEncryption(secret: Secret, kdf: Kdf, cipher: CipherParams): Promise<Buffer> {
  const { key, check } = subkeys(await masterKey(secret, kdf));
  const expected = Buffer.from(cipher.keyCheck, 'base64');
  if (expected.length !== check.length || !timingSafeEqual(expected, check)) {
    throw new WrongKeyError('passphrase' in secret ? 'The passphrase is wrong.' : 'The key file does not match this backup.');
  }
  return key;
}

function nonce(prefix: Buffer, index: number, last: boolean): Buffer {
  const n = Buffer.alloc(12);
  prefix.copy(n, 0);
  n.writeUInt32BE(index, PREFIX);
  n[11] = last ? 1 : 0;
  return n;
}

/** Bytes held until enough arrive for a chunk (a list, joined once per chunk). */
class Pending {
  private parts: Buffer[] = [];
  length = 0;

  push(part: Buffer): void {
    this.parts.push(part);
    this.length += part.length;
  }

  take(n: number): Buffer {
    const all = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.length);
    this.parts = all.length > n ? [all.subarray(n)] : [];
    this.length = all.length - n;
    return all.subarray(0, n);
  }

  rest(): Buffer {
    return this.take(this.length);
  }
}

/** The SHA-256 of the header line: every chunk's associated data. */
export function headerDigest(headerLine: Buffer): Buffer {
  return createHash('sha256').update(headerLine).digest();
}

abstract class ChunkStream extends Transform {
  protected readonly pending = new Pending();
  protected index = 0;
  protected readonly prefix: Buffer;

  constructor(
    protected readonly key: Buffer,
    cipher: CipherParams,
    protected readonly aad: Buffer,
    /** Chunk size on the input side. */
    protected readonly inputChunk: number,
  ) {
    super();
    this.prefix = Buffer.from(cipher.noncePrefix, 'base64');
  }

  protected abstract seal(chunk: Buffer, last: boolean): Buffer;

  override _transform(data: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    try {
      this.pending.push(data);
      // Strictly more than a chunk: the last chunk is only known at the end.
      while (this.pending.length > this.inputChunk) this.push(this.seal(this.pending.take(this.inputChunk), false));
      done();
    } catch (error) {
      done(error as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      this.push(this.seal(this.pending.rest(), true));
      done();
    } catch (error) {
      done(error as Error);
    }
  }
}

/** Plaintext in, sealed chunks out. */
export class EncryptStream extends ChunkStream {
  constructor(key: Buffer, cipher: CipherParams, aad: Buffer) {
    super(key, cipher, aad, cipher.chunkSize);
  }

  protected seal(chunk: Buffer, last: boolean): Buffer {
    const c = createCipheriv('aes-256-gcm', this.key, nonce(this.prefix, this.index++, last));
    c.setAAD(this.aad);
    return Buffer.concat([c.update(chunk), c.final(), c.getAuthTag()]);
  }
}

/** Sealed chunks in, plaintext out; `DamagedError` on the first chunk that fails its tag. */
export class DecryptStream extends ChunkStream {
  constructor(key: Buffer, cipher: CipherParams, aad: Buffer) {
    super(key, cipher, aad, cipher.chunkSize + TAG);
  }

  protected seal(chunk: Buffer, last: boolean): Buffer {
    if (chunk.length < TAG) throw new DamagedError('it ends early');
    const d = createDecipheriv('aes-256-gcm', this.key, nonce(this.prefix, this.index++, last));
    d.setAAD(this.aad);
    d.setAuthTag(chunk.subarray(chunk.length - TAG));
    try {
      return Buffer.concat([d.update(chunk.subarray(0, chunk.length - TAG)), d.final()]);
    } catch {
      throw new DamagedError(last ? 'it is cut short or altered' : 'part of it has been altered');
    }
  }
}
