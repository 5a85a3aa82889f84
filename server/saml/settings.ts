/**
 * The application field `saml` (spec saml.md, "Per application"): its wire schemas, the rules a
 * schema cannot say, and the settings as stored (db/schema.ts `SamlSettings`, the entity ID in its
 * own unique column). Rules:
 * - `entityId`: a URI (a scheme, no spaces), at most 1,024 characters (Metadata §2.3.2); one
 *   application each (409 `entity_id_in_use`, checked in the write's transaction);
 * - `acs`: 1 to 20, HTTP-POST (the binding the Web Browser SSO profile answers with), URLs by the
 *   redirect-URI rules (https, or http for loopback and private-network hosts), indexes unique (the
 *   list's position when not given); the first is the default;
 * - `slo`: the same URL rules, HTTP-Redirect or HTTP-POST;
 * - `nameId`: `persistent` (default: `source` `id`, an opaque value per person and SP),
 *   `emailAddress` (`email`), `unspecified` (`username`, or `email`), `transient` (none);
 * - `attributes`: up to 30, unique names; sources are the claim sources of custom claims, checked by
 *   the same code (applications/claim-settings.ts), plus `personField` and `groups`; null: the
 *   defaults (attributes.ts);
 * - at least one of `signResponse`, `signAssertion` (an unsigned assertion would be anyone's);
 * - `spCertificates`: up to 4 X.509 certificates (PEM, or the bare base64 of one), each readable,
 *   stored as PEM; `wantAuthnRequestsSigned` needs one.
 */
import { X509Certificate } from 'node:crypto';
import { Type, type Static } from 'typebox';
import type { ProfileField, SamlAttribute, SamlAttributeSource, SamlNameIdSource, SamlSettings } from '../db/schema.js';
import type { FieldError } from '../http/problem.js';
import { checkRedirectUris } from '../applications/redirect-uris.js';
import { checkNamedGroups, checkSourceFields, storedSource, type ClaimContext, type WireClaimSource } from '../applications/claim-settings.js';
import { PROFILE_KEY_PATTERN } from '../applications/profile-fields.js';

const SAML_TEXT =
  'SAML 2.0 service provider settings (docs/saml.md): the SP\'s entity ID, its assertion consumer services (HTTP-POST), its single-logout endpoint, ' +
  'the NameID and attributes it gets, what is signed, its own certificates (for its signed requests) and whether IdP-initiated sign-on is allowed; ' +
  'null: not a SAML service provider. POST …/saml/metadata fills entityId, acs, slo and spCertificates from the SP\'s metadata.';

const GroupRef = Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$', maxLength: 64 });
const Url = Type.String({ minLength: 1, maxLength: 2000 });
const NameIdFormatSchema = Type.Union([Type.Literal('persistent'), Type.Literal('emailAddress'), Type.Literal('unspecified'), Type.Literal('transient')]);

export const SamlSourceSchema = Type.Object(
  {
    type: Type.Union([
      Type.Literal('personField'), Type.Literal('groups'), Type.Literal('role'), Type.Literal('profileField'), Type.Literal('inGroup'), Type.Literal('groupMap'), Type.Literal('constant'),
    ]),
    field: Type.Optional(Type.Union([
      Type.Literal('email'), Type.Literal('username'), Type.Literal('name'), Type.Literal('givenName'), Type.Literal('familyName'), Type.Literal('emailVerified'),
    ])),
    key: Type.Optional(Type.String({ pattern: PROFILE_KEY_PATTERN.source })),
    group: Type.Optional(GroupRef),
    map: Type.Optional(Type.Array(Type.Object({ group: GroupRef, value: Type.Unknown() }, { additionalProperties: false }), { minItems: 1, maxItems: 100 })),
    default: Type.Optional(Type.Unknown()),
    value: Type.Optional(Type.Unknown()),
  },
  {
    additionalProperties: false,
    description: 'Where the values come from: `personField` (`field`: email, username, name, givenName, familyName, emailVerified), `groups` (the person\'s groups, kept to groupsFilter), or a custom claim\'s source (`role`, `profileField`, `inGroup`, `groupMap`, `constant`)',
  },
);

const AttributeSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256, pattern: '^\\S+$' }),
    source: SamlSourceSchema,
    nameFormat: Type.Optional(Type.Union([Type.Literal('basic'), Type.Literal('uri')], { description: 'basic (default) or uri' })),
    friendlyName: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  { additionalProperties: false },
);

