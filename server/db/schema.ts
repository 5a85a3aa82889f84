/**
 * The whole Gatehouse data model in one file.
 *
 * Conventions: ids are prefixed random strings (see `server/util/ids.ts`), timestamps are
 * integer milliseconds mapped to `Date`, JSON columns are typed with `$type<>()`, and every
 * secret is stored as a SHA-256 hex hash (`*Hash` columns), never in the clear. The one
 * exception is the webhook secret, which must be usable as an HMAC key; it is never returned
 * by any read. Indexes sit next to their table and are chosen for the keyset pagination
 * `(created, id)` used by every admin list.
 */
import { sql } from 'drizzle-orm';
import {
  blob,
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  uniqueIndex,
} from 'drizzle-orm/sqlite-core';

const createdAt = () =>
  integer('created_at', { mode: 'timestamp_ms' })
    .notNull()
    .default(sql`(unixepoch('subsec') * 1000)`);
const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' });
const flag = (name: string) => integer(name, { mode: 'boolean' });

// ---------------------------------------------------------------------------------------------
// Types stored in JSON columns

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

// ---------------------------------------------------------------------------------------------
// People, their sign-in methods and browser sessions

export const people = sqliteTable(
  'people',
  {
    id: text('id').primaryKey(), // `sub`
    email: text('email').notNull(), // stored lower-cased
    emailVerified: flag('email_verified').notNull().default(false),
    name: text('name'),
    /**
     * `preferred_username`: unique, lower-case, `^[a-z0-9][a-z0-9._-]{0,63}$` (people/username.ts).
     * Not null for the code; the column itself stays nullable on upgraded databases, filled at
     * start-up in batches before the server listens (people/username-backfill.ts, decision 0100).
     */
    username: text('username').notNull(),
    /** OIDC `given_name` / `family_name`: at most 100 characters of display text, or null. */
    givenName: text('given_name'),
    familyName: text('family_name'),
    /**
     * The LDAP directory's `uidNumber` (and user-private `gidNumber`, spec ldap.md): ≥ 10000, from
     * the one sequence people and groups share, never reused. Set by the database as the row is
     * inserted (a trigger on SQLite, a sequence default on PostgreSQL: migration `posix_ids`), so
     * every way of creating a person gets one.
     */
    uidNumber: integer('uid_number'),
    /** argon2id PHC string; null when the person signs in only through external providers. */
    passwordHash: text('password_hash'),
    /** `disabled`: cannot sign in anywhere (administrators/people-status.ts); their sessions were ended. */
    status: text('status').$type<PersonStatus>().notNull().default('active'),
    /**
     * The directory source that keeps this person (spec directory-sources.md; server/directory-sources/),
     * and their entry's DN there; null for people Gatehouse keeps. Such a person's password stays in
     * the source; their source fields and groups are read-only here (409 `managed_by_source`).
     */
    sourceId: text('source_id'),
    sourceDn: text('source_dn'),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('people_email_uq').on(t.email),
    // A source's people (disabling them with the source, the 20 % rule's count).
    index('people_source_idx').on(t.sourceId, t.status),
    uniqueIndex('people_username_uq').on(t.username),
    uniqueIndex('people_uid_number_uq').on(t.uidNumber),
    index('people_created_idx').on(t.createdAt, t.id),
  ],
);

/**
 * Back-off against password guessing, per e-mail address rather than per person, so an address
 * with no account locks exactly like one with an account (the answers never tell them apart).
 * Keyed by the SHA-256 of the normalised address: guessed addresses are not kept in the clear.
 * A browser that proved itself (device cookie, live session) is counted under its own key, the
 * SHA-256 of `device.<nonce>` or `session.<id>`, in the same column.
 * Rows go on a right password and are swept once idle (accounts/sign-in-back-off.ts).
 */
export const signInBackOff = sqliteTable(
  'sign_in_back_off',
  {
    emailHash: text('email_hash').primaryKey(),
    failures: integer('failures').notNull(),
    lockedUntil: timestamp('locked_until'),
    lastFailureAt: timestamp('last_failure_at').notNull(),
    /** When the address's owner was last told by e-mail that it is being guessed at. */
    notifiedAt: timestamp('notified_at'),
  },
  (t) => [index('sign_in_back_off_last_failure_idx').on(t.lastFailureAt)],
);

/** Ways a person can sign in: `credential` (e-mail + password) or an external provider id. */
export const linkedAccounts = sqliteTable(
  'linked_accounts',
  {
    id: text('id').primaryKey(),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    providerAccountId: text('provider_account_id').notNull(),
    email: text('email').notNull(),
    linkedAt: timestamp('linked_at').notNull(),
  },
  (t) => [
    uniqueIndex('linked_accounts_provider_uq').on(t.provider, t.providerAccountId),
    uniqueIndex('linked_accounts_person_provider_uq').on(t.personId, t.provider),
  ],
);

/** One browser on one device. The cookie carries a random token; only its hash is stored. */
export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(), // `:sid`, also the `sid` claim
    tokenHash: text('token_hash').notNull(),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    userAgent: text('user_agent'),
    device: text('device').notNull().default('Unknown device'),
    ip: text('ip').notNull().default(''),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at').notNull(),
    lastSeenAt: timestamp('last_seen_at').notNull(),
    revokedAt: timestamp('revoked_at'),
    /** How the last completed sign-in on this session was made (the ID token's `amr`); empty for sessions from before. */
    amr: text('amr', { mode: 'json' }).$type<AuthMethod[]>().notNull().default([]),
  },
  (t) => [
    uniqueIndex('sessions_token_uq').on(t.tokenHash),
    index('sessions_person_idx').on(t.personId, t.createdAt),
    // Retention (data-lifecycle/retention-rules.ts): ended sessions by when they ended.
    index('sessions_expires_idx').on(t.expiresAt),
    // Signed-out sessions by when they ended (retention), and the live ones (revoked_at null, not
    // yet expired: `gatehouse_sessions_active`, counted from this index alone).
    index('sessions_revoked_expires_idx').on(t.revokedAt, t.expiresAt),
  ],
);

/**
 * Realms a session has authenticated: `group:<ssoGroupId>` or `app:<applicationId>`.
 * Authorize is silent only when the application's realm is present here.
 */
export const sessionRealms = sqliteTable(
  'session_realms',
  {
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    realm: text('realm').notNull(),
    authenticatedAt: timestamp('authenticated_at').notNull(),
  },
  // By realm: forgetting a deleted application's or group's marks (data-lifecycle/purge-plans.ts).
  (t) => [primaryKey({ columns: [t.sessionId, t.realm] }), index('session_realms_realm_idx').on(t.realm)],
);

// ---------------------------------------------------------------------------------------------
// Second factors (spec second-factor.md). Secrets are encrypted with the key in
// `<data>/second-factor.key` (accounts/second-factor/secret-box.ts), never stored in the clear.

/** A person's TOTP authenticator: the confirmed one, and one being enrolled (replacing it once confirmed). */
export const totpCredentials = sqliteTable('totp_credentials', {
  personId: text('person_id')
    .primaryKey()
    .references(() => people.id, { onDelete: 'cascade' }),
  /** Encrypted base32 secret of the confirmed authenticator; null while only enrolling. */
  secret: text('secret'),
  confirmedAt: timestamp('confirmed_at'),
  /** Encrypted secret shown for enrolment, waiting for its first code. */
  pendingSecret: text('pending_secret'),
  pendingCreatedAt: timestamp('pending_created_at'),
  /** The newest 30-second step a code was accepted for: a code is good once (RFC 6238 §5.2). */
  lastUsedStep: integer('last_used_step').notNull().default(0),
  updatedAt: timestamp('updated_at').notNull(),
});

