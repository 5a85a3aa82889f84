/**
 * The SAML 2.0 identity provider (spec saml.md; server/saml/): its signing keys, AuthnRequests,
 * SAML sessions, persistent NameIDs and single logouts in progress.
 */
import { index, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, flag, timestamp } from './columns.js';
import type { SamlNameIdFormat } from './types.js';
import { people } from './people.js';
import { applications } from './applications.js';
import { sessions } from './sessions.js';


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
 * AuthnRequests and IdP-initiated starts (saml/sso.ts, stored by saml/queries.ts): each request ID an SP sent, kept until
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
 * SAML sessions (saml/sso.ts makes them, saml/logout.ts ends them; saml/queries.ts): one per Gatehouse session and SP that got an assertion, with
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

export type SamlSigningKey = typeof samlSigningKeys.$inferSelect;
export type SamlRequest = typeof samlRequests.$inferSelect;
export type SamlSession = typeof samlSessions.$inferSelect;
export type SamlLogout = typeof samlLogouts.$inferSelect;
