/**
 * Recovery codes (spec second-factor.md): 10 codes of 12 characters from Crockford's base32
 * alphabet (60 random bits each, above the contract's 50), shown once as `xxxx-xxxx-xxxx`, stored
 * as HMAC-SHA256 under the second-factor key (secret-box.ts), each good once. Typing is forgiving:
 * case, dashes and spaces do not matter, and the look-alikes I, L and O read as 1, 1 and 0.
 */
import { randomBytes } from 'node:crypto';
import type { SecretBox } from './secret-box.js';

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const LENGTH = 12;

function oneCode(): string {
  const bytes = randomBytes(LENGTH);
  let code = '';
  // 256 is a multiple of 32, so `byte % 32` draws every character equally often.
  for (const byte of bytes) code += ALPHABET[byte % 32];
  return `${code.slice(0, 4)}-${code.slice(4, 8)}-${code.slice(8)}`;
}

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, oneCode);
}

/** The canonical form a code is hashed in, or undefined when it cannot be one. */
export function canonicalRecoveryCode(typed: string): string | undefined {
  const code = typed.toLowerCase().replace(/[\s-]/g, '').replace(/[il]/g, '1').replace(/o/g, '0');
  return code.length === LENGTH && [...code].every((c) => ALPHABET.includes(c)) ? code : undefined;
}

export function recoveryCodeHash(box: SecretBox, typed: string): string | undefined {
  const code = canonicalRecoveryCode(typed);
  return code === undefined ? undefined : box.keyedHash(`recovery:${code}`);
}
