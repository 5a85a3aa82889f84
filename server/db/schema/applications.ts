/**
 * Applications and SSO groups, and what hangs off an application: its logo, memberships,
 * consents, invitations and API keys.
 */
import { sql } from 'drizzle-orm';
import { blob, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, timestamp, flag } from './columns.js';
import type { ClientType, MemberStatus, MemberRole, RadiusSettings, LdapSettings, AppliedPreset, ConsentPolicy, SigningAlg, GrantType, UnknownScopes, CustomClaim, AuthPolicy, Profile, ForwardAuthSettings, SamlSettings } from './types.js';
import { people } from './people.js';

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
    /**
     * The group rule (applications/group-rule.ts): directory group ids of which a person must be in one
     * to use the application by any protocol (OIDC, forward auth, LDAP, RADIUS, SAML); null: no rule.
     * Migrated from forward auth's own `groups` (decision 0450).
     */
    allowedGroups: text('allowed_groups', { mode: 'json' }).$type<string[]>(),
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
    // An AuthnRequest's Issuer finds its SP (saml/queries.ts), and keeps an entity ID to one application.
    uniqueIndex('applications_saml_entity_uq').on(t.samlEntityId),
    index('applications_created_idx').on(t.createdAt, t.id),
    index('applications_group_idx').on(t.ssoGroupId),
    // Directory events (group.created, …) go to every application with a webhook (decision 0101).
    index('applications_webhook_idx').on(t.webhookUrl),
  ],
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
/**
 * The owner columns of a credential a person holds for one application through their membership
 * (app passwords, network certificates): gone with the person, the application or the membership.
 * A function, because drizzle column builders belong to one table each.
 */
export const membershipCredentialColumns = () => ({
  personId: text('person_id')
    .notNull()
    .references(() => people.id, { onDelete: 'cascade' }),
  applicationId: text('application_id')
    .notNull()
    .references(() => applications.id, { onDelete: 'cascade' }),
  membershipId: text('membership_id')
    .notNull()
    .references(() => memberships.id, { onDelete: 'cascade' }),
});

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

export type SsoGroup = typeof ssoGroups.$inferSelect;
export type Application = typeof applications.$inferSelect;
export type Membership = typeof memberships.$inferSelect;
export type Consent = typeof consents.$inferSelect;
export type Invitation = typeof invitations.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;