/** WebAuthn credentials (passkeys). The credential id is base64url, the public key COSE bytes as base64url. */
export const passkeys = sqliteTable(
  'passkeys',
  {
    id: text('id').primaryKey(),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    credentialId: text('credential_id').notNull(),
    publicKey: text('public_key').notNull(),
    /** The authenticator's signature counter; a lower one than stored means a cloned key. */
    counter: integer('counter').notNull().default(0),
    transports: text('transports', { mode: 'json' }).$type<string[]>().notNull().default([]),
    /** `singleDevice` (hardware-bound) or `multiDevice` (synced). */
    deviceType: text('device_type').$type<'singleDevice' | 'multiDevice'>().notNull(),
    backedUp: flag('backed_up').notNull().default(false),
    aaguid: text('aaguid'),
    name: text('name').notNull(),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at'),
  },
  (t) => [uniqueIndex('passkeys_credential_uq').on(t.credentialId), index('passkeys_person_idx').on(t.personId, t.createdAt)],
);

/** One-time recovery codes, stored as keyed hashes; a new set replaces the old one. */
export const recoveryCodes = sqliteTable(
  'recovery_codes',
  {
    id: text('id').primaryKey(),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    createdAt: createdAt(),
    usedAt: timestamp('used_at'),
  },
  (t) => [index('recovery_codes_person_idx').on(t.personId)],
);

/**
 * Back-off against second-factor guessing, per person across pending sign-ins (the pending
 * sign-in itself allows 5 tries). One row per person with failures in a row; a success deletes it.
 */
export const secondFactorBackOff = sqliteTable(
  'second_factor_back_off',
  {
    personId: text('person_id')
      .primaryKey()
      .references(() => people.id, { onDelete: 'cascade' }),
    failures: integer('failures').notNull(),
    lockedUntil: timestamp('locked_until'),
    lastFailureAt: timestamp('last_failure_at').notNull(),
  },
  (t) => [index('second_factor_back_off_last_failure_idx').on(t.lastFailureAt)],
);

/**
 * Sign-ins waiting for their second step (accounts/second-factor/pending.ts). In the database, not
 * in one process's memory, so the second step may reach any instance sharing it. Found by the
 * SHA-256 of the random token in the `gatehouse_mfa` cookie; the browser's User-Agent hash binds
 * it to the device. A completed step deletes its row (DELETE ... RETURNING: one instance wins);
 * expired rows are swept (data-lifecycle/retention-rules.ts).
 */
export const pendingSignIns = sqliteTable(
  'pending_sign_ins',
  {
    tokenHash: text('token_hash').primaryKey(),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    applicationId: text('application_id'),
    /** The first factor's `amr`, or the session's own for a step-up. */
    firstFactor: text('first_factor', { mode: 'json' }).$type<AuthMethod[]>().notNull(),
    /** A step-up raises this session to multi-factor instead of starting one. */
    stepUpSessionId: text('step_up_session_id'),
    /** Where the hosted flow goes once done. */
    next: text('next').notNull(),
    /** Once done, link the external identity waiting in this browser (accounts/providers/link-on-sign-in.ts). */
    finishLink: flag('finish_link').notNull().default(false),
    /** SHA-256 of the browser's User-Agent. */
    deviceHash: text('device_hash').notNull(),
    failures: integer('failures').notNull().default(0),
    /** SHA-256 of the last WebAuthn challenge handed out for this sign-in (single use). */
    challengeHash: text('challenge_hash'),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at').notNull(),
  },
  (t) => [index('pending_sign_ins_person_idx').on(t.personId), index('pending_sign_ins_expires_idx').on(t.expiresAt)],
);

/**
 * WebAuthn challenges handed out without a pending sign-in: passkey-first sign-in (no session) and
 * passkey registration from the account (one per session). Only the SHA-256 of a challenge is
 * kept; an answer spends it with DELETE ... RETURNING. Expired rows are swept.
 */
export const webauthnChallenges = sqliteTable(
  'webauthn_challenges',
  {
    challengeHash: text('challenge_hash').primaryKey(),
    /** The session a registration was started from; null for a passkey-first sign-in. */
    sessionId: text('session_id'),
    expiresAt: timestamp('expires_at').notNull(),
  },
  (t) => [uniqueIndex('webauthn_challenges_session_uq').on(t.sessionId), index('webauthn_challenges_expires_idx').on(t.expiresAt)],
);

/**
 * Applications that received tokens from a session (a code exchange, or a device grant): those
 * with a back-channel logout URI are told when the session ends (oauth/backchannel/). Rows go
 * with their session.
 */
export const sessionClients = sqliteTable(
  'session_clients',
  {
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    firstIssuedAt: timestamp('first_issued_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.applicationId] }), index('session_clients_app_idx').on(t.applicationId)],
);

/**
 * Site sessions of forward auth (server/forward-auth/site-sessions.ts): what a protected host's
 * `gatehouse_site` cookie refers to (its random token known only by SHA-256), bound to that host
 * and its application and tied to the Gatehouse session it was handed over from: a check passes
 * only while that session is live (signed out, ended from the account page or the admin API, it
 * stops the next check). Ended with their session (accounts/session.ts `endSessions`), by the
 * session's retention rule, or once expired (retention rule "forward-auth site sessions").
 */
export const forwardAuthSessions = sqliteTable(
  'forward_auth_sessions',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    /** The protected host (`name` or `name:port`, lower-case) whose cookie this is. */
    host: text('host').notNull(),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('forward_auth_sessions_token_uq').on(t.tokenHash),
    index('forward_auth_sessions_session_idx').on(t.sessionId),
    // A member suspended or removed: their site sessions at that application go (and the person's cascade).
    index('forward_auth_sessions_person_app_idx').on(t.personId, t.applicationId),
    index('forward_auth_sessions_app_idx').on(t.applicationId),
    index('forward_auth_sessions_expires_idx').on(t.expiresAt),
  ],
);

/**
 * One-time codes of the forward-auth hand-over (server/forward-auth/codes.ts): issued by
 * `/api/auth/forward/start` for one protected host, spent once by `/.gatehouse/callback` on that
 * host within 60 seconds (DELETE ... RETURNING: one spender wins, on any instance). Known only by
 * SHA-256. No foreign keys: a row lives a minute, and the spend re-checks the session.
 */
export const forwardAuthCodes = sqliteTable(
  'forward_auth_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    applicationId: text('application_id').notNull(),
    sessionId: text('session_id').notNull(),
    personId: text('person_id').notNull(),
    host: text('host').notNull(),
    /** Where the callback sends the browser (checked at the start: on this host). */
    rd: text('rd').notNull(),
    expiresAt: timestamp('expires_at').notNull(),
  },
  (t) => [index('forward_auth_codes_expires_idx').on(t.expiresAt)],
);

/**
 * Authorization codes in PostgreSQL mode (issue 26): several instances serve one issuer, and the
 * token request that exchanges a code may reach another instance than the authorize request that
 * issued it. SQLite keeps its codes in memory (oauth/authorize/code.ts: one process serves a data
 * directory) and leaves this table empty. Known only by their SHA-256; spent by one conditional
 * update (`spent_at IS NULL`); rows go REMEMBER_MS after issue (retention rule "authorization
 * codes", by `issued_at`). No foreign keys: a row lives ten minutes, and a code whose
 * person, membership or session has gone since is refused at the exchange.
 */
