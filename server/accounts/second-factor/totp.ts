/**
 * TOTP (RFC 6238) with otpauth: SHA-1, 6 digits, 30-second steps, ±1 step accepted for clock
 * drift. A secret is 160 random bits (RFC 4226 §4 recommends at least that), handled as base32.
 * Which step a code matched is returned, so the caller can refuse a second use of that step or
 * any earlier one (RFC 6238 §5.2): the store keeps the newest step used per person.
 */
import { Secret, TOTP } from 'otpauth';

export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of now that are still accepted. */
export const TOTP_WINDOW = 1;
/** The name authenticator apps show for the account (the `issuer` of the otpauth URI). */
export const TOTP_ISSUER = 'Gatehouse';

const settings = { algorithm: 'SHA1', digits: TOTP_DIGITS, period: TOTP_PERIOD_SECONDS } as const;

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://totp/…` URI authenticator apps import (also what the QR code holds). */
export function totpUri(secret: string, accountName: string): string {
  return new TOTP({ ...settings, issuer: TOTP_ISSUER, label: accountName, secret: Secret.fromBase32(secret) }).toString();
}

/** The step `code` is valid for at `nowMs` (within the window), or undefined. */
export function matchingStep(secret: string, code: string, nowMs: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = TOTP.validate({ ...settings, token: code, secret: Secret.fromBase32(secret), timestamp: nowMs, window: TOTP_WINDOW });
  return delta === null ? undefined : Math.floor(nowMs / 1000 / TOTP_PERIOD_SECONDS) + delta;
}

/** A code typed with spaces or a dash in the middle ("123 456") is the same code. */
export function normaliseCode(code: string): string {
  return code.replace(/[\s-]/g, '');
}
