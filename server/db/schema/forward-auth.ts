/**
 * Forward auth (spec forward-auth.md; server/forward-auth/): protected hosts, site sessions and
 * the hand-over's codes.
 */
import { index, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, timestamp } from './columns.js';
import { people } from './people.js';
import { applications } from './applications.js';
import { sessions } from './sessions.js';

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

export type ForwardAuthSession = typeof forwardAuthSessions.$inferSelect;