export const authorizationCodes = sqliteTable(
  'authorization_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    applicationId: text('application_id').notNull(),
    personId: text('person_id').notNull(),
    membershipId: text('membership_id').notNull(),
    sessionId: text('session_id').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    scope: text('scope').notNull(),
    resource: text('resource').notNull(),
    codeChallenge: text('code_challenge'),
    nonce: text('nonce'),
    authTime: timestamp('auth_time').notNull(),
    issuedAt: timestamp('issued_at').notNull(),
    expiresAt: timestamp('expires_at').notNull(),
    spentAt: timestamp('spent_at'),
    /** The refresh-token family its exchange started (a replay revokes it). */
    issuedFamilyId: text('issued_family_id'),
  },
  (t) => [index('authorization_codes_issued_idx').on(t.issuedAt)],
);

/** Single-use links sent by e-mail: password reset and e-mail verification. */
export const oneTimeTokens = sqliteTable(
  'one_time_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    purpose: text('purpose').$type<'password_reset' | 'email_verification'>().notNull(),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at').notNull(),
    usedAt: timestamp('used_at'),
  },
  (t) => [index('one_time_tokens_person_idx').on(t.personId, t.purpose), index('one_time_tokens_expires_idx').on(t.expiresAt)],
);

/** In-flight sign-ins with an external provider (state, PKCE verifier, nonce). */
export const providerLogins = sqliteTable(
  'provider_logins',
  {
  state: text('state').primaryKey(),
  provider: text('provider').notNull(),
  codeVerifier: text('code_verifier').notNull(),
  nonce: text('nonce'),
  returnTo: text('return_to'),
  applicationId: text('application_id'),
  /** Set when a signed-in person is linking a provider from the account page. */
  linkPersonId: text('link_person_id'),
  /**
   * The identity the provider vouched for, kept while the login waits for the person to prove
   * they own the existing account with that e-mail (DESIGN §4.9: never link silently).
   */
  identity: text('identity', { mode: 'json' }).$type<ExternalIdentity>(),
  createdAt: createdAt(),
  expiresAt: timestamp('expires_at').notNull(),
  },
  // Expired logins are deleted as new ones begin (accounts/providers/logins.ts).
  (t) => [index('provider_logins_expires_idx').on(t.expiresAt)],
);

// ---------------------------------------------------------------------------------------------
// Applications and SSO groups

export const ssoGroups = sqliteTable(
  'sso_groups',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [index('sso_groups_created_idx').on(t.createdAt, t.id)],
);

export const applications = sqliteTable(
  'applications',
  {
    id: text('id').primaryKey(), // also the OAuth client_id
    name: text('name').notNull(),
    audience: text('audience').notNull(),
    redirectUris: text('redirect_uris', { mode: 'json' }).$type<string[]>().notNull(),
    /**
     * Where RP-initiated logout may send the browser (OIDC `post_logout_redirect_uris`); null until
     * an administrator sets it, and then the redirect URIs stand in (applications from before the list).
     */
    postLogoutRedirectUris: text('post_logout_redirect_uris', { mode: 'json' }).$type<string[]>(),
    clientType: text('client_type').$type<ClientType>().notNull(),
    /** SHA-256 of the client secret (web clients only). */
    clientSecretHash: text('client_secret_hash'),
    webhookUrl: text('webhook_url'),
    /** Used as the HMAC key for Standard Webhooks signatures; never returned by reads. */
    webhookSecret: text('webhook_secret'),
    /** After a secret rotation, deliveries are signed with both secrets until this time. */
    webhookPreviousSecret: text('webhook_previous_secret'),
    webhookPreviousSecretUntil: timestamp('webhook_previous_secret_until'),
    ssoGroupId: text('sso_group_id').references(() => ssoGroups.id, { onDelete: 'set null' }),
    authPolicy: text('auth_policy', { mode: 'json' }).$type<AuthPolicy>().notNull(),
    grantTypes: text('grant_types', { mode: 'json' })
      .$type<GrantType[]>()
      .notNull()
      .default(sql`'["authorization_code","refresh_token"]'`),
    /** Where logout tokens are POSTed (OpenID Connect Back-Channel Logout 1.0); null: none. */
    backchannelLogoutUri: text('backchannel_logout_uri'),
    backchannelLogoutSessionRequired: flag('backchannel_logout_session_required').notNull().default(true),
    /** `#rrggbb` for the hosted pages' primary buttons (contrast-checked against their white text), or null. */
    brandAccentColor: text('brand_accent_color'),
    /** The uploaded logo's version (start of its SHA-256; the image is in `application_logos`), or null. */
    brandLogo: text('brand_logo'),
    consent: text('consent').$type<ConsentPolicy>().notNull().default('implicit'),
    /** `reject` (default): an unknown scope is `invalid_scope`; `ignore`: it is dropped. */
    unknownScopes: text('unknown_scopes').$type<UnknownScopes>().notNull().default('reject'),
    /** Directory group ids the `groups` claim may show; null: all the person's groups. */
    groupsFilter: text('groups_filter', { mode: 'json' }).$type<string[]>(),
    /** At most 20 claims added to the ID token and userinfo (oauth/claims/). */
    customClaims: text('custom_claims', { mode: 'json' }).$type<CustomClaim[]>().notNull().default([]),
    /** Other (confidential) applications that may introspect this one's tokens (RFC 7662). */
    resourceServers: text('resource_servers', { mode: 'json' }).$type<string[]>().notNull().default([]),
    /** How this application's ID, access and logout tokens are signed; existing applications keep RS256. */
    signingAlg: text('signing_alg').$type<SigningAlg>().notNull().default('RS256'),
    /** LDAP directory access (spec ldap.md): whether its service account and its members' app passwords bind. */
    ldap: text('ldap', { mode: 'json' }).$type<LdapSettings>().notNull().default(sql`'{"enabled":false}'`),
    /** SHA-256 of the LDAP service account's password (`cn=<id>,ou=services,<base>`); null until LDAP is first enabled. */
    ldapPasswordHash: text('ldap_password_hash'),
    /** Forward auth (server/forward-auth/): the protected hosts and who passes; null: none. */
    forwardAuth: text('forward_auth', { mode: 'json' }).$type<ForwardAuthSettings>(),
    /** RADIUS clients and VLANs (server/radius/); null: none. */
    radius: text('radius', { mode: 'json' }).$type<RadiusSettings>(),
    /** SAML 2.0 service provider settings (server/saml/); null: not a SAML SP. */
    saml: text('saml', { mode: 'json' }).$type<SamlSettings>(),
    /** The SP's entity ID (spec saml.md: one application each, 409 `entity_id_in_use`); null: not a SAML SP. */
    samlEntityId: text('saml_entity_id'),
    /** The app preset it was created from (server/presets/), or null. */
    preset: text('preset', { mode: 'json' }).$type<AppliedPreset>(),
    /**
     * The OAuth client's own cap on its access tokens' lifetime in seconds (GATEHOUSE_ACCESS_TOKEN_TTL
     * applies below it); null: none. Not on the admin API: set for the panel's built-in client
     * (administrators/panel-client.ts, 10 minutes).
     */
    accessTokenTtl: integer('access_token_ttl'),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('applications_audience_uq').on(t.audience),
    // An AuthnRequest's Issuer finds its SP (saml/service-providers.ts), and keeps an entity ID to one application.
    uniqueIndex('applications_saml_entity_uq').on(t.samlEntityId),
    index('applications_created_idx').on(t.createdAt, t.id),
    index('applications_group_idx').on(t.ssoGroupId),
    // Directory events (group.created, …) go to every application with a webhook (decision 0101).
    index('applications_webhook_idx').on(t.webhookUrl),
  ],
);

