/**
 * The member a token's claims are about, as the claim makers read them (compose.ts): their role,
 * their profile (parsed only when a custom claim reads it) and their directory groups (read only
 * when the scope or a custom claim needs them: queries.ts).
 */
import type { AppContext } from '../../context.js';
import type { CustomClaim, Profile } from '../../db/schema.js';
import type { ClaimSubject } from './custom.js';
import { claimQueries } from './queries.js';
import type { ClaimSettings } from './compose.js';
import { groupsNamedByClaims } from '../../applications/claim-settings.js';
import { hasScope } from '../scopes.js';

export const NO_GROUPS: readonly string[] = [];

/** A member's role and stored profile (JSON text) as a claim subject. */
export function memberSubject(role: string, profile: string): Omit<ClaimSubject, 'groups'> {
  let parsed: Profile | undefined;
  return { role, profile: () => (parsed ??= JSON.parse(profile) as Profile) };
}

/**
 * The person's groups the claims need: all of them, sorted, with the `groups` scope (and not
 * `accessTokenOnly`); else only those of the groups custom claims name that the person is in (an
 * index probe per named group, not a read of all 50 or 200); else none, without a read.
 * Synchronous on SQLite unless a transaction holds the connection.
 */
export function claimGroups(
  ctx: AppContext,
  settings: Pick<ClaimSettings, 'customClaims'>,
  personId: string,
  scope: string | undefined,
  accessTokenOnly = false,
): readonly string[] | Promise<readonly string[]> {
  if (!accessTokenOnly && scope !== undefined && hasScope(scope, 'groups')) return claimQueries(ctx.db).groupIds(personId);
  const named = namedGroups(settings.customClaims);
  const ids = accessTokenOnly ? named.accessToken : named.all;
  return ids.length ? claimQueries(ctx.db).groupIdsAmong(personId, ids) : NO_GROUPS;
}

/** The groups a claims list names (all its claims, those in the access token), worked out once per list object. */
const named = new WeakMap<readonly CustomClaim[], { all: string[]; accessToken: string[] }>();
function namedGroups(claims: readonly CustomClaim[]): { all: string[]; accessToken: string[] } {
  let found = named.get(claims);
  if (!found) {
    found = { all: groupsNamedByClaims(claims), accessToken: groupsNamedByClaims(claims.filter((claim) => claim.inAccessToken)) };
    named.set(claims, found);
  }
  return found;
}
