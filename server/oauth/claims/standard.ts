/**
 * The standard claims per scope (OIDC Core §5.1, §5.4; spec claims-and-groups.md "Claims"), the
 * same in the ID token and userinfo:
 * - `profile` → `name`, `given_name`, `family_name`, `preferred_username` (the username),
 *   `updated_at` (seconds since the epoch of the person's last change);
 * - `email` → `email`, `email_verified`;
 * - `groups` → `groups` (groups.ts: sorted ids, filtered by the application's `groupsFilter`).
 * A claim without a value is left out rather than sent as null (OIDC Core §5.3.2).
 */
import { hasScope } from '../scopes.js';

/** What the standard claims are made of: a person's row as the hot paths read it. */
export interface ClaimPerson {
  id: string;
  email: string;
  emailVerified: boolean;
  name: string | null;
  username: string;
  givenName: string | null;
  familyName: string | null;
  /** Milliseconds since the epoch. */
  updatedAt: number;
}

/** Every claim an ID token or userinfo answer may carry (discovery's `claims_supported`). */
export const CLAIMS_SUPPORTED = [
  'iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'acr', 'amr', 'nonce', 'sid', 'azp',
  'name', 'given_name', 'family_name', 'preferred_username', 'updated_at', 'email', 'email_verified', 'groups', 'groups_truncated',
] as const;

/** The `profile` and `email` claims `scope` grants. */
export function standardClaims(person: ClaimPerson, scope: string): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  if (hasScope(scope, 'profile')) {
    if (person.name) claims.name = person.name;
    if (person.givenName) claims.given_name = person.givenName;
    if (person.familyName) claims.family_name = person.familyName;
    claims.preferred_username = person.username;
    claims.updated_at = Math.floor(person.updatedAt / 1000);
  }
  if (hasScope(scope, 'email')) {
    claims.email = person.email;
    claims.email_verified = person.emailVerified;
  }
  return claims;
}