/**
 * Personal network certificates (spec radius.md, "EAP-TLS"): issued by the appliance CA to a person
 * for one application, ≤ 1 year; EAP-TLS finds the presented certificate here by its SHA-256
 * fingerprint (unique index) and checks it live: not revoked, not expired, the person active, the
 * membership active. Revoked and expired rows are removed by the retention rule after 30 days. At
 * most NETWORK_CERTIFICATES_PER_PERSON per person; gone with the person, the membership and the
 * application.
 */
export const networkCertificates = sqliteTable(
  'network_certificates',
  {
    id: text('id').primaryKey(),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    membershipId: text('membership_id')
      .notNull()
      .references(() => memberships.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** Hex serial number, as certificates show it. */
    serial: text('serial').notNull(),
    /** SHA-256 of the DER certificate, hex lower case. */
    fingerprint: text('fingerprint').notNull(),
    notAfter: timestamp('not_after').notNull(),
    createdAt: createdAt(),
    revokedAt: timestamp('revoked_at'),
    /** Moved at most once a minute. */
    lastUsedAt: timestamp('last_used_at'),
  },
  (t) => [
    uniqueIndex('network_certificates_fingerprint_uq').on(t.fingerprint),
    index('network_certificates_person_idx').on(t.personId, t.createdAt, t.id),
    index('network_certificates_app_idx').on(t.applicationId),
    index('network_certificates_membership_idx').on(t.membershipId),
    index('network_certificates_not_after_idx').on(t.notAfter),
    index('network_certificates_revoked_idx').on(t.revokedAt),
  ],
);

/**
 * RADIUS accounting (RFC 2866; spec radius.md, "Answers"): one row per session a client reports
 * (Acct-Session-Id), for the person its Access-Accept's Class named; updated by Interim-Update and
 * Stop. Kept 30 days after its last report (retention rule); gone with the person and the
 * application.
 */
export const radiusSessions = sqliteTable(
  'radius_sessions',
  {
    id: text('id').primaryKey(),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    clientName: text('client_name').notNull(),
    /** Acct-Session-Id as the client sent it (≤ 253 octets). */
    acctSessionId: text('acct_session_id').notNull(),
    nasAddress: text('nas_address').notNull(),
    /** Calling-Station-Id: the device's MAC address on Wi-Fi, its address on a VPN. */
    callingStationId: text('calling_station_id'),
    startedAt: timestamp('started_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
    stoppedAt: timestamp('stopped_at'),
    inputOctets: integer('input_octets').notNull().default(0),
    outputOctets: integer('output_octets').notNull().default(0),
    sessionSeconds: integer('session_seconds').notNull().default(0),
  },
  (t) => [
    uniqueIndex('radius_sessions_key_uq').on(t.applicationId, t.nasAddress, t.acctSessionId),
    index('radius_sessions_person_idx').on(t.personId, t.startedAt, t.id),
    index('radius_sessions_updated_idx').on(t.updatedAt),
  ],
);

/**
 * Forward auth (server/forward-auth/): each protected host pattern (`wiki.lan.example`,
 * `*.media.lan.example`, `wiki.lan.example:8443`, stored normalised) belongs to one application;
 * the primary key is what makes a second claim a 409 `host_in_use`. At most 20 per application, so
 * the table is as small as the application list; the checks read it into memory
 * (forward-auth/protected-hosts.ts). Goes with its application (purge plan, and at once in the
 * deleting transaction so the host is free again).
 */
export const forwardAuthHosts = sqliteTable(
  'forward_auth_hosts',
  {
    host: text('host').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
  },
  (t) => [index('forward_auth_hosts_app_idx').on(t.applicationId)],
);

/**
 * An application's logo (issue 25, item 15): at most one per application, at most 100 KB, PNG or
 * SVG; served from our origin (pages/brand-routes.ts). Goes with its application (purge plan).
 */
export const applicationLogos = sqliteTable('application_logos', {
  applicationId: text('application_id')
    .primaryKey()
    .references(() => applications.id, { onDelete: 'cascade' }),
  contentType: text('content_type').$type<'image/png' | 'image/svg+xml'>().notNull(),
  data: blob('data', { mode: 'buffer' }).$type<Buffer>().notNull(),
  /** The start of the image's SHA-256: the version in its URL. */
  version: text('version').notNull(),
  updatedAt: timestamp('updated_at').notNull(),
});

/** A person's membership of an application ("application user"; `app_user.id`). */
export const memberships = sqliteTable(
  'memberships',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    status: text('status').$type<MemberStatus>().notNull().default('active'),
    role: text('role').$type<MemberRole>().notNull().default('member'),
    profile: text('profile', { mode: 'json' }).$type<Profile>().notNull().default({}),
    joinedAt: timestamp('joined_at').notNull(),
    lastActiveAt: timestamp('last_active_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('memberships_app_person_uq').on(t.applicationId, t.personId),
    // Keyset pagination: (joined_at, id) within an application, optionally per status / role.
    index('memberships_app_joined_idx').on(t.applicationId, t.joinedAt, t.id),
    index('memberships_app_status_idx').on(t.applicationId, t.status, t.joinedAt, t.id),
    index('memberships_app_role_idx').on(t.applicationId, t.role, t.joinedAt, t.id),
    index('memberships_person_idx').on(t.personId),
  ],
);

/**
 * What a member approved for an application whose consent policy is `explicit` (issue 25, item
 * 17): one row per membership, holding the union of the scopes approved. Withdrawn from the
 * account page (the row goes), with the membership, or a year after it was last used
 * (`last_used_at`, moved at most daily; data-lifecycle/retention-rules.ts).
 */
export const consents = sqliteTable(
  'consents',
  {
    membershipId: text('membership_id')
      .primaryKey()
      .references(() => memberships.id, { onDelete: 'cascade' }),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    /** Space-separated scopes approved so far. */
    scope: text('scope').notNull(),
    grantedAt: timestamp('granted_at').notNull(),
    lastUsedAt: timestamp('last_used_at').notNull(),
  },
  (t) => [index('consents_app_idx').on(t.applicationId), index('consents_last_used_idx').on(t.lastUsedAt)],
);

/**
 * App passwords (spec ldap.md, "People bind with app passwords"): a random secret a person makes
 * for one application they are a member of, for clients that can only send a name and a password
 * (LDAP binds, HTTP Basic on forward auth). Stored as the SHA-256 of the secret (≥ 128 bits, so a
 * fast hash is enough: nothing to guess), found by it through the unique index; shown once.
 * Revoking deletes the row. Bounded: at most APP_PASSWORDS_PER_PERSON per person, gone with the
 * person (cascade), the membership and the application (purge plans).
 */
export const appPasswords = sqliteTable(
  'app_passwords',
  {
    id: text('id').primaryKey(),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    membershipId: text('membership_id')
      .notNull()
      .references(() => memberships.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    secretHash: text('secret_hash').notNull(),
    createdAt: createdAt(),
    /** Moved at most once a minute (app-passwords/verify.ts). */
    lastUsedAt: timestamp('last_used_at'),
  },
  (t) => [
    uniqueIndex('app_passwords_secret_uq').on(t.secretHash),
    index('app_passwords_person_idx').on(t.personId, t.createdAt, t.id),
    index('app_passwords_app_idx').on(t.applicationId),
    index('app_passwords_membership_idx').on(t.membershipId),
  ],
);

export const invitations = sqliteTable(
  'invitations',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    role: text('role').$type<MemberRole>().notNull(),
    message: text('message'),
    tokenHash: text('token_hash').notNull(),
    /** `pending` | `accepted` | `revoked`; `expired` is derived from `expiresAt`. */
    state: text('state').$type<'pending' | 'accepted' | 'revoked'>().notNull().default('pending'),
    invitedBy: text('invited_by').notNull(),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at').notNull(),
    acceptedAt: timestamp('accepted_at'),
    acceptedBy: text('accepted_by').references(() => people.id, { onDelete: 'set null' }),
    revokedAt: timestamp('revoked_at'),
    emailSent: flag('email_sent').notNull().default(false),
    emailError: text('email_error'),
    lastSentAt: timestamp('last_sent_at'),
    /** Directory groups the person joins on accepting (ids; those deleted meanwhile are skipped). */
    groups: text('groups', { mode: 'json' }).$type<string[]>().notNull().default([]),
  },
  (t) => [
    uniqueIndex('invitations_token_uq').on(t.tokenHash),
    index('invitations_app_created_idx').on(t.applicationId, t.createdAt, t.id),
    index('invitations_app_email_idx').on(t.applicationId, t.email),
    // The foreign key's `set null` walks it; the overview counts pending ones; retention ends the rest.
    index('invitations_accepted_by_idx').on(t.acceptedBy),
    index('invitations_state_expires_idx').on(t.state, t.expiresAt),
  ],
);

// ---------------------------------------------------------------------------------------------
// Directory groups (spec claims-and-groups.md, "Groups"): who a person is in the team. Not the
// SSO groups above (the panel's "shared sign-in"). Flat; at most 1,000 groups, 200 per person.

export const groups = sqliteTable(
  'groups',
  {
    id: text('id').primaryKey(), // `^[a-z0-9][a-z0-9._-]{0,63}$`, the value in the `groups` claim
    name: text('name').notNull(),
    description: text('description'),
    /** The LDAP directory's `gidNumber` (spec ldap.md): from the sequence people's uidNumber comes from. */
    gidNumber: integer('gid_number'),
    /** The directory source this group is mirrored from, and its DN there; null for local groups (read-only when set). */
    sourceId: text('source_id'),
    sourceDn: text('source_dn'),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [index('groups_created_idx').on(t.createdAt, t.id), uniqueIndex('groups_gid_number_uq').on(t.gidNumber)],
);

/**
 * Who is in which group. Goes with the person (cascade: at most 200 rows) and with the group: a
 * group's delete leaves its rows to the purge plan (a group may hold everyone), so every read
 * starts from `groups` (groups/queries.ts joins it).
 */
export const groupMembers = sqliteTable(
  'group_members',
  {
    groupId: text('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    addedAt: timestamp('added_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.personId] }), index('group_members_person_idx').on(t.personId, t.groupId)],
);

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** First characters of the key, shown in lists so people can tell keys apart. */
    prefix: text('prefix').notNull(),
    keyHash: text('key_hash').notNull(),
    scopes: text('scopes', { mode: 'json' }).$type<string[]>().notNull(),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at'),
    lastUsedAt: timestamp('last_used_at'),
    revokedAt: timestamp('revoked_at'),
  },
  (t) => [
    uniqueIndex('api_keys_hash_uq').on(t.keyHash),
    index('api_keys_app_created_idx').on(t.applicationId, t.createdAt, t.id),
  ],
);