const AcsSchema = Type.Object(
  {
    url: Url,
    binding: Type.Optional(Type.Literal('HTTP-POST', { description: 'HTTP-POST (the only binding assertions are sent with)' })),
    index: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  },
  { additionalProperties: false },
);
const SloSchema = Type.Object(
  { url: Url, binding: Type.Union([Type.Literal('HTTP-Redirect'), Type.Literal('HTTP-POST')]) },
  { additionalProperties: false },
);
const NameIdSchema = Type.Object(
  {
    format: NameIdFormatSchema,
    source: Type.Optional(Type.Union([Type.Literal('id'), Type.Literal('email'), Type.Literal('username')])),
  },
  { additionalProperties: false },
);

export const SamlInputSchema = Type.Object(
  {
    entityId: Type.String({ minLength: 1, maxLength: 1024 }),
    acs: Type.Array(AcsSchema, { minItems: 1, maxItems: 20 }),
    slo: Type.Optional(Type.Union([SloSchema, Type.Null()])),
    nameId: Type.Optional(NameIdSchema),
    attributes: Type.Optional(Type.Union([Type.Array(AttributeSchema, { maxItems: 30 }), Type.Null()])),
    signResponse: Type.Optional(Type.Boolean()),
    signAssertion: Type.Optional(Type.Boolean()),
    wantAuthnRequestsSigned: Type.Optional(Type.Boolean()),
    spCertificates: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 16_384 }), { maxItems: 4 })),
    idpInitiated: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: SAML_TEXT },
);
export type SamlInput = Static<typeof SamlInputSchema>;
export const SamlField = Type.Union([SamlInputSchema, Type.Null()], { description: SAML_TEXT });

