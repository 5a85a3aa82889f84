/**
 * Browser sessions, the realms and clients each has signed in to, and authorization codes.
 */
import { index, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, timestamp } from './columns.js';
import type { AuthMethod } from './types.js';
import { people } from './people.js';
import { applications } from './applications.js';

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
    /** A device sign-in's name for it; '' (every browser sign-in since 0484): described from `userAgent` when read. */
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

export type Session = typeof sessions.$inferSelect;
