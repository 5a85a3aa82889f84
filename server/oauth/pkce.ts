/**
 * PKCE (RFC 7636) with `S256` only (DESIGN §4.10). A challenge is the base64url SHA-256 of the
 * verifier: exactly 43 characters. Verifiers are 43–128 unreserved characters (§4.1).
 */
import { hash } from 'node:crypto';
import { safeEqual } from '../util/crypto.js';

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export const isValidChallenge = (challenge: string) => CHALLENGE.test(challenge);

/** Whether `verifier` proves `challenge` under S256 (constant-time comparison). */
export function verifiesChallenge(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier)) return false;
  return safeEqual(hash('sha256', verifier, 'base64url'), challenge);
}
