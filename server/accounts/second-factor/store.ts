/**
 * Queries of the second-factor tables (db/schema.ts): a person's TOTP authenticator, passkeys and
 * recovery codes. Each look-up a request makes is by primary key or by `person_id` (indexed).
 * The writes that decide a race — a TOTP step used, a recovery code spent, a passkey counter
 * moved — are conditional updates, so of two concurrent uses exactly one succeeds.
 */
import { and, asc, count, eq, isNull, lt, max, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { preparedPerDb } from '../../db/prepared.js';
import type { Tx } from '../../audit/record.js';
import { passkeys, people, recoveryCodes, totpCredentials, type Passkey, type Person, type TotpCredential } from '../../db/schema.js';
import { newId } from '../../util/ids.js';

const changed = (result: unknown) => (result as { changes: number }).changes === 1;

/**
 * The second step's look-ups, prepared once per database handle (db/prepared.ts): every
 * password + TOTP sign-in runs them, and a one-off drizzle query costs far more than running it.
 */
const hot = preparedPerDb((db: Db) => {
  const p = sql.placeholder;
  return {
    person: db.select().from(people).where(eq(people.id, p('id'))).prepare(),
    totpSecret: db.select({ secret: totpCredentials.secret }).from(totpCredentials).where(eq(totpCredentials.personId, p('id'))).prepare(),
    claimStep: db
      .update(totpCredentials)
      .set({ lastUsedStep: sql`${p('step')}` })
      .where(and(eq(totpCredentials.personId, p('id')), lt(totpCredentials.lastUsedStep, p('step'))))
      .prepare(),
  };
});

export function personOf(db: Db, personId: string): Person | undefined {
  return hot(db).person.get({ id: personId });
}

/** The sealed secret of the person's confirmed authenticator, if any (the second step's read). */
export function confirmedTotpSecret(db: Db, personId: string): string | null | undefined {
  return hot(db).totpSecret.get({ id: personId })?.secret;
}

// --- TOTP --------------------------------------------------------------------------------------

export function totpOf(tx: Tx, personId: string): TotpCredential | undefined {
  return tx.select().from(totpCredentials).where(eq(totpCredentials.personId, personId)).get();
}

/** Stores a secret waiting for its first code (replacing any earlier one that never got it). */
export function savePendingTotp(tx: Tx, personId: string, sealed: string, now: Date): void {
  tx.insert(totpCredentials)
    .values({ personId, pendingSecret: sealed, pendingCreatedAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: totpCredentials.personId, set: { pendingSecret: sealed, pendingCreatedAt: now, updatedAt: now } })
    .run();
}

/** The pending secret becomes the person's authenticator; `step` (its first code's) counts as used. */
export function confirmPendingTotp(tx: Tx, personId: string, sealed: string, step: number, now: Date): void {
  tx.update(totpCredentials)
    .set({ secret: sealed, confirmedAt: now, pendingSecret: null, pendingCreatedAt: null, lastUsedStep: step, updatedAt: now })
    .where(eq(totpCredentials.personId, personId))
    .run();
}

/** Records `step` as used when it is newer than every step used before; false for a replay. */
export function claimTotpStep(db: Db, personId: string, step: number): boolean {
  return changed(hot(db).claimStep.run({ id: personId, step }));
}

/** Removes the authenticator (and any enrolment in progress); true when there was a confirmed one. */
export function deleteTotp(tx: Tx, personId: string): boolean {
  const row = totpOf(tx, personId);
  tx.delete(totpCredentials).where(eq(totpCredentials.personId, personId)).run();
  return Boolean(row?.secret);
}

// --- Passkeys ----------------------------------------------------------------------------------

export function passkeysOf(tx: Tx, personId: string): Passkey[] {
  return tx.select().from(passkeys).where(eq(passkeys.personId, personId)).orderBy(asc(passkeys.createdAt), asc(passkeys.id)).all();
}

export function passkeyByCredentialId(tx: Tx, credentialId: string): Passkey | undefined {
  return tx.select().from(passkeys).where(eq(passkeys.credentialId, credentialId)).get();
}

export function passkeyOf(tx: Tx, personId: string, id: string): Passkey | undefined {
  return tx.select().from(passkeys).where(and(eq(passkeys.id, id), eq(passkeys.personId, personId))).get();
}

export type NewPasskey = Omit<Passkey, 'id' | 'createdAt' | 'lastUsedAt'>;

export function insertPasskey(tx: Tx, passkey: NewPasskey, now: Date): Passkey {
  return tx.insert(passkeys).values({ ...passkey, id: newId('pky'), createdAt: now }).returning().get();
}

export function renamePasskey(tx: Tx, id: string, name: string): Passkey | undefined {
  return tx.update(passkeys).set({ name }).where(eq(passkeys.id, id)).returning().get();
}

export function deletePasskey(tx: Tx, id: string): void {
  tx.delete(passkeys).where(eq(passkeys.id, id)).run();
}

/**
 * After a verified assertion: the new counter and backup state, only if the counter is still the
 * one the verification checked against (a concurrent use of a cloned key loses).
 */
export function recordPasskeyUse(tx: Tx, passkey: Passkey, use: { counter: number; backedUp: boolean; now: Date }): boolean {
  return changed(
    tx.update(passkeys)
      .set({ counter: use.counter, backedUp: use.backedUp, lastUsedAt: use.now })
      .where(and(eq(passkeys.id, passkey.id), eq(passkeys.counter, passkey.counter)))
      .run(),
  );
}

// --- Recovery codes ----------------------------------------------------------------------------

/** Replaces the person's codes with a new set (hashes only). */
export function replaceRecoveryCodes(tx: Tx, personId: string, hashes: string[], now: Date): void {
  tx.delete(recoveryCodes).where(eq(recoveryCodes.personId, personId)).run();
  for (const codeHash of hashes) tx.insert(recoveryCodes).values({ id: newId('rco'), personId, codeHash, createdAt: now }).run();
}

export function deleteRecoveryCodes(tx: Tx, personId: string): number {
  const n = remainingRecoveryCodes(tx, personId);
  tx.delete(recoveryCodes).where(eq(recoveryCodes.personId, personId)).run();
  return n;
}

/** Spends the code with this hash, if the person has it unused; false otherwise. */
export function spendRecoveryCode(tx: Tx, personId: string, codeHash: string, now: Date): boolean {
  return changed(
    tx.update(recoveryCodes)
      .set({ usedAt: now })
      .where(and(eq(recoveryCodes.personId, personId), eq(recoveryCodes.codeHash, codeHash), isNull(recoveryCodes.usedAt)))
      .run(),
  );
}

export function remainingRecoveryCodes(tx: Tx, personId: string): number {
  return tx.select({ n: count() }).from(recoveryCodes).where(and(eq(recoveryCodes.personId, personId), isNull(recoveryCodes.usedAt))).get()?.n ?? 0;
}

/** When the current set was made (null without one). */
export function recoveryCodesCreatedAt(tx: Tx, personId: string): Date | null {
  const at = tx.select({ at: max(recoveryCodes.createdAt) }).from(recoveryCodes).where(eq(recoveryCodes.personId, personId)).get()?.at;
  return at === null || at === undefined ? null : new Date(at as unknown as number);
}
