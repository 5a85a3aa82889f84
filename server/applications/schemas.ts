/**
 * Wire schemas of applications and auth policies (spec §2, DESIGN §4.3–4.4). The application's
 * create, PATCH and record schemas are the core fields here and the fields plugins register
 * (plugin-api/application-fields.ts: `forwardAuth`, `ldap`, …), each at its place:
 * `applicationSchemas` builds them once per app.
 */
import { Type, type Static, type TObject, type TSchema } from 'typebox';
import { DisplayName, DisplayText, Slug, Timestamp } from '../http/schemas.js';
import { PROFILE_KEY_PATTERN } from './profile-fields.js';
import { SIGNING_ALGS } from '../db/schema.js';
import { CLAIM_NAME_PATTERN, MAX_CLAIM_NAME_LENGTH } from './claim-names.js';
import { placeAfter, type ApplicationField, type ApplicationFieldInputs } from '../plugin-api/application-fields.js';

export const ProfileFieldSchema = Type.Object(
  {
    key: Type.String({ pattern: PROFILE_KEY_PATTERN.source }),
    label: DisplayName({ minLength: 1, maxLength: 200 }),
    type: Type.Union(
      ['string', 'text', 'number', 'integer', 'boolean', 'email', 'url', 'date', 'select'].map((t) => Type.Literal(t)),
    ),
    required: Type.Boolean({ default: false }),
    user_editable: Type.Boolean({ default: true }),
    options: Type.Optional(Type.Array(DisplayName({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 100 })),
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
    max_length: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000 })),
    description: Type.Optional(DisplayText({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);

const SignupPolicySchema = Type.Union([Type.Literal('open'), Type.Literal('invite_only'), Type.Literal('closed')]);
const ProviderId = Type.String({ minLength: 1, maxLength: 40 });
/** `required`: members sign in with a second factor (enrolling one at sign-in if they have none). */
const MfaPolicySchema = Type.Union([Type.Literal('optional'), Type.Literal('required')], {
  description: '`optional` (default) or `required`: members must sign in with a second factor (TOTP or a passkey), enrolling one at sign-in when they have none',
});

export const AuthPolicySchema = Type.Object(
  {
    signup_policy: SignupPolicySchema,
    allowed_providers: Type.Array(ProviderId),
    profile_fields: Type.Array(ProfileFieldSchema),
    mfa: MfaPolicySchema,
  },
  { additionalProperties: false },
);

/** Partial policy accepted by POST (as `authPolicy`) and PATCH .../auth-policy. */
export const AuthPolicyPatchSchema = Type.Object(
  {
    signup_policy: Type.Optional(SignupPolicySchema),
    allowed_providers: Type.Optional(Type.Array(ProviderId, { maxItems: 20 })),
    profile_fields: Type.Optional(Type.Array(ProfileFieldSchema, { maxItems: 50 })),
    mfa: Type.Optional(MfaPolicySchema),
  },
  { additionalProperties: false },
);
export type AuthPolicyPatch = Static<typeof AuthPolicyPatchSchema>;

/** Body of PATCH .../auth-policy: like any PATCH, it must change something. */
export const AuthPolicyPatchBodySchema = Type.Object(AuthPolicyPatchSchema.properties, {
  additionalProperties: false,
  minProperties: 1,
});

const ClientTypeSchema = Type.Union([Type.Literal('web'), Type.Literal('spa'), Type.Literal('native')]);
const Audience = Type.String({ minLength: 1, maxLength: 500, pattern: '^\\S+$' });
const RedirectUri = Type.String({ minLength: 1, maxLength: 2000 });
const RedirectUris = Type.Array(RedirectUri, { minItems: 1, maxItems: 20 });
/** OIDC `post_logout_redirect_uris`; null (the default) lets the redirect URIs stand in, [] allows none. */
const PostLogoutRedirectUris = Type.Union([Type.Array(RedirectUri, { maxItems: 20 }), Type.Null()], {
  description: 'Where end-session may send the browser; null (default): the redirect URIs stand in; [] allows none.',
});
const WebhookUrl = Type.String({ minLength: 1, maxLength: 2000 });
const WebhookSecret = Type.String({ minLength: 16, maxLength: 200 });

const Name = DisplayName({ minLength: 1, maxLength: 200 });

/** The OAuth grant types an application may use (spec grants-and-logout.md). */
export const GRANT_TYPES = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'urn:ietf:params:oauth:grant-type:device_code',
] as const;
export const DEFAULT_GRANT_TYPES: (typeof GRANT_TYPES)[number][] = ['authorization_code', 'refresh_token'];
const GrantTypeSchema = Type.Union(GRANT_TYPES.map((g) => Type.Literal(g)));
const GRANT_TYPES_TEXT =
  'OAuth grants the application may use (default authorization_code and refresh_token); client_credentials only for web applications';
const GrantTypes = Type.Array(GrantTypeSchema, { minItems: 1, maxItems: GRANT_TYPES.length, uniqueItems: true, description: GRANT_TYPES_TEXT });
const BACKCHANNEL_TEXT = 'Where logout tokens are POSTed (OpenID Connect Back-Channel Logout): https, or http on a loopback or LAN host; null sends none';
const BackchannelLogoutUri = Type.String({ minLength: 1, maxLength: 2000 });
const SESSION_REQUIRED_TEXT = 'Whether the application needs sid in logout tokens (always sent for a session end; default true)';

const BRANDING_TEXT =
  'How the hosted pages show this application: accentColor (#rrggbb) colours its primary buttons and must reach a WCAG AA contrast of 4.5:1 with their white text; logoUrl is set by PUT .../logo';
/** Settable part of `branding`: the logo is uploaded on its own (PUT .../logo). */
const BrandingPatch = Type.Object(
  { accentColor: Type.Optional(Type.Union([Type.String({ pattern: '^#[0-9a-fA-F]{6}$' }), Type.Null()])) },
  { additionalProperties: false, description: BRANDING_TEXT },
);
const BrandingRecord = Type.Object(
  {
    accentColor: Type.Union([Type.String(), Type.Null()]),
    logoUrl: Type.Union([Type.String(), Type.Null()], { description: 'Where the logo is served from this server, or null' }),
  },
  { additionalProperties: false, description: BRANDING_TEXT },
);
const CONSENT_TEXT =
  '`implicit` (default): the administrator consented for the team; `explicit`: each person approves once what the application asks for (and again for new scopes, or when it sends prompt=consent), and can withdraw it on the account page';
const ConsentPolicySchema = Type.Union([Type.Literal('implicit'), Type.Literal('explicit')], { description: CONSENT_TEXT });
const SIGNING_ALG_TEXT =
  'How this application\'s ID, access and back-channel logout tokens are signed: `RS256` (default; RSA-2048, what every OIDC library accepts), `ES256` (ECDSA P-256) or `EdDSA` (Ed25519). A change applies to tokens issued from then on; earlier ones still verify (every key is in the JWKS).';
const SigningAlgSchema = Type.Union(SIGNING_ALGS.map((alg) => Type.Literal(alg)), { description: SIGNING_ALG_TEXT });

const UNKNOWN_SCOPES_TEXT =
  '`reject` (default): a scope Gatehouse does not know is `invalid_scope`; `ignore`: it is dropped, and the token response\'s `scope` lists what was granted';
const UnknownScopesSchema = Type.Union([Type.Literal('reject'), Type.Literal('ignore')], { description: UNKNOWN_SCOPES_TEXT });
/** A directory group id (spec claims-and-groups.md). */
const GroupRef = Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$', maxLength: 64 });
const GROUPS_FILTER_TEXT = 'Directory group ids the `groups` claim may show; null (default): all the person\'s groups';
const GroupsFilter = Type.Union([Type.Array(GroupRef, { maxItems: 1000, uniqueItems: true }), Type.Null()], { description: GROUPS_FILTER_TEXT });
const CLAIM_SOURCE_TEXT =
  'Where the value comes from: `role` (the member\'s role here), `profileField` (`key`: that profile field\'s value), `inGroup` (`group`: true or false), ' +
  '`groupMap` (`map`: [{group, value}], the value of the first listed group the person is in, else `default`; omitted when that is null or absent), `constant` (`value`)';
/**
 * A claim's source on the wire: one object whose `type` says which of the other fields it needs
 * (applications/claim-settings.ts checks that and names the field), so a mistake is one clear error
 * rather than one per kind of source.
 */
export const ClaimSourceSchema = Type.Object(
  {
    type: Type.Union(['role', 'profileField', 'inGroup', 'groupMap', 'constant'].map((t) => Type.Literal(t))),
    key: Type.Optional(Type.String({ pattern: PROFILE_KEY_PATTERN.source })),
    group: Type.Optional(GroupRef),
    map: Type.Optional(Type.Array(Type.Object({ group: GroupRef, value: Type.Unknown() }, { additionalProperties: false }), { minItems: 1, maxItems: 100 })),
    default: Type.Optional(Type.Unknown()),
    value: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false, description: CLAIM_SOURCE_TEXT },
);
export const CustomClaimSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: MAX_CLAIM_NAME_LENGTH, pattern: CLAIM_NAME_PATTERN }),
    source: ClaimSourceSchema,
    inAccessToken: Type.Optional(Type.Boolean({ description: 'Also in the access token (default false)' })),
  },
  { additionalProperties: false },
);
const CUSTOM_CLAIMS_TEXT =
  'Up to 20 claims added to the ID token and userinfo whatever the scope (and to the access token with inAccessToken); names of registered JWT/OIDC claims are refused';