// ---------------------------------------------------------------------------------------------
// Administrators (spec administrators-and-people.md; server/administrators/)

/**
 * People who administer this installation, with their role. One row per person; an
 * `app_manager`'s applications are in `administrator_applications`. Goes with the person.
 */
export const administrators = sqliteTable(
  'administrators',
  {
    personId: text('person_id')
      .primaryKey()
      .references(() => people.id, { onDelete: 'cascade' }),
    role: text('role').$type<AdminRole>().notNull(),
    /** Who granted the role (an audit actor: `admin`, `person:<id>`, `setup`). */
    grantedBy: text('granted_by').notNull(),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  // Counting owners (the last one cannot go) and listing by role.
  (t) => [index('administrators_role_idx').on(t.role, t.personId)],
);

/** The applications an `app_manager` manages. */
export const administratorApplications = sqliteTable(
  'administrator_applications',
  {
    personId: text('person_id')
      .notNull()
      .references(() => administrators.personId, { onDelete: 'cascade' }),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.personId, t.applicationId] }), index('administrator_applications_app_idx').on(t.applicationId)],
);

// ---------------------------------------------------------------------------------------------
// OAuth server state

/**
 * Signing keys, a chain per algorithm (`alg`: RS256, ES256, EdDSA). Of an algorithm's keys not
 * retired yet the oldest signs; retired keys stay published until `expiresAt` (oauth/keys.ts).
 */
export const signingKeys = sqliteTable('signing_keys', {
  kid: text('kid').primaryKey(),
  alg: text('alg').$type<SigningAlg>().notNull().default('RS256'),
  publicJwk: text('public_jwk', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
  /** PKCS#8 PEM; never leaves the server except inside a backup. */
  privateKeyPem: text('private_key_pem').notNull(),
  createdAt: createdAt(),
  /** When a newer key took over signing. */
  retiredAt: timestamp('retired_at'),
  /** When the key leaves the JWKS: retirement + the longest lifetime of a token it signed. */
  expiresAt: timestamp('expires_at'),
});

/** One chain of rotated refresh tokens, born of one code exchange. */
export const refreshTokenFamilies = sqliteTable(
  'refresh_token_families',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    membershipId: text('membership_id').references(() => memberships.id, { onDelete: 'set null' }),
    sessionId: text('session_id').references(() => sessions.id, { onDelete: 'set null' }),
    scope: text('scope').notNull(),
    resource: text('resource').notNull(),
    authTime: timestamp('auth_time').notNull(),
    /** The `amr` of the session the family came from, kept for its whole life (refresh never changes it). */
    amr: text('amr', { mode: 'json' }).$type<AuthMethod[]>().notNull().default([]),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at').notNull(),
    revokedAt: timestamp('revoked_at'),
    revokedReason: text('revoked_reason'),
  },
  (t) => [
    index('rtf_person_app_idx').on(t.personId, t.applicationId),
    index('rtf_session_idx').on(t.sessionId),
    // Walked by deleting an application or a membership, and by retention (expired or revoked families).
    index('rtf_app_idx').on(t.applicationId),
    index('rtf_membership_idx').on(t.membershipId),
    index('rtf_expires_idx').on(t.expiresAt),
    index('rtf_revoked_idx').on(t.revokedAt),
  ],
);

export const refreshTokens = sqliteTable(
  'refresh_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    familyId: text('family_id')
      .notNull()
      .references(() => refreshTokenFamilies.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at').notNull(),
    /** Set when this token was exchanged for its successor; presenting it again is reuse. */
    rotatedAt: timestamp('rotated_at'),
  },
  (t) => [index('refresh_tokens_family_idx').on(t.familyId)],
);

/**
 * Device authorization requests (RFC 8628). Both codes are known only by their SHA-256. A row
 * moves `pending` → `approved` | `denied` on the /device page, and `approved` → `issued` when
 * the device's poll receives the tokens (once). Rows are pruned once expired
 * (oauth/device/prune.ts).
 */
