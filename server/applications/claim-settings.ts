/**
 * The claim settings of an application (spec claims-and-groups.md "Scopes", "Claims",
 * "Introspection"): the rules a JSON schema cannot express, each refusal naming its field
 * (400 `validation_failed`):
 * - `customClaims`: a name that is a registered JWT/OIDC claim or one the contract defines is
 *   refused, as are duplicate names; each source has the fields its `type` needs and no others;
 *   a `profileField` must name a profile field of the application, an `inGroup`/`groupMap` an
 *   existing directory group; the whole list's JSON stays within 4 KB, so the claims it adds
 *   cannot push an ID token past its size limit (oauth/claims/id-token-size.ts);
 * - `groupsFilter`: existing directory groups;
 * - `resourceServers`: other existing applications that are confidential (`web`).
 * A group or profile field removed later is not refused here: the claim naming it is then left
 * out at issuance (oauth/claims/), and deleting a group named here answers 409 `group_in_use`
 * (groups/references.ts).
 */
import type { CustomClaim, CustomClaimSource, JsonValue, ProfileField } from '../db/schema.js';
import type { FieldError } from '../http/problem.js';
import { RESERVED_CLAIM_NAMES } from './claim-names.js';


export const MAX_CUSTOM_CLAIMS_BYTES = 4096;

/** A source as the admin API takes it: one object, the fields its `type` needs (schemas.ts ClaimSourceSchema). */
export interface WireClaimSource {
  type: string;
  key?: string;
  group?: string;
  map?: { group: string; value: unknown }[];
  default?: unknown;
  value?: unknown;
}

export interface WireCustomClaim {
  name: string;
  source: WireClaimSource;
  inAccessToken?: boolean;
}

/** The fields each source type takes (besides `type`); `needs` are required. */
const SOURCE_FIELDS: Record<CustomClaimSource['type'], { needs: (keyof WireClaimSource)[]; may: (keyof WireClaimSource)[] }> = {
  role: { needs: [], may: [] },
  profileField: { needs: ['key'], may: [] },
  inGroup: { needs: ['group'], may: [] },
  groupMap: { needs: ['map'], may: ['default'] },
  constant: { needs: ['value'], may: [] },
};

/** What the checks look things up in: the application's profile fields and the directory's groups. */
export interface ClaimContext {
  profileFields: ProfileField[];
  /** Which of `ids` are existing directory groups. */
  existingGroups: (ids: string[]) => Promise<Set<string>>;
}

/** The groups a list of custom claims names, in order, each once. */
export function groupsNamedByClaims(claims: readonly Pick<CustomClaim, 'source'>[]): string[] {
  const named = new Set<string>();
  for (const { source } of claims) {
    if (source.type === 'inGroup') named.add(source.group);
    if (source.type === 'groupMap') for (const entry of source.map) named.add(entry.group);
  }
  return [...named];
}

/** The stored source of a wire source already checked: only the fields its type takes. */
export function storedSource(source: WireClaimSource): CustomClaimSource {
  switch (source.type) {
    case 'profileField':
      return { type: 'profileField', key: source.key! };
    case 'inGroup':
      return { type: 'inGroup', group: source.group! };
    case 'groupMap': {
      const map = source.map!.map((entry) => ({ group: entry.group, value: entry.value as JsonValue }));
      return source.default === undefined ? { type: 'groupMap', map } : { type: 'groupMap', map, default: source.default as JsonValue };
    }
    case 'constant':
      return { type: 'constant', value: source.value as JsonValue };
    default:
      return { type: 'role' };
  }
}

/**
 * Claim sources wherever they are used (custom claims here; the SAML identity provider's
 * attributes), checked in two steps: `checkSourceFields` per source (the fields its `type` needs
 * and no others; a `profileField` names a profile field of the application), then
 * `checkNamedGroups` once for all (the groups `inGroup`/`groupMap` name exist). Errors name
 * `<path>.source.<field>`.
 */
