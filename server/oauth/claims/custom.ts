/**
 * An application's custom claims (spec claims-and-groups.md "Claims"): each one's value for one
 * member, computed when a token or userinfo answer is made. A source that names something gone
 * since (a deleted group, a profile field taken out of the policy) never fails: an `inGroup`
 * answers false, a `groupMap` entry is skipped, a `profileField` claim is left out; the claims a
 * JSON-null value would carry (a `groupMap` default of null) are left out too.
 */
import type { CustomClaim, CustomClaimSource, JsonValue, Profile, ProfileField } from '../../db/schema.js';

/** What custom claims read of a member; `profile` and `groups` are read only when a claim needs them. */
export interface ClaimSubject {
  /** The member's role in the application (`member`, `admin`). */
  role: string;
  /** The member's profile in the application (parsed on first use). */
  profile: () => Profile;
  /** The ids of all the person's directory groups. */
  groups: () => ReadonlySet<string>;
}

/** The value of one source for the subject, or undefined when the claim is left out. */
function valueOf(source: CustomClaimSource, subject: ClaimSubject, fields: readonly ProfileField[]): JsonValue | undefined {
  switch (source.type) {
    case 'role':
      return subject.role;
    case 'profileField':
      // Only a field the policy still defines: a removed one's stale value stays out.
      return fields.some((field) => field.key === source.key) ? subject.profile()[source.key] : undefined;
    case 'inGroup':
      return subject.groups().has(source.group);
    case 'groupMap': {
      const groups = subject.groups();
      const hit = source.map.find((entry) => groups.has(entry.group));
      return hit ? hit.value : source.default;
    }
    case 'constant':
      return source.value;
  }
}

/**
 * The custom claims' values for the subject, in the configured order; `accessTokenOnly` keeps
 * those with `inAccessToken`.
 */
export function customClaimValues(
  claims: readonly CustomClaim[],
  subject: ClaimSubject,
  fields: readonly ProfileField[],
  accessTokenOnly = false,
): Record<string, JsonValue> {
  const values: Record<string, JsonValue> = {};
  for (const claim of claims) {
    if (accessTokenOnly && !claim.inAccessToken) continue;
    const value = valueOf(claim.source, subject, fields);
    if (value !== undefined && value !== null) values[claim.name] = value;
  }
  return values;
}
