/**
 * Authorization codes in PostgreSQL mode (issue 26): the same codes as code.ts's memory store
 * (random 256-bit, known by their SHA-256, valid 60 s, remembered 10 minutes for replay
 * detection), kept in the `authorization_codes` table, because the exchange may reach another
 * instance than the one that issued the code.
 *
 * Single use across instances: the exchange spends the code with ONE conditional update
 * (`spent_at IS NULL`, returning the row), so of concurrent exchanges on any instances exactly
 * one gets the row; the others find it spent (a replay, which revokes the family its exchange
 * started once that is recorded). Never read-then-write.
 *
 * Retention: rows older than REMEMBER_MS are worthless (an unknown code and a forgotten one are
 * answered alike); the sweeper deletes them by the `issued_at` index (data-lifecycle/retention-rules.ts,
 * "authorization codes").
 */
import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { authorizationCodes } from '../../db/schema.js';
import { preparedPerDb } from '../../db/prepared.js';
import { exec, one } from '../../db/store.js';
import { randomToken, sha256 } from '../../util/crypto.js';
import { CODE_TTL_MS, REMEMBER_MS, type IssuedCode, type NewCode } from './code.js';

const statements = preparedPerDb((db) => {
  const c = authorizationCodes;
  const p = sql.placeholder;
  return {
    spend: db
      .update(c)
      .set({ spentAt: sql`${p('now')}` })
      .where(and(eq(c.codeHash, p('hash')), eq(c.applicationId, p('applicationId')), isNull(c.spentAt), gt(c.issuedAt, p('rememberedSince'))))
      .returning()
      .prepare(),
    find: db.select().from(c).where(and(eq(c.codeHash, p('hash')), gt(c.issuedAt, p('rememberedSince')))).prepare(),
  };
});

/** Stores a new code and returns it: the only time it exists in the clear. */
export async function issueStoredCode(db: Db, input: NewCode, now: Date): Promise<string> {
  const code = randomToken();
  const issuedAt = now.getTime();
  await exec(db.insert(authorizationCodes).values({
    ...input, codeHash: sha256(code), issuedAt: now, expiresAt: new Date(issuedAt + CODE_TTL_MS),
  }));
  return code;
}

type Row = typeof authorizationCodes.$inferSelect;

const asIssued = (row: Row): IssuedCode => ({
  applicationId: row.applicationId, personId: row.personId, membershipId: row.membershipId, sessionId: row.sessionId,
  redirectUri: row.redirectUri, scope: row.scope, resource: row.resource, codeChallenge: row.codeChallenge, nonce: row.nonce,
  authTime: row.authTime, issuedAt: row.issuedAt.getTime(), expiresAt: row.expiresAt.getTime(), spent: row.spentAt !== null,
  ...(row.issuedFamilyId ? { issuedFamilyId: row.issuedFamilyId } : {}),
});

/**
 * Spends the code presented by `applicationId` (expiry is the caller's check): `spent: false` in
 * the answer means this call spent it; otherwise it was spent before (a replay). Undefined for an
 * unknown or forgotten code, or another client's.
 */
export async function spendStoredCode(db: Db, code: string, applicationId: string, now: Date): Promise<IssuedCode | undefined> {
  const hash = sha256(code);
  const rememberedSince = new Date(now.getTime() - REMEMBER_MS);
  const spent = await one(statements(db).spend, { hash, applicationId, now, rememberedSince });
  if (spent) return { ...asIssued(spent), spent: false };
  const row = await one(statements(db).find, { hash, rememberedSince });
  return row && row.applicationId === applicationId ? asIssued(row) : undefined;
}

/** Records the refresh-token family a code's exchange started (also inside its transaction). */
export async function noteCodeFamily(db: Db, code: string, familyId: string): Promise<void> {
  await exec(db.update(authorizationCodes).set({ issuedFamilyId: familyId }).where(eq(authorizationCodes.codeHash, sha256(code))));
}