export const deviceAuthorizations = sqliteTable(
  'device_authorizations',
  {
    id: text('id').primaryKey(),
    deviceCodeHash: text('device_code_hash').notNull(),
    userCodeHash: text('user_code_hash').notNull(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    resource: text('resource').notNull(),
    status: text('status').$type<'pending' | 'approved' | 'denied' | 'issued'>().notNull().default('pending'),
    /** Seconds the device must wait between polls; grows by 5 on each `slow_down`. */
    interval: integer('interval').notNull(),
    lastPolledAt: timestamp('last_polled_at'),
    /** Who the device asked from: shown in the session list once approved. */
    userAgent: text('user_agent'),
    ip: text('ip').notNull().default(''),
    /** Set on approval: the person, their membership and the session made for the device. */
    personId: text('person_id').references(() => people.id, { onDelete: 'cascade' }),
    membershipId: text('membership_id').references(() => memberships.id, { onDelete: 'cascade' }),
    sessionId: text('session_id').references(() => sessions.id, { onDelete: 'set null' }),
    authTime: timestamp('auth_time'),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('device_authorizations_device_code_uq').on(t.deviceCodeHash),
    uniqueIndex('device_authorizations_user_code_uq').on(t.userCodeHash),
    index('device_authorizations_expires_idx').on(t.expiresAt),
    index('device_authorizations_app_idx').on(t.applicationId),
    index('device_authorizations_person_idx').on(t.personId),
    index('device_authorizations_membership_idx').on(t.membershipId),
    index('device_authorizations_session_idx').on(t.sessionId),
  ],
);

/**
 * Access tokens revoked before their expiry (RFC 7009 §2.2.1), by `jti`. Access tokens are
 * stateless JWTs: this list is what userinfo (and introspection) check. A row lives only as long
 * as its token would have (`expiresAt`), then the retention rule deletes it.
 */
export const revokedAccessTokens = sqliteTable(
  'revoked_access_tokens',
  {
    jti: text('jti').primaryKey(),
    expiresAt: timestamp('expires_at').notNull(),
    revokedAt: timestamp('revoked_at').notNull(),
  },
  (t) => [index('revoked_access_tokens_expires_idx').on(t.expiresAt)],
);

// ---------------------------------------------------------------------------------------------
// Webhooks and audit

/**
 * The delivery state every outbox row carries (webhook deliveries, back-channel logouts), read
 * and written by the one delivery worker (webhooks/worker.ts, webhooks/queries.ts).
 */
const deliveryState = () => ({
  status: text('status').$type<'pending' | 'succeeded' | 'failed'>().notNull().default('pending'),
  attempts: integer('attempts').notNull().default(0),
  nextAttemptAt: timestamp('next_attempt_at').notNull(),
  /** Lease held by a delivery in flight; a crashed worker's lease simply runs out. */
  leaseUntil: timestamp('lease_until'),
  lastAttemptAt: timestamp('last_attempt_at'),
  lastStatusCode: integer('last_status_code'),
  lastError: text('last_error'),
  createdAt: createdAt(),
  deliveredAt: timestamp('delivered_at'),
});

/** The webhook outbox: one row per event per application, written in the change's transaction. */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(), // event id, sent as `webhook-id`
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    /** The exact JSON body sent, so retries are byte-identical. */
    payload: text('payload').notNull(),
    ...deliveryState(),
  },
  (t) => [
    index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt),
    index('webhook_deliveries_app_idx').on(t.applicationId, t.createdAt, t.id),
    index('webhook_deliveries_created_idx').on(t.createdAt),
  ],
);

/**
 * The back-channel logout outbox and its delivery log (OpenID Connect Back-Channel Logout 1.0):
 * one row per logout token to send to one application, written in the transaction that ended
 * the session (or suspended/removed the member). The token itself is signed at each attempt
 * (its `exp` is at most 2 minutes away); `id` is its `jti`. Delivered by the webhook worker's
 * machinery (retry schedule, timeout, target rules); finished rows are pruned after 30 days.
 */
export const backchannelLogouts = sqliteTable(
  'backchannel_logouts',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    /** The `sub` claim: the person. */
    subject: text('subject').notNull(),
    /** The `sid` claim; null when an administrator suspended or removed the member. */
    sessionId: text('session_id'),
    /** What ended the session (`sign_out`, `password_reset`, `membership_suspended`, …). */
    reason: text('reason').notNull(),
    ...deliveryState(),
  },
  (t) => [
    index('backchannel_logouts_due_idx').on(t.status, t.nextAttemptAt),
    index('backchannel_logouts_app_idx').on(t.applicationId, t.createdAt, t.id),
    index('backchannel_logouts_created_idx').on(t.createdAt),
  ],
);

export const auditLog = sqliteTable(
  'audit_log',
  {
    id: text('id').primaryKey(),
    at: timestamp('at').notNull(),
    /** `admin`, `api_key:<id>`, `person:<id>` or `system`. */
    actor: text('actor').notNull(),
    action: text('action').notNull(),
    /** Not a foreign key: the log outlives deleted applications. */
    applicationId: text('application_id'),
    target: text('target'),
    details: text('details', { mode: 'json' }).$type<Record<string, unknown>>().notNull().default({}),
    /** The client address of the request that made the entry (GATEHOUSE_TRUST_PROXY applies); null for background work and older entries. */
    ip: text('ip'),
  },
  (t) => [
    index('audit_log_at_idx').on(t.at, t.id),
    index('audit_log_app_idx').on(t.applicationId, t.at, t.id),
    // The panel's filters by action and by actor (with a date range) walk only their own entries.
    index('audit_log_action_idx').on(t.action, t.at, t.id),
    index('audit_log_actor_idx').on(t.actor, t.at, t.id),
  ],
);

/**
 * Sign-in activity per UTC day, counted as it happens (server/activity/record.ts), so the panel's
 * charts read at most a few dozen rows and never the audit log. `applicationId` '' is the whole
 * installation. Not a foreign key: the counts outlive a deleted application until retention.
 * Kept as long as the audit log (400 days by default; data-lifecycle/retention-rules.ts).
 */
export const activityDaily = sqliteTable(
  'activity_daily',
  {
    applicationId: text('application_id').notNull(),
    /** Days since 1970-01-01, UTC. */
    day: integer('day').notNull(),
    signIns: integer('sign_ins').notNull().default(0),
    failedSignIns: integer('failed_sign_ins').notNull().default(0),
    /** Distinct people active (signed in, or given tokens) that day. */
    activePeople: integer('active_people').notNull().default(0),
  },
  // The day index serves retention (oldest days first, across applications).
  (t) => [primaryKey({ columns: [t.applicationId, t.day] }), index('activity_daily_day_idx').on(t.day)],
);

/**
 * Who has been counted active today, so each person counts once a day per application (and once
 * for the installation, `applicationId` ''). Only today's and yesterday's rows are needed; older
 * ones are pruned (data-lifecycle/retention-rules.ts).
 */