const CustomClaims = Type.Array(CustomClaimSchema, { maxItems: 20, description: CUSTOM_CLAIMS_TEXT });
const RESOURCE_SERVERS_TEXT =
  'Other confidential (web) applications that may introspect this application\'s tokens with their own credentials (RFC 7662), e.g. an IMAP server behind a webmail';
const ResourceServers = Type.Array(Slug, { maxItems: 20, uniqueItems: true, description: RESOURCE_SERVERS_TEXT });
/** Fields an administrator may set after creation; all optional in PATCH. */
const mutableFields = {
  postLogoutRedirectUris: Type.Optional(PostLogoutRedirectUris),
  clientType: Type.Optional(ClientTypeSchema),
  webhookUrl: Type.Optional(Type.Union([WebhookUrl, Type.Null()])),
  webhookSecret: Type.Optional(Type.Union([WebhookSecret, Type.Null()])),
  ssoGroupId: Type.Optional(Type.Union([Slug, Type.Null()])),
  authPolicy: Type.Optional(AuthPolicyPatchSchema),
  grantTypes: Type.Optional(GrantTypes),
  backchannelLogoutUri: Type.Optional(Type.Union([BackchannelLogoutUri, Type.Null()], { description: BACKCHANNEL_TEXT })),
  backchannelLogoutSessionRequired: Type.Optional(Type.Boolean({ description: SESSION_REQUIRED_TEXT })),
  branding: Type.Optional(BrandingPatch),
  consent: Type.Optional(ConsentPolicySchema),
  unknownScopes: Type.Optional(UnknownScopesSchema),
  groupsFilter: Type.Optional(GroupsFilter),
  customClaims: Type.Optional(CustomClaims),
  resourceServers: Type.Optional(ResourceServers),
  signingAlg: Type.Optional(SigningAlgSchema),
};

