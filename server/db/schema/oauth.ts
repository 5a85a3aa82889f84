/**
 * OAuth server state: signing keys, refresh-token families, device authorizations, revoked access tokens.
 */
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, timestamp } from './columns.js';
import type { SigningAlg, AuthMethod } from './types.js';
import { people } from './people.js';
import { applications, memberships } from './applications.js';
import { sessions } from './sessions.js';

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

export type SigningKey = typeof signingKeys.$inferSelect;
export type RefreshTokenFamily = typeof refreshTokenFamilies.$inferSelect;
export type RefreshToken = typeof refreshTokens.$inferSelect;
export type DeviceAuthorization = typeof deviceAuthorizations.$inferSelect;
