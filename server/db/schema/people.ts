/**
 * People and their sign-in methods: the person, the per-address back-off, linked accounts
 * (password, external providers), the e-mailed one-time links and in-flight provider sign-ins.
 */
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, timestamp, flag } from './columns.js';
import type { PersonStatus, ExternalIdentity } from './types.js';

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

export type Person = typeof people.$inferSelect;
export type LinkedAccount = typeof linkedAccounts.$inferSelect;