const CoreCreateSchema = Type.Object(
  { id: Slug, name: Name, audience: Audience, redirectUris: RedirectUris, ...mutableFields },
  { additionalProperties: false },
);
const CorePatchSchema = Type.Object(
  {
    name: Type.Optional(Name),
    audience: Type.Optional(Audience),
    redirectUris: Type.Optional(RedirectUris),
    ...mutableFields,
  },
  { additionalProperties: false, minProperties: 1 },
);

/** The create body: the core fields and every plugin field's (`ApplicationFieldInputs`). */
export type ApplicationCreate = Static<typeof CoreCreateSchema> & Partial<ApplicationFieldInputs>;
export type ApplicationPatch = Static<typeof CorePatchSchema> & Partial<ApplicationFieldInputs>;

const CoreRecordSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  audience: Type.String(),
  redirectUris: Type.Array(Type.String()),
  postLogoutRedirectUris: Type.Union([Type.Array(Type.String()), Type.Null()]),
  clientType: ClientTypeSchema,
  webhookUrl: Type.Union([Type.String(), Type.Null()]),
  webhookSecretSet: Type.Boolean(),
  ssoGroupId: Type.Union([Type.String(), Type.Null()]),
  authPolicy: AuthPolicySchema,
  grantTypes: Type.Array(GrantTypeSchema, { description: GRANT_TYPES_TEXT }),
  backchannelLogoutUri: Type.Union([Type.String(), Type.Null()], { description: BACKCHANNEL_TEXT }),
  backchannelLogoutSessionRequired: Type.Boolean({ description: SESSION_REQUIRED_TEXT }),
  branding: BrandingRecord,
  consent: ConsentPolicySchema,
  unknownScopes: UnknownScopesSchema,
  groupsFilter: Type.Union([Type.Array(Type.String()), Type.Null()], { description: GROUPS_FILTER_TEXT }),
  customClaims: Type.Array(CustomClaimSchema, { description: CUSTOM_CLAIMS_TEXT }),
  resourceServers: Type.Array(Type.String(), { description: RESOURCE_SERVERS_TEXT }),
  signingAlg: SigningAlgSchema,
  preset: Type.Union([
    Type.Object({ id: Type.String(), version: Type.Integer() }, { additionalProperties: false }),
    Type.Null(),
  ], { description: 'The app preset the application was created from and its version (GET …/preset shows what a newer version offers), or null' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}, { additionalProperties: false });

