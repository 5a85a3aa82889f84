/**
 * The types stored in JSON columns, and the small unions columns are typed with.
 */
export type SignupPolicy = 'open' | 'invite_only' | 'closed';

export type ClientType = 'web' | 'spa' | 'native';

export type MemberStatus = 'active' | 'suspended';

export type MemberRole = 'member' | 'admin';

/** Whether a person may sign in at all (spec administrators-and-people.md, "People"). */
export type PersonStatus = 'active' | 'disabled';

/** An administrator's role (spec administrators-and-people.md, "Administrators"). */
export type AdminRole = 'owner' | 'people_manager' | 'app_manager';

/**
 * An application's RADIUS settings (spec radius.md, "RADIUS clients belong to applications";
 * server/radius/): the network gear that may ask (`clients`, by address or CIDR range, each with
 * its shared secret: sealed at rest in PostgreSQL mode, never answered after the answer that made
 * it), the VLAN of each group (the first match in order) and the VLAN of everyone else.
 */
export interface RadiusSettings {
  clients: RadiusClientSettings[];
  vlans: { group: string; vlan: number }[];
  defaultVlan: number | null;
}

export interface RadiusClientSettings {
  name: string;
  address: string;
  /** The shared secret (db/secrets-at-rest.ts: sealed in PostgreSQL mode). */
  secret: string;
  secretSetAt: string;
}

/** An application's LDAP directory access (spec ldap.md, "Per application"; server/ldap/). */
export interface LdapSettings {
  enabled: boolean;
}

/**
 * The app preset an application was created from (spec presets-and-operations.md, "App presets";
 * server/presets/): its id and version, the inputs given, and the settings it applied then, so a
 * later preset version can be offered field by field without overwriting what an administrator
 * changed since.
 */
export interface AppliedPreset {
  id: string;
  version: number;
  inputs: Record<string, string>;
  applied: Record<string, unknown>;
}

/** Whether people approve what an application asks for (issue 25, item 17): `implicit` = the administrator did. */
export type ConsentPolicy = 'implicit' | 'explicit';

/**
 * JWS algorithms an application's tokens may be signed with (issue 38): RS256 (RSA-2048, the
 * default every relying party accepts), ES256 (ECDSA P-256) and EdDSA (Ed25519). Gatehouse keeps
 * one signing key of each; the order is the JWKS's and discovery's (RS256 first).
 */
export const SIGNING_ALGS = ['RS256', 'ES256', 'EdDSA'] as const;

export type SigningAlg = (typeof SIGNING_ALGS)[number];

/** OAuth grant types an application may use (spec grants-and-logout.md). */
export type GrantType =
  | 'authorization_code'
  | 'refresh_token'
  | 'client_credentials'
  | 'urn:ietf:params:oauth:grant-type:device_code';

export type ProfileFieldType =
  | 'string'
  | 'text'
  | 'number'
  | 'integer'
  | 'boolean'
  | 'email'
  | 'url'
  | 'date'
  | 'select';

export interface ProfileField {
  key: string;
  label: string;
  type: ProfileFieldType;
  required: boolean;
  user_editable: boolean;
  options?: string[];
  min?: number;
  max?: number;
  max_length?: number;
  description?: string;
}

/** What authorize does with a scope it does not know (spec claims-and-groups.md "Scopes"). */
export type UnknownScopes = 'reject' | 'ignore';

/** A JSON value a custom claim may carry (a constant, a group map's value). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Where a custom claim's value comes from (spec claims-and-groups.md "Claims"; oauth/claims/custom.ts). */
export type CustomClaimSource =
  | { type: 'role' }
  | { type: 'profileField'; key: string }
  | { type: 'inGroup'; group: string }
  | { type: 'groupMap'; map: { group: string; value: JsonValue }[]; default?: JsonValue }
  | { type: 'constant'; value: JsonValue };

/** A claim an application adds to the ID token and userinfo (and the access token when asked). */
export interface CustomClaim {
  name: string;
  source: CustomClaimSource;
  inAccessToken?: boolean;
}

/** Whether members must sign in with a second factor (spec second-factor.md, "Admin"). */
export type MfaPolicy = 'optional' | 'required';

export interface AuthPolicy {
  signup_policy: SignupPolicy;
  allowed_providers: string[];
  profile_fields: ProfileField[];
  mfa: MfaPolicy;
}

/**
 * RFC 8176 authentication method references a session or token records: `pwd` (password),
 * `fed` (an external provider), `otp` (TOTP or a recovery code), `hwk`/`swk` (a passkey: hardware-
 * or software-bound key) and `mfa` (two factors, or a passkey on its own).
 */
export type AuthMethod = 'pwd' | 'fed' | 'otp' | 'hwk' | 'swk' | 'mfa';

export type Profile = Record<string, string | number | boolean>;

/**
 * An application that protects sites behind a reverse proxy (spec forward-auth.md): the hosts it
 * owns (also rows of `forward_auth_hosts`, which keep each host to one application), the directory
 * groups of which a person must be in one (null: any member), and whether HTTP Basic with an app
 * password is accepted on its checks (DAV clients).
 */
export interface ForwardAuthSettings {
  hosts: string[];
  groups: string[] | null;
  basic: boolean;
}

/** How an SAML attribute's `Name` is to be read (SAML 2.0 Core §8.2): `basic` names or URIs. */
export type SamlNameFormat = 'basic' | 'uri';
/** Where a SAML attribute's values come from: the claim sources of custom claims, a person field, or the groups. */
export type SamlAttributeSource =
  | CustomClaimSource
  | { type: 'personField'; field: 'email' | 'username' | 'name' | 'givenName' | 'familyName' | 'emailVerified' }
  | { type: 'groups' };
export interface SamlAttribute {
  name: string;
  source: SamlAttributeSource;
  nameFormat?: SamlNameFormat;
  friendlyName?: string;
}
/** The NameID an SP gets (spec saml.md, "Per application"). */
export type SamlNameIdFormat = 'persistent' | 'emailAddress' | 'unspecified' | 'transient';
export type SamlNameIdSource = 'id' | 'email' | 'username';
/**
 * An application that is a SAML 2.0 service provider (spec saml.md; server/saml/): where its
 * assertions go (`acs`, HTTP-POST), its single-logout endpoint, the NameID and attributes it gets,
 * what is signed, its own certificates (PEM) for its signed requests, and whether IdP-initiated
 * sign-on is allowed. Its entity ID is the column `saml_entity_id` (unique: one application each).
 */
export interface SamlSettings {
  /** The first is the default (an AuthnRequest naming no ACS, IdP-initiated sign-on). */
  acs: { url: string; binding: 'HTTP-POST'; index: number }[];
  slo: { url: string; binding: 'HTTP-Redirect' | 'HTTP-POST' } | null;
  nameId: { format: SamlNameIdFormat; source: SamlNameIdSource | null };
  /** null: the default attributes (saml/attributes.ts DEFAULT_ATTRIBUTES). */
  attributes: SamlAttribute[] | null;
  signResponse: boolean;
  signAssertion: boolean;
  wantAuthnRequestsSigned: boolean;
  spCertificates: string[];
  idpInitiated: boolean;
}

/** What an external sign-in provider tells us about the person (DESIGN §4.9). */
export interface ExternalIdentity {
  providerAccountId: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
}
