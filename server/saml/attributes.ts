/**
 * The attributes of an assertion (spec saml.md, "Per application"; SAML 2.0 Core §2.7.3.1), from
 * the claim sources of custom claims: `role`, `profileField`, `inGroup`, `groupMap` and `constant`
 * are computed by the claim code itself (oauth/claims/custom.ts `customClaimValues`, with the
 * same leave-out rules), `personField` reads the person, and `groups` is the `groups` claim
 * (the person's groups, sorted, kept to the application's `groupsFilter`). Without a list of its
 * own an SP gets DEFAULT_ATTRIBUTES.
 *
 * Values become strings: a list is one AttributeValue per element, booleans `true`/`false`,
 * numbers as written in JSON, an object as its JSON; an attribute without a value is left out.
 */
import type { AppContext } from '../context.js';
import type { Application, CustomClaim, JsonValue, Membership, Person, SamlAttribute } from '../db/schema.js';
import { customClaimValues } from '../oauth/claims/custom.js';
import { groupsClaim } from '../oauth/claims/compose.js';
import { claimGroups } from '../oauth/claims/subject.js';
import { ATTRIBUTE_NAME_FORMATS } from './builder.js';

/** What an SP gets when its `attributes` is not set (basic names). */
export const DEFAULT_ATTRIBUTES: SamlAttribute[] = [
  { name: 'email', source: { type: 'personField', field: 'email' } },
  { name: 'username', source: { type: 'personField', field: 'username' } },
  { name: 'name', source: { type: 'personField', field: 'name' } },
  { name: 'givenName', source: { type: 'personField', field: 'givenName' } },
  { name: 'familyName', source: { type: 'personField', field: 'familyName' } },
  { name: 'groups', source: { type: 'groups' } },
];

const CLAIM_SOURCE_TYPES = new Set(['role', 'profileField', 'inGroup', 'groupMap', 'constant']);

/** The attributes whose sources are custom-claim sources, as custom claims (worked out once per list). */
const asClaims = new WeakMap<readonly SamlAttribute[], CustomClaim[]>();
function claimsOf(attributes: readonly SamlAttribute[]): CustomClaim[] {
  let claims = asClaims.get(attributes);
  if (!claims) {
    claims = attributes.filter((a) => CLAIM_SOURCE_TYPES.has(a.source.type)).map((a) => ({ name: a.name, source: a.source as CustomClaim['source'] }));
    asClaims.set(attributes, claims);
  }
  return claims;
}

function strings(value: JsonValue | undefined): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((v) => (v === null ? [] : [typeof v === 'string' ? v : JSON.stringify(v)]));
  return [typeof value === 'string' ? value : JSON.stringify(value)];
}

function personField(person: Person, field: string): JsonValue | undefined {
  switch (field) {
    case 'email':
      return person.email;
    case 'username':
      return person.username;
    case 'name':
      return person.name;
    case 'givenName':
      return person.givenName;
    case 'familyName':
      return person.familyName;
    case 'emailVerified':
      return person.emailVerified;
    default:
      return undefined;
  }
}

export interface AttributeOut {
  name: string;
  nameFormat: string;
  friendlyName: string | undefined;
  values: string[];
}

/** The attributes `app` gets for this member, in the configured order. */
export async function attributesFor(ctx: AppContext, app: Application, person: Person, membership: Membership): Promise<AttributeOut[]> {
  const list = app.saml?.attributes ?? DEFAULT_ATTRIBUTES;
  const claims = claimsOf(list);
  const needsAll = list.some((a) => a.source.type === 'groups');
  // All the person's groups when a `groups` attribute is there; else only those the sources name.
  const sortedGroups = await claimGroups(ctx, { customClaims: claims }, person.id, needsAll ? 'groups' : undefined);
  let set: ReadonlySet<string> | undefined;
  const fromClaims = claims.length
    ? customClaimValues(claims, { role: membership.role, profile: () => membership.profile, groups: () => (set ??= new Set(sortedGroups)) }, app.authPolicy.profile_fields)
    : {};
  return list.map((attribute) => {
    const { source } = attribute;
    const value: JsonValue | undefined =
      source.type === 'personField' ? personField(person, source.field)
        : source.type === 'groups' ? groupsClaim(sortedGroups, app.groupsFilter)
          : fromClaims[attribute.name];
    return {
      name: attribute.name,
      nameFormat: ATTRIBUTE_NAME_FORMATS[attribute.nameFormat ?? 'basic'],
      friendlyName: attribute.friendlyName,
      values: strings(value),
    };
  });
}