export const activityPeople = sqliteTable(
  'activity_people',
  {
    day: integer('day').notNull(),
    applicationId: text('application_id').notNull(),
    personId: text('person_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.applicationId, t.personId] })],
);

/** Small key/value facts about this installation (e.g. last backup, key-rotation schedule). */
/**
 * Rate-limit windows shared by every instance in PostgreSQL mode (accounts/rate-limits.ts,
 * oauth/failure-limit.ts; issue 26): one row per counter key (`<scope>\n<caller>`), counted by one
 * upsert, the window restarted when it has ended. SQLite mode counts in memory and leaves it empty.
 * Rows are worthless once their window ended (data-lifecycle/retention-rules.ts).
 */
export const rateLimitWindows = sqliteTable(
  'rate_limit_windows',
  {
    key: text('key').primaryKey(),
    count: integer('count').notNull(),
    windowEndsAt: timestamp('window_ends_at').notNull(),
  },
  (t) => [index('rate_limit_windows_ends_idx').on(t.windowEndsAt)],
);

/**
 * The counter behind people's uidNumber and groups' gidNumber on SQLite (spec ldap.md: stable,
 * ≥ 10000, never reused): one row, moved by the insert triggers of migration `posix_ids`, never
 * back. PostgreSQL uses a real sequence (`posix_id_seq`) and leaves this table empty.
 */
export const posixIdSequence = sqliteTable('posix_id_sequence', {
  name: text('name').primaryKey(),
  nextValue: integer('next_value').notNull(),
});

export const meta = sqliteTable('meta', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: timestamp('updated_at').notNull(),
});

// ---------------------------------------------------------------------------------------------
// The SAML 2.0 identity provider (spec saml.md; server/saml/)

/**
 * The IdP's signing keys (saml/keys.ts): RSA-2048 with a self-signed certificate (10 years,
 * `CN=<issuer host> SAML signing`). A rotated-in key is published in the metadata at once and signs
 * from `activates_at`; of the keys whose moment has come, the latest signs. The one it takes over
 * from stays published until `expires_at`. The private PEM is sealed at rest in PostgreSQL mode.
 * A handful of rows (one per rotation).
 */
export const samlSigningKeys = sqliteTable('saml_signing_keys', {
  id: text('id').primaryKey(),
  certificatePem: text('certificate_pem').notNull(),
  /** PKCS#8 PEM; never leaves the server except inside a backup. */
  privateKeyPem: text('private_key_pem').notNull(),
  createdAt: createdAt(),
  activatesAt: timestamp('activates_at').notNull(),
  /** When a newer key took over (its `activates_at`); null while none has. */
  retiredAt: timestamp('retired_at'),
  /** When it leaves the metadata; null while not retired. */
  expiresAt: timestamp('expires_at'),
});

/**
 * AuthnRequests and IdP-initiated starts (saml/requests.ts): each request ID an SP sent, kept until
 * its lifetime is over so a second one is refused (replay: the unique index), and the sign-on it
 * started while the person signs in (`/saml/sso/continue?r=<handle>`, the handle known by SHA-256).
 * `answered_at` is set when a Response went out: one Response per request. Retention: past `expires_at`.
 */
export const samlRequests = sqliteTable(
  'saml_requests',
  {
    handleHash: text('handle_hash').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    /** The AuthnRequest's ID; null for IdP-initiated sign-on. */
    requestId: text('request_id'),
    acsUrl: text('acs_url').notNull(),
    relayState: text('relay_state'),
    forceAuthn: flag('force_authn').notNull(),
    isPassive: flag('is_passive').notNull(),
    /** The SP asked for a second factor (RequestedAuthnContext); the class it named, to answer with. */
    mfaClass: text('mfa_class'),
    /** The NameID format the SP asked for (NameIDPolicy), when one of ours; null: the configured one. */
    nameIdFormat: text('name_id_format').$type<SamlNameIdFormat>(),
    createdAt: timestamp('created_at').notNull(),
    expiresAt: timestamp('expires_at').notNull(),
    answeredAt: timestamp('answered_at'),
  },
  (t) => [
    uniqueIndex('saml_requests_request_uq').on(t.applicationId, t.requestId),
    index('saml_requests_expires_idx').on(t.expiresAt),
  ],
);

/**
 * SAML sessions (saml/sessions.ts): one per Gatehouse session and SP that got an assertion, with
 * the NameID and SessionIndex (`id`) it was given, so single logout finds who to tell and an SP's
 * LogoutRequest finds its Gatehouse session. `ended_at`: the SP was told (or told us); the row stays
 * for the logout in progress and goes with its Gatehouse session (retention, cascade).
 */
export const samlSessions = sqliteTable(
  'saml_sessions',
  {
    id: text('id').primaryKey(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    nameId: text('name_id').notNull(),
    nameIdFormat: text('name_id_format').$type<SamlNameIdFormat>().notNull(),
    createdAt: createdAt(),
    endedAt: timestamp('ended_at'),
  },
  (t) => [
    uniqueIndex('saml_sessions_session_app_uq').on(t.sessionId, t.applicationId),
    // An SP's LogoutRequest without a SessionIndex finds its sessions by NameID.
    index('saml_sessions_app_name_idx').on(t.applicationId, t.nameId),
    index('saml_sessions_person_idx').on(t.personId),
  ],
);

/**
 * Persistent NameIDs (spec saml.md: a stable opaque value per person and application, not the
 * person id): made on a person's first assertion to the SP, kept for as long as both exist.
 */
export const samlSubjects = sqliteTable(
  'saml_subjects',
  {
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    value: text('value').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.applicationId, t.personId] }),
    uniqueIndex('saml_subjects_value_uq').on(t.applicationId, t.value),
    index('saml_subjects_person_idx').on(t.personId),
  ],
);

/**
 * Single logouts in progress (saml/logout.ts): the front-channel LogoutRequests still to send, one
 * after another, to the SPs of an ended Gatehouse session, the one awaited (`awaiting`: its ID,
 * which the SP's LogoutResponse names), where the browser goes when done (the initiating SP's
 * LogoutResponse, or the OIDC end-session's or the account page's destination), and the deadline
 * (10 s after the start) past which the rest are skipped. Known by the SHA-256 of its handle.
 * Retention: an hour after the start.
 */
export const samlLogouts = sqliteTable(
  'saml_logouts',
  {
    handleHash: text('handle_hash').primaryKey(),
    sessionId: text('session_id').notNull(),
    /** saml_sessions ids still to tell, in order. */
    pending: text('pending', { mode: 'json' }).$type<string[]>().notNull(),
    awaiting: text('awaiting'),
    /** Where the browser goes when done: a LogoutResponse to the initiating SP, or a URL. */
    finish: text('finish', { mode: 'json' }).$type<SamlLogoutFinish>().notNull(),
    /** Whether every SP told so far answered Success. */
    complete: flag('complete').notNull(),
    startedAt: timestamp('started_at').notNull(),
    deadline: timestamp('deadline').notNull(),
  },
  (t) => [
    index('saml_logouts_started_idx').on(t.startedAt),
    // An SP's LogoutResponse names the request it answers (InResponseTo).
    index('saml_logouts_awaiting_idx').on(t.awaiting),
  ],
);

export type SamlLogoutFinish =
  /** A LogoutResponse to the SP whose LogoutRequest started it. */
  | { kind: 'sp'; applicationId: string; inResponseTo: string; relayState: string | null }
  /** A redirect: the OIDC end-session's destination, the account page. */
  | { kind: 'url'; url: string }
  /** The signed-out page, branded for the application (an SP without a single-logout endpoint to answer at, an end-session without a redirect). */
  | { kind: 'page'; applicationId: string | null };

// ---------------------------------------------------------------------------------------------
// Data lifecycle (server/data-lifecycle/)

/**
 * Big deletes in progress: the thing itself is gone from every read at once, its rows go in
 * bounded batches (data-lifecycle/purge.ts). A row here also keeps the id taken until the purge
 * ends, so nothing new inherits what is left of the old one. Resumed on start after a crash.
 */
export const purgeJobs = sqliteTable(
  'purge_jobs',
  {
    kind: text('kind').$type<'application' | 'sso_group' | 'membership' | 'person' | 'group'>().notNull(),
    target: text('target').notNull(),
    /** What the plan needs besides the id (e.g. the realm name of sessions to forget). */
    params: text('params', { mode: 'json' }).$type<Record<string, string>>().notNull(),
    actor: text('actor').notNull(),
    requestedAt: timestamp('requested_at').notNull(),
    /** Rows removed so far, per step. */
    removed: text('removed', { mode: 'json' }).$type<Record<string, number>>().notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.target] })],
);

