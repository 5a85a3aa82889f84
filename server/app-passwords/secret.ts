/**
 * The app password itself: 30 characters of lower-case base32 (150 random bits, above the 128 the
 * contract asks for) in six groups of five, `k3vq7-mf2xa-…`, so it can be typed on a TV remote or a
 * NAS's web form. Letters and digits 2–7 only: nothing to confuse (no 0/o, 1/l). What is typed is
 * normalised before hashing (case, dashes and spaces do not matter), and stored as its SHA-256:
 * a secret this random needs no slow hash (docs/decisions, "App passwords").
 */
import { randomBytes } from 'node:crypto';
import { sha256 } from '../util/crypto.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const GROUPS = 6;
const GROUP_LENGTH = 5;
/** Longer input is not an app password; it is not even hashed whole (a bind may carry a megabyte). */
export const APP_PASSWORD_MAX_INPUT = 200;

/** A new app password, as shown once. */
export function newAppPassword(): string {
  // 256 is a multiple of 32: each byte's low five bits are uniform.
  const bytes = randomBytes(GROUPS * GROUP_LENGTH);
  const chars = Array.from(bytes, (b) => ALPHABET[b & 31]!);
  const groups: string[] = [];
  for (let i = 0; i < GROUPS; i++) groups.push(chars.slice(i * GROUP_LENGTH, (i + 1) * GROUP_LENGTH).join(''));
  return groups.join('-');
}

/** What is stored and looked up: the SHA-256 of the password as typed, normalised. */
export function appPasswordHash(presented: string): string {
  const normalised = presented.slice(0, APP_PASSWORD_MAX_INPUT).toLowerCase().replace(/[\s-]+/g, '');
  return sha256(`app-password:${normalised}`);
}
