/**
 * The claim-name rule of custom claims (spec claims-and-groups.md, "Custom claims"), one place for
 * the server (the wire schema, applications/schemas.ts; the rule a schema cannot say,
 * claim-settings.ts) and the control panel (renderer/src/pages/applications/claims.tsx checks a
 * name as it is typed). No imports: the panel bundles this file.
 */

/** A claim name starts with a letter and holds letters, digits and `_ . : / -`. */
export const CLAIM_NAME_PATTERN = '^[A-Za-z][A-Za-z0-9_.:/-]*$';
export const MAX_CLAIM_NAME_LENGTH = 100;

/**
 * Claim names a custom claim may not take: registered JWT claims (RFC 7519 §4.1), the OIDC claims
 * Gatehouse issues (OIDC Core §2, §5.1), access-token claims (RFC 9068, `app_user`), RFC 7800 `cnf`,
 * Security Event Token `events`, and the ones this contract defines (`groups`, `groups_truncated`).
 */
export const RESERVED_CLAIM_NAMES: ReadonlySet<string> = new Set([
  'iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'jti', 'auth_time', 'nonce', 'acr', 'amr', 'azp', 'sid', 'at_hash', 'c_hash',
  'client_id', 'scope', 'app_user', 'email', 'email_verified', 'name', 'given_name', 'family_name', 'preferred_username',
  'updated_at', 'groups', 'groups_truncated', 'typ', 'cnf', 'events',
]);

const pattern = new RegExp(CLAIM_NAME_PATTERN);

/** What is wrong with a claim name: not of the pattern (or too long), a name Gatehouse sets itself, or nothing. */
export function claimNameProblem(name: string): 'pattern' | 'reserved' | undefined {
  if (!name || name.length > MAX_CLAIM_NAME_LENGTH || !pattern.test(name)) return 'pattern';
  return RESERVED_CLAIM_NAMES.has(name) ? 'reserved' : undefined;
}