/**
 * Row counts of tables that grow, kept by triggers (migration `row_counts`), so the overview and
 * `gatehouse status` never count a table.
 */
export const rowCounts = sqliteTable('row_counts', {
  name: text('name').primaryKey(),
  n: integer('n').notNull(),
});

// ---------------------------------------------------------------------------------------------
// Directory sources (spec directory-sources.md; server/directory-sources/): an LDAP directory or
// Active Directory whose people and groups Gatehouse mirrors, and whose passwords it checks by
// binding as the person.

export type DirectorySourceKind = 'ldap' | 'active_directory';
/** Which source attribute fills which field (spec directory-sources.md, "attributes"). */
export interface DirectoryAttributes {
  id: string;
  username: string;
  email: string;
  name: string;
  givenName: string;
  familyName: string;
  groupName: string;
  /** Group attributes naming members: DNs (`member`, `uniqueMember`) or usernames (`memberUid`). */
  members: string[];
  /** Active Directory: a group's people through the in-chain rule (1.2.840.113556.1.4.1941), nesting included. */
  nestedMembers: boolean;
}
export type DirectorySourceStatus = 'ok' | 'unreachable';
export type DirectoryRunState = 'running' | 'succeeded' | 'failed';
export interface DirectoryRunCounts {
  created: number;
  updated: number;
  disabled: number;
  enabled: number;
  skipped: number;
  conflicts: number;
}
export interface DirectoryConflict {
  dn: string;
  email: string | null;
  username: string | null;
}
export interface DirectorySkipped {
  dn: string;
  reason: string;
}

export const directorySources = sqliteTable(
  'directory_sources',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    kind: text('kind').$type<DirectorySourceKind>().notNull(),
    url: text('url').notNull(),
    startTls: flag('start_tls').notNull(),
    allowPlain: flag('allow_plain').notNull(),
    caCertificate: text('ca_certificate'),
    bindDn: text('bind_dn'),
    /** Sealed with the data directory's secret box (accounts/second-factor/secret-box.ts); never answered. */
    bindPasswordSealed: text('bind_password_sealed'),
    peopleBase: text('people_base').notNull(),
    peopleFilter: text('people_filter').notNull(),
    groupsBase: text('groups_base'),
    groupsFilter: text('groups_filter').notNull(),
    attributes: text('attributes', { mode: 'json' }).$type<DirectoryAttributes>().notNull(),
    disabledFilter: text('disabled_filter'),
    /** 5–1440 minutes between scheduled runs; null: manual only. */
    syncIntervalMinutes: integer('sync_interval_minutes'),
    applications: text('applications', { mode: 'json' }).$type<string[]>().notNull(),
    status: text('status').$type<DirectorySourceStatus>().notNull(),
    lastError: text('last_error'),
    lastSyncAt: timestamp('last_sync_at'),
    /** The last full run's end: scheduled runs read only changes in between, and a full run daily. */
    lastFullSyncAt: timestamp('last_full_sync_at'),
    /** The highest change mark the last run saw: `modifyTimestamp` (LDAP) or `uSNChanged` (Active Directory). */
    changeMark: text('change_mark'),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [index('directory_sources_created_idx').on(t.createdAt, t.id)],
);

/**
 * Which source entry is which person or group here: keyed by the entry's stable id (entryUUID,
 * objectGUID), with a digest of what was mapped from it, so an unchanged entry writes nothing.
 */
export const directoryEntries = sqliteTable(
  'directory_entries',
  {
    sourceId: text('source_id')
      .notNull()
      .references(() => directorySources.id, { onDelete: 'cascade' }),
    kind: text('kind').$type<'person' | 'group'>().notNull(),
    entryKey: text('entry_key').notNull(),
    /** The person's or group's id. */
    targetId: text('target_id').notNull(),
    digest: text('digest').notNull(),
    /** Disabled by the source (AD's userAccountControl bit 2, the disabled filter) or gone from it. */
    disabled: flag('disabled').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.sourceId, t.kind, t.entryKey] }), uniqueIndex('directory_entries_target_uq').on(t.kind, t.targetId)],
);

/** One sync run and what it did (kept 90 days: data-lifecycle/retention-rules.ts). */
export const directorySyncRuns = sqliteTable(
  'directory_sync_runs',
  {
    id: text('id').primaryKey(),
    sourceId: text('source_id')
      .notNull()
      .references(() => directorySources.id, { onDelete: 'cascade' }),
    state: text('state').$type<DirectoryRunState>().notNull(),
    /** Full (every entry read) or changes only. */
    full: flag('full').notNull(),
    trigger: text('trigger').$type<'manual' | 'scheduled'>().notNull(),
    counts: text('counts', { mode: 'json' }).$type<DirectoryRunCounts>().notNull(),
    /** The first 1,000 of each; the counts are complete. */
    conflicts: text('conflicts', { mode: 'json' }).$type<DirectoryConflict[]>().notNull(),
    skipped: text('skipped', { mode: 'json' }).$type<DirectorySkipped[]>().notNull(),
    error: text('error'),
    startedAt: timestamp('started_at').notNull(),
    finishedAt: timestamp('finished_at'),
    /** Renewed while the run is alive; a `running` run whose heartbeat stopped (a crash) is failed. */
    heartbeatAt: timestamp('heartbeat_at').notNull(),
  },
  (t) => [index('directory_sync_runs_source_idx').on(t.sourceId, t.startedAt), index('directory_sync_runs_started_idx').on(t.startedAt)],
);

// ---------------------------------------------------------------------------------------------
// Row types

export type Person = typeof people.$inferSelect;
export type LinkedAccount = typeof linkedAccounts.$inferSelect;
export type Session = typeof sessions.$inferSelect;
export type SsoGroup = typeof ssoGroups.$inferSelect;
export type Group = typeof groups.$inferSelect;
export type GroupMember = typeof groupMembers.$inferSelect;
export type Application = typeof applications.$inferSelect;
export type Membership = typeof memberships.$inferSelect;
export type Consent = typeof consents.$inferSelect;
export type Invitation = typeof invitations.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;
export type AppPassword = typeof appPasswords.$inferSelect;
export type SigningKey = typeof signingKeys.$inferSelect;
export type RefreshTokenFamily = typeof refreshTokenFamilies.$inferSelect;
export type RefreshToken = typeof refreshTokens.$inferSelect;
export type WebhookDelivery = typeof webhookDeliveries.$inferSelect;
export type AuditLogEntry = typeof auditLog.$inferSelect;
export type Passkey = typeof passkeys.$inferSelect;
export type TotpCredential = typeof totpCredentials.$inferSelect;

export type PurgeJob = typeof purgeJobs.$inferSelect;
export type Administrator = typeof administrators.$inferSelect;
export type DeviceAuthorization = typeof deviceAuthorizations.$inferSelect;
export type BackchannelLogout = typeof backchannelLogouts.$inferSelect;
export type ForwardAuthSession = typeof forwardAuthSessions.$inferSelect;
export type NetworkCertificate = typeof networkCertificates.$inferSelect;
export type RadiusSession = typeof radiusSessions.$inferSelect;
export type DirectorySource = typeof directorySources.$inferSelect;
export type DirectorySyncRun = typeof directorySyncRuns.$inferSelect;
export type SamlSigningKey = typeof samlSigningKeys.$inferSelect;
export type SamlRequest = typeof samlRequests.$inferSelect;
export type SamlSession = typeof samlSessions.$inferSelect;
export type SamlLogout = typeof samlLogouts.$inferSelect;
