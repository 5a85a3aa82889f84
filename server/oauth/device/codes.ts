/**
 * The two codes of a device authorization (RFC 8628 §3.2, §6.1):
 * - the device code: 256 random bits (`ghd_` + base64url), known to the store only by its
 *   SHA-256, presented by the device when it polls;
 * - the user code: 8 letters from BCDFGHJKLMNPQRSTVWXZ (20 consonants: no vowels, so no words,
 *   and nothing that looks like a digit), about 34.6 bits, shown as `XXXX-XXXX`, typed by a
 *   person on the /device page. Also stored hashed. Typing is forgiving: case, spaces and
 *   dashes do not matter.
 */
import { randomInt } from 'node:crypto';
import { randomToken } from '../../util/crypto.js';

export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

export const newDeviceCode = () => randomToken('ghd_');

/** A fresh user code in its canonical form (8 letters, no dash); `randomInt` draws without bias. */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** `BCDFGHJK` → `BCDF-GHJK`, as shown to people. */
export const displayUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

/**
 * What a person typed, in canonical form, or undefined when it cannot be a user code (wrong
 * letters or length). Only spaces and dashes are ignored, and letters upper-cased.
 */
export function normaliseUserCode(typed: string): string | undefined {
  const code = typed.replace(/[\s-]/g, '').toUpperCase();
  if (code.length !== USER_CODE_LENGTH) return undefined;
  for (const c of code) if (!USER_CODE_ALPHABET.includes(c)) return undefined;
  return code;
}
