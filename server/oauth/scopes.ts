/**
 * Scopes (DESIGN §4.10, spec claims-and-groups.md "Scopes", RFC 6749 §3.3):
 * `openid`, `profile`, `email`, `groups` (the `groups` claim), `address` and `phone` (accepted and
 * granted, with no claims: Gatehouse holds neither, and apps whose set-up guides ask for them
 * must not fail on them), `offline_access` (a refresh token).
 * Anything else depends on the application's `unknownScopes`: `reject` (the default) answers
 * `invalid_scope`; `ignore` drops it, and the token response's `scope` lists what was granted.
 */
import type { UnknownScopes } from '../db/schema.js';
import { invalidScope } from './errors.js';

export const SUPPORTED_SCOPES = ['openid', 'profile', 'email', 'groups', 'address', 'phone', 'offline_access'] as const;

const SUPPORTED: ReadonlySet<string> = new Set(SUPPORTED_SCOPES);

/**
 * Parses a space-separated scope string into a de-duplicated list of supported scopes in canonical
 * order. Unknown names are `invalid_scope` under `reject`, dropped under `ignore`; nothing left
 * (or nothing asked) is `invalid_scope` too.
 */
export function parseScope(raw: string | undefined, unknownScopes: UnknownScopes = 'reject'): string[] {
  if (raw === undefined) throw invalidScope('The scope parameter is required.');
  const requested = new Set(raw.split(' ').filter(Boolean));
  const unknown = [...requested].filter((s) => !SUPPORTED.has(s));
  if (unknown.length && unknownScopes === 'reject') throw invalidScope(`Unsupported scope: ${unknown.join(' ')}.`);
  const granted = SUPPORTED_SCOPES.filter((s) => requested.has(s));
  if (!requested.size) throw invalidScope('The scope parameter is empty.');
  if (!granted.length) throw invalidScope(`None of the requested scopes is supported: ${unknown.join(' ')}.`);
  return granted;
}

/** The unknown names of a scope string (those `parseScope` refuses or drops). */
export const unknownScopeNames = (raw: string) => raw.split(' ').filter((s) => s && !SUPPORTED.has(s));

export const hasScope = (scope: string, name: string) => scope.split(' ').includes(name);