/** The secrets a create or PATCH answer may show once, beside the plugins' (`ldapPassword`). */
const CORE_SECRETS = { clientSecret: Type.Optional(Type.String()), webhookSecret: Type.Optional(Type.String()) };

export interface ApplicationSchemas {
  create: TObject;
  patch: TObject;
  record: TObject;
  /** Create/PATCH answers may carry secrets shown exactly once. */
  withSecrets: TObject;
  list: TObject;
  /** The names of every secret an answer may show once. */
  secrets: string[];
}

const built = new WeakMap<readonly ApplicationField<never>[], ApplicationSchemas>();

type Properties = Record<string, TSchema>;
const withFields = (base: Properties, fields: readonly ApplicationField<never>[], schemaOf: (f: ApplicationField<never>) => TSchema): Properties =>
  Object.fromEntries(placeAfter(Object.entries(base), fields.map((f) => ({ after: f.after, entries: [[f.name, schemaOf(f)]] }))));

/** The application schemas with the registered fields (built once per list of fields). */
export function applicationSchemas(fields: readonly ApplicationField<never>[]): ApplicationSchemas {
  const known = built.get(fields);
  if (known) return known;
  const optional = (f: ApplicationField<never>) => Type.Optional(f.input);
  const create = Type.Object(withFields(CoreCreateSchema.properties, fields, optional), { additionalProperties: false });
  const patch = Type.Object(withFields(CorePatchSchema.properties, fields, optional), { additionalProperties: false, minProperties: 1 });
  const record = Type.Object(withFields(CoreRecordSchema.properties, fields, (f) => f.record), { additionalProperties: false });
  const fieldSecrets = Object.fromEntries(fields.flatMap((f) => Object.entries(f.secrets ?? {}).map(([name, schema]) => [name, Type.Optional(schema)])));
  const withSecrets = Type.Object({ ...record.properties, ...CORE_SECRETS, ...fieldSecrets }, { additionalProperties: false });
  const list = Type.Object({
    applications: Type.Array(record),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  }, { additionalProperties: false });
  const schemas = { create, patch, record, withSecrets, list, secrets: [...Object.keys(CORE_SECRETS), ...Object.keys(fieldSecrets)] };
  built.set(fields, schemas);
  return schemas;
}
