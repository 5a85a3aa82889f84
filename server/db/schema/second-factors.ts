/**
 * Second factors (spec second-factor.md). Secrets are encrypted with the key in
 * `<data>/second-factor.key` (accounts/second-factor/secret-box.ts), never stored in the clear.
 */
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, timestamp, flag } from './columns.js';
import type { AuthMethod } from './types.js';
import { people } from './people.js';

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

export type Passkey = typeof passkeys.$inferSelect;
export type TotpCredential = typeof totpCredentials.$inferSelect;
