/**
 * Scopes (DESIGN §4.10): `openid`, `profile`, `email`, `offline_access`; anything else is
 * `invalid_scope` (RFC 6749 §3.3). A refresh token is issued only with `offline_access`.
 */
import { invalidScope } from './errors.js';

export const SUPPORTED_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;

/** Parses a space-separated scope string into a de-duplicated list in canonical order. */
export function parseScope(raw: string | undefined): string[] {
  if (raw === undefined) throw invalidScope('The scope parameter is required.');
  const requested = new Set(raw.split(' ').filter(Boolean));
  const unknown = [...requested].filter((s) => !(SUPPORTED_SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw invalidScope(`Unsupported scope: ${unknown.join(' ')}.`);
  if (!requested.size) throw invalidScope('The scope parameter is empty.');
  return SUPPORTED_SCOPES.filter((s) => requested.has(s));
}

export const hasScope = (scope: string, name: string) => scope.split(' ').includes(name);
