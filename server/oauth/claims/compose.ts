/**
 * The claims about a person that Gatehouse issues (spec claims-and-groups.md "Claims"), computed
 * each time a token or a userinfo answer is made, so a refresh or a later userinfo call sees the
 * person's current name, groups and profile:
 * - ID token and userinfo alike: the standard claims of the scope (standard.ts), `groups` with
 *   the `groups` scope (the person's group ids, sorted, kept to the application's `groupsFilter`
 *   when it has one), then the application's custom claims (custom.ts), whatever the scope;
 * - access token: the custom claims marked `inAccessToken`;
 * - the ID token stays under 8 KB (`fitIdToken`): past 150 groups, or when the groups would take
 *   its payload past the budget, `groups` is left out of it (it stays in userinfo) and
 *   `groups_truncated: true` says so; custom claims too big to fit (a long profile text) are left
 *   out of the ID token last, largest first, and stay in userinfo.
 */
import type { CustomClaim, ProfileField } from '../../db/schema.js';
import { hasScope } from '../scopes.js';
import { customClaimValues, type ClaimSubject } from './custom.js';
import { standardClaims, type ClaimPerson } from './standard.js';

/** What an application's settings say about claims (a slice of the application row). */
export interface ClaimSettings {
  groupsFilter: string[] | null;
  customClaims: CustomClaim[];
  authPolicy: { profile_fields: ProfileField[] };
}

/** At most this many groups go in an ID token (spec: past 150, `groups` is left out). */
export const ID_TOKEN_MAX_GROUPS = 150;

/**
 * The most JSON an ID token's payload may hold so the token stays under 8,192 characters: base64url
 * makes it 4/3 as long, and the header and the largest signature we make (RSA-4096: 683
 * characters) take about 800 more. 5,300 × 4/3 + 800 ≈ 7,870.
 */
export const ID_TOKEN_PAYLOAD_BUDGET = 5300;

/** The `groups` claim: the person's groups (sorted) kept to the filter when there is one. */
export function groupsClaim(groups: readonly string[], filter: readonly string[] | null): string[] {
  if (filter === null) return [...groups];
  const allowed = new Set(filter);
  return groups.filter((group) => allowed.has(group));
}

/**
 * The claims of the ID token and userinfo beyond `sub` and the protocol's own (`iss`, `aud`, …):
 * standard ones by scope, `groups` with its scope, the custom ones. `sortedGroups` are the
 * person's group ids in order (subject.ts `claimGroups`: all of them with the `groups` scope, else
 * those the custom claims name that the person is in).
 */
export function personClaims(
  settings: ClaimSettings,
  person: ClaimPerson,
  scope: string,
  subject: Omit<ClaimSubject, 'groups'>,
  sortedGroups: readonly string[],
): Record<string, unknown> {
  const claims = standardClaims(person, scope);
  if (hasScope(scope, 'groups')) claims.groups = groupsClaim(sortedGroups, settings.groupsFilter);
  if (settings.customClaims.length) {
    let set: ReadonlySet<string> | undefined;
    const groups = () => (set ??= new Set(sortedGroups));
    Object.assign(claims, customClaimValues(settings.customClaims, { ...subject, groups }, settings.authPolicy.profile_fields));
  }
  return claims;
}

/** The access token's custom claims (`inAccessToken`), or undefined when there are none. */
export function accessTokenClaims(
  settings: ClaimSettings,
  subject: Omit<ClaimSubject, 'groups'>,
  sortedGroups: readonly string[],
): Record<string, unknown> | undefined {
  if (!settings.customClaims.some((claim) => claim.inAccessToken)) return undefined;
  let set: ReadonlySet<string> | undefined;
  const groups = () => (set ??= new Set(sortedGroups));
  return customClaimValues(settings.customClaims, { ...subject, groups }, settings.authPolicy.profile_fields, true);
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/**
 * The ID token's share of `claims` (userinfo keeps them all): within 150 groups and the payload
 * budget, given the bytes the protocol claims take (`overhead`). Never fails: what does not fit
 * is left out, in the order above.
 */
export function fitIdToken(claims: Record<string, unknown>, overhead: number, customNames: readonly string[]): Record<string, unknown> {
  const groups = claims.groups as string[] | undefined;
  if (groups === undefined) {
    if (customNames.length === 0) return claims;
  } else if (groups.length <= ID_TOKEN_MAX_GROUPS && overhead + jsonBytes(claims) <= ID_TOKEN_PAYLOAD_BUDGET) {
    return claims;
  }
  const fitted: Record<string, unknown> = { ...claims };
  if (groups !== undefined && (groups.length > ID_TOKEN_MAX_GROUPS || overhead + jsonBytes(fitted) > ID_TOKEN_PAYLOAD_BUDGET)) {
    delete fitted.groups;
    fitted.groups_truncated = true;
  }
  if (overhead + jsonBytes(fitted) <= ID_TOKEN_PAYLOAD_BUDGET) return fitted;
  const largestFirst = customNames.filter((name) => name in fitted).sort((a, b) => jsonBytes(fitted[b]) - jsonBytes(fitted[a]));
  for (const name of largestFirst) {
    delete fitted[name];
    if (overhead + jsonBytes(fitted) <= ID_TOKEN_PAYLOAD_BUDGET) break;
  }
  return fitted;
}

/** What the protocol's own ID token claims take besides the fixed ones (their values vary in length). */
export interface IdTokenContext {
  issuer: string;
  nonce: string | null;
  sessionId: string | null;
}

/**
 * The bytes of an ID token's protocol claims (`iss`, `sub`, `aud`, `iat`, `exp`, `auth_time`,
 * `acr`, `amr`, `nonce`, `sid`): their variable parts plus 260 for names, punctuation, times and
 * the longest `acr`/`amr` (a little more than they take).
 */
const idTokenOverhead = (subject: string, clientId: string, c: IdTokenContext) =>
  260 + c.issuer.length + subject.length + clientId.length + (c.nonce?.length ?? 0) + (c.sessionId?.length ?? 0);

/** The ID token's claims about the person: `personClaims` fitted to the ID token's size (`fitIdToken`). */
export function idTokenClaims(
  settings: ClaimSettings & { id: string },
  person: ClaimPerson,
  scope: string,
  subject: Omit<ClaimSubject, 'groups'>,
  sortedGroups: readonly string[],
  context: IdTokenContext,
): Record<string, unknown> {
  const claims = personClaims(settings, person, scope, subject, sortedGroups);
  return fitIdToken(claims, idTokenOverhead(person.id, settings.id, context), settings.customClaims.map((c) => c.name));
}