export const SamlRecordSchema = Type.Union(
  [
    Type.Object(
      {
        entityId: Type.String(),
        acs: Type.Array(Type.Object({ url: Type.String(), binding: Type.Literal('HTTP-POST'), index: Type.Integer() }, { additionalProperties: false })),
        slo: Type.Union([Type.Object({ url: Type.String(), binding: Type.Union([Type.Literal('HTTP-Redirect'), Type.Literal('HTTP-POST')]) }, { additionalProperties: false }), Type.Null()]),
        nameId: Type.Object(
          { format: NameIdFormatSchema, source: Type.Union([Type.Literal('id'), Type.Literal('email'), Type.Literal('username'), Type.Null()]) },
          { additionalProperties: false },
        ),
        attributes: Type.Union([Type.Array(AttributeSchema), Type.Null()], { description: 'null: email, username, name, givenName, familyName, groups' }),
        signResponse: Type.Boolean(),
        signAssertion: Type.Boolean(),
        wantAuthnRequestsSigned: Type.Boolean(),
        spCertificates: Type.Array(Type.String()),
        idpInitiated: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: SAML_TEXT },
);

/** The record's value: the settings with the entity ID. */
export function samlRecord(saml: SamlSettings | null, entityId: string | null) {
  return saml && entityId ? { entityId, ...saml } : null;
}

const PATH = 'body.saml';
const ENTITY_ID = /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/;

/** A certificate as PEM from PEM or its bare base64; undefined when it is not a readable X.509 certificate. */
export function certificatePem(raw: string): string | undefined {
  const body = raw.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body)) return undefined;
  const pem = `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
  try {
    new X509Certificate(pem);
    return pem;
  } catch {
    return undefined;
  }
}

const DEFAULT_SOURCE: Record<SamlSettings['nameId']['format'], SamlNameIdSource | null> = {
  persistent: 'id', emailAddress: 'email', unspecified: 'username', transient: null,
};
const ALLOWED_SOURCES: Record<SamlSettings['nameId']['format'], (SamlNameIdSource | null)[]> = {
  persistent: ['id'], emailAddress: ['email'], unspecified: ['username', 'email'], transient: [null],
};

/** An endpoint URL's problem by the redirect-URI rules (https, or http for loopback and private-network hosts), or undefined. */
function endpointProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL (http only for loopback or private-network hosts)';
  if (url.username || url.password) return 'must not carry credentials';
  return checkRedirectUris([raw], 'web', 'x')[0]?.message;
}

/** Checks the URLs of `acs` and `slo` by the redirect-URI rules, under `path`. */
export function checkEndpoints(input: Pick<SamlInput, 'acs' | 'slo'>, path: string, errors: FieldError[]): void {
  input.acs.forEach((acs, i) => {
    const problem = endpointProblem(acs.url);
    if (problem) errors.push({ path: `${path}.acs.${i}.url`, message: problem });
  });
  const problem = input.slo && endpointProblem(input.slo.url);
  if (problem) errors.push({ path: `${path}.slo.url`, message: problem });
}

/**
 * The settings as stored (with the entity ID) from the request's value, or the field errors
 * pushed onto `errors` (undefined then). `context`: the application's profile fields and the
 * directory's groups, as custom claims are checked.
 */
export async function samlSettings(
  input: SamlInput,
  context: ClaimContext,
  errors: FieldError[],
): Promise<{ entityId: string; settings: SamlSettings } | undefined> {
  const before = errors.length;
  if (!ENTITY_ID.test(input.entityId)) errors.push({ path: `${PATH}.entityId`, message: 'must be a URI (an https URL or a URN), without spaces' });
  checkEndpoints(input, PATH, errors);
  const indexes = new Set<number>();
  const acs = input.acs.map((a, i) => {
    const index = a.index ?? i;
    if (indexes.has(index)) errors.push({ path: `${PATH}.acs.${i}.index`, message: `repeats index ${index}` });
    indexes.add(index);
    return { url: a.url, binding: 'HTTP-POST' as const, index };
  });
  const format = input.nameId?.format ?? 'persistent';
  const source = input.nameId?.source ?? DEFAULT_SOURCE[format];
  if (!ALLOWED_SOURCES[format].includes(source)) {
    errors.push({ path: `${PATH}.nameId.source`, message: `a ${format} NameID comes from ${ALLOWED_SOURCES[format].map((s) => s ?? 'nothing (a new value each time)').join(' or ')}` });
  }
  const attributes = input.attributes === undefined || input.attributes === null ? null : await checkAttributes(input.attributes, context, errors);
  const signResponse = input.signResponse ?? true;
  const signAssertion = input.signAssertion ?? true;
  if (!signResponse && !signAssertion) errors.push({ path: `${PATH}.signAssertion`, message: 'the Response or the Assertion must be signed (signResponse or signAssertion)' });
  const spCertificates: string[] = [];
  (input.spCertificates ?? []).forEach((raw, i) => {
    const pem = certificatePem(raw);
    if (!pem) errors.push({ path: `${PATH}.spCertificates.${i}`, message: 'is not an X.509 certificate (PEM, or its base64)' });
    else spCertificates.push(pem);
  });
  const wantAuthnRequestsSigned = input.wantAuthnRequestsSigned ?? false;
  if (wantAuthnRequestsSigned && !(input.spCertificates ?? []).length) {
    errors.push({ path: `${PATH}.wantAuthnRequestsSigned`, message: 'needs the SP\'s certificate (spCertificates) to verify its requests with' });
  }
  if (errors.length > before) return undefined;
  return {
    entityId: input.entityId,
    settings: {
      acs,
      slo: input.slo ?? null,
      nameId: { format, source },
      attributes: attributes ?? null,
      signResponse,
      signAssertion,
      wantAuthnRequestsSigned,
      spCertificates,
      idpInitiated: input.idpInitiated ?? false,
    },
  };
}

type WireAttribute = Static<typeof AttributeSchema>;

async function checkAttributes(list: WireAttribute[], context: ClaimContext, errors: FieldError[]): Promise<SamlAttribute[] | undefined> {
  const before = errors.length;
  const seen = new Set<string>();
  const claimSourced: { source: WireClaimSource; path: string }[] = [];
  list.forEach((attribute, i) => {
    const at = `${PATH}.attributes.${i}`;
    if (seen.has(attribute.name)) errors.push({ path: `${at}.name`, message: `duplicate attribute name "${attribute.name}"` });
    seen.add(attribute.name);
    const { source } = attribute;
    const extra = (['field', 'key', 'group', 'map', 'default', 'value'] as const).filter((f) => source[f] !== undefined);
    if (source.type === 'personField') {
      if (source.field === undefined) errors.push({ path: `${at}.source.field`, message: 'is required for a personField source' });
      for (const f of extra.filter((f) => f !== 'field')) errors.push({ path: `${at}.source.${f}`, message: 'is not a field of a personField source' });
    } else if (source.type === 'groups') {
      for (const f of extra) errors.push({ path: `${at}.source.${f}`, message: 'is not a field of a groups source' });
    } else {
      if (source.field !== undefined) errors.push({ path: `${at}.source.field`, message: `is not a field of a ${source.type} source` });
      const { field: _field, ...claimSource } = source;
      checkSourceFields(claimSource as WireClaimSource, at, context.profileFields, errors);
      claimSourced.push({ source: claimSource as WireClaimSource, path: at });
    }
  });
  await checkNamedGroups(claimSourced, context, errors);
  if (errors.length > before) return undefined;
  return list.map((attribute) => {
    const { source } = attribute;
    const stored: SamlAttributeSource =
      source.type === 'personField' ? { type: 'personField', field: source.field! }
        : source.type === 'groups' ? { type: 'groups' }
          : storedSource(source as WireClaimSource);
    return {
      name: attribute.name,
      source: stored,
      ...(attribute.nameFormat ? { nameFormat: attribute.nameFormat } : {}),
      ...(attribute.friendlyName ? { friendlyName: attribute.friendlyName } : {}),
    };
  });
}

/** The profile fields and groups the checks read (as custom claims are checked). */
export type SamlCheckContext = ClaimContext & { profileFields: ProfileField[] };
