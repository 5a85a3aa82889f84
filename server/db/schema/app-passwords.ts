/**
 * App passwords (server/app-passwords/): per-application passwords for clients that cannot sign in.
 */
import { index, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, timestamp } from './columns.js';
import { membershipCredentialColumns } from './applications.js';

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
    ...membershipCredentialColumns(),
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

export type AppPassword = typeof appPasswords.$inferSelect;
