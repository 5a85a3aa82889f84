/** Secret handling shared by every feature: random tokens, SHA-256 storage, constant-time checks. */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random secret of 256 bits, base64url, optionally with a readable prefix (`gh_…`). */
export function randomToken(prefix = ''): string {
  return prefix + randomBytes(32).toString('base64url');
}

/** SHA-256 hex digest: how every secret is stored. */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time comparison of two strings (lengths are compared via their hashes). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** Constant-time check of a presented secret against its stored SHA-256 hex hash. */
export function matchesHash(presented: string, storedHash: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