export function checkSourceFields(source: WireClaimSource, at: string, profileFields: readonly ProfileField[], errors: FieldError[]): void {
  const fields = SOURCE_FIELDS[source.type as CustomClaimSource['type']];
  for (const field of fields.needs) {
    if (source[field] === undefined) errors.push({ path: `${at}.source.${field}`, message: `is required for a ${source.type} source` });
  }
  for (const field of ['key', 'group', 'map', 'default', 'value'] as const) {
    if (source[field] !== undefined && !fields.needs.includes(field) && !fields.may.includes(field)) {
      errors.push({ path: `${at}.source.${field}`, message: `is not a field of a ${source.type} source` });
    }
  }
  if (source.type === 'profileField' && source.key !== undefined && !profileFields.some((f) => f.key === source.key)) {
    errors.push({ path: `${at}.source.key`, message: `"${source.key}" is not a profile field of this application` });
  }
}

/** The second step of `checkSourceFields`: every group the sources name exists. */
export async function checkNamedGroups(entries: { source: WireClaimSource; path: string }[], context: Pick<ClaimContext, 'existingGroups'>, errors: FieldError[]): Promise<void> {
  const named = entries.flatMap(({ source, path: at }) => namedGroups(source).map(([group, where]) => ({ group, path: `${at}.source.${where}` })));
  if (!named.length) return;
  const existing = await context.existingGroups([...new Set(named.map((n) => n.group))]);
  for (const { group, path: at } of named) if (!existing.has(group)) errors.push({ path: at, message: `there is no group "${group}"` });
}

/**
 * Checks a `customClaims` list; returns the list as stored, or pushes the errors (under
 * `body.customClaims.<i>…`) and returns undefined.
 */
export async function checkCustomClaims(claims: WireCustomClaim[], context: ClaimContext, errors: FieldError[]): Promise<CustomClaim[] | undefined> {
  const before = errors.length;
  const path = 'body.customClaims';
  const seen = new Set<string>();
  claims.forEach((claim, i) => {
    const at = `${path}.${i}`;
    if (RESERVED_CLAIM_NAMES.has(claim.name)) {
      errors.push({ path: `${at}.name`, message: `"${claim.name}" is a registered claim name that Gatehouse sets itself; choose another name` });
    } else if (seen.has(claim.name)) {
      errors.push({ path: `${at}.name`, message: `duplicate claim name "${claim.name}"` });
    }
    seen.add(claim.name);
    checkSourceFields(claim.source, at, context.profileFields, errors);
  });
  await checkNamedGroups(claims.map((claim, i) => ({ source: claim.source, path: `${path}.${i}` })), context, errors);
  if (Buffer.byteLength(JSON.stringify(claims)) > MAX_CUSTOM_CLAIMS_BYTES) {
    errors.push({ path, message: `must be at most ${MAX_CUSTOM_CLAIMS_BYTES} bytes as JSON (the ID token must stay small)` });
  }
  if (errors.length > before) return undefined;
  return claims.map((claim) => ({ name: claim.name, source: storedSource(claim.source), ...(claim.inAccessToken ? { inAccessToken: true } : {}) }));
}

/** The groups a wire source names, with where (`group`, `map.<i>.group`). */
function namedGroups(source: WireClaimSource): [string, string][] {
  if (source.type === 'inGroup' && source.group !== undefined) return [[source.group, 'group']];
  if (source.type === 'groupMap' && source.map) return source.map.map((entry, j): [string, string] => [entry.group, `map.${j}.group`]);
  return [];
}

/** Checks a `groupsFilter`: every id an existing group. */
export async function checkGroupsFilter(filter: string[] | null, context: Pick<ClaimContext, 'existingGroups'>, errors: FieldError[]): Promise<void> {
  if (!filter?.length) return;
  const existing = await context.existingGroups(filter);
  filter.forEach((group, i) => {
    if (!existing.has(group)) errors.push({ path: `body.groupsFilter.${i}`, message: `there is no group "${group}"` });
  });
}

/**
 * Checks `resourceServers`: other applications, each confidential. `found` holds the listed ones
 * that exist, with their client type.
 */
export function checkResourceServers(ids: string[], selfId: string, found: Map<string, string>, errors: FieldError[]): void {
  // The contract names the list itself (`body.resourceServers`); the message names the entry.
  const path = 'body.resourceServers';
  for (const id of ids) {
    const type = found.get(id);
    if (id === selfId) errors.push({ path, message: `"${id}" is this application; it introspects its own tokens already` });
    else if (type === undefined) errors.push({ path, message: `there is no application "${id}"` });
    else if (type !== 'web') errors.push({ path, message: `"${id}" is a ${type} application; only confidential (web) applications can introspect` });
  }
}
