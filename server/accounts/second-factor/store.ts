/**
 * Queries of the second-factor tables (db/schema.ts): a person's TOTP authenticator, passkeys and
 * recovery codes. Each look-up a request makes is by primary key or by `person_id` (indexed).
 * The writes that decide a race — a TOTP step used, a recovery code spent, a passkey counter
 * moved — are conditional updates, so of two concurrent uses exactly one succeeds.
 */
import { and, asc, count, eq, isNull, lt, max, sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import { preparedPerDb } from '../../db/prepared.js';
import { passkeys, people, recoveryCodes, totpCredentials, type Passkey, type Person, type TotpCredential } from '../../db/schema.js';
import { newId } from '../../util/ids.js';
import { exec, one, many } from '../../db/store.js';

const changed = (rowsChanged: number) => rowsChanged === 1;

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

export async function personOf(db: Db, personId: string): Promise<Person | undefined> {
  return await one(hot(db).person, { id: personId });
}

/** The sealed secret of the person's confirmed authenticator, if any (the second step's read). */
export async function confirmedTotpSecret(db: Db, personId: string): Promise<string | null | undefined> {
  return (await one(hot(db).totpSecret, { id: personId }))?.secret;
}

// --- TOTP --------------------------------------------------------------------------------------

export async function totpOf(tx: Tx, personId: string): Promise<TotpCredential | undefined> {
  return await one(tx.select().from(totpCredentials).where(eq(totpCredentials.personId, personId)));
}

/** Stores a secret waiting for its first code (replacing any earlier one that never got it). */
export async function savePendingTotp(tx: Tx, personId: string, sealed: string, now: Date): Promise<void> {
  await exec(tx.insert(totpCredentials)
    .values({ personId, pendingSecret: sealed, pendingCreatedAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: totpCredentials.personId, set: { pendingSecret: sealed, pendingCreatedAt: now, updatedAt: now } }));
}

/** The pending secret becomes the person's authenticator; `step` (its first code's) counts as used. */
export async function confirmPendingTotp(tx: Tx, personId: string, sealed: string, step: number, now: Date): Promise<void> {
  await exec(tx.update(totpCredentials)
    .set({ secret: sealed, confirmedAt: now, pendingSecret: null, pendingCreatedAt: null, lastUsedStep: step, updatedAt: now })
    .where(eq(totpCredentials.personId, personId)));
}

/** Records `step` as used when it is newer than every step used before; false for a replay. */
export async function claimTotpStep(db: Db, personId: string, step: number): Promise<boolean> {
  return changed(await exec(hot(db).claimStep, { id: personId, step }));
}

/** Removes the authenticator (and any enrolment in progress); true when there was a confirmed one. */
export async function deleteTotp(tx: Tx, personId: string): Promise<boolean> {
  const row = await totpOf(tx, personId);
  await exec(tx.delete(totpCredentials).where(eq(totpCredentials.personId, personId)));
  return Boolean(row?.secret);
}

// --- Passkeys ----------------------------------------------------------------------------------

export async function passkeysOf(tx: Tx, personId: string): Promise<Passkey[]> {
  return await many(tx.select().from(passkeys).where(eq(passkeys.personId, personId)).orderBy(asc(passkeys.createdAt), asc(passkeys.id)));
}

export async function passkeyByCredentialId(tx: Tx, credentialId: string): Promise<Passkey | undefined> {
  return await one(tx.select().from(passkeys).where(eq(passkeys.credentialId, credentialId)));
}

export async function passkeyOf(tx: Tx, personId: string, id: string): Promise<Passkey | undefined> {
  return await one(tx.select().from(passkeys).where(and(eq(passkeys.id, id), eq(passkeys.personId, personId))));
}

export type NewPasskey = Omit<Passkey, 'id' | 'createdAt' | 'lastUsedAt'>;

export async function insertPasskey(tx: Tx, passkey: NewPasskey, now: Date): Promise<Passkey> {
  return await one(tx.insert(passkeys).values({ ...passkey, id: newId('pky'), createdAt: now }).returning());
}

export async function renamePasskey(tx: Tx, id: string, name: string): Promise<Passkey | undefined> {
  return await one(tx.update(passkeys).set({ name }).where(eq(passkeys.id, id)).returning());
}

export async function deletePasskey(tx: Tx, id: string): Promise<void> {
  await exec(tx.delete(passkeys).where(eq(passkeys.id, id)));
}

/**
 * After a verified assertion: the new counter and backup state, only if the counter is still the
 * one the verification checked against (a concurrent use of a cloned key loses).
 */
export async function recordPasskeyUse(tx: Tx, passkey: Passkey, use: { counter: number; backedUp: boolean; now: Date }): Promise<boolean> {
  return changed(
    await exec(tx.update(passkeys)
      .set({ counter: use.counter, backedUp: use.backedUp, lastUsedAt: use.now })
      .where(and(eq(passkeys.id, passkey.id), eq(passkeys.counter, passkey.counter)))),
  );
}

// --- Recovery codes ----------------------------------------------------------------------------

/** Replaces the person's codes with a new set (hashes only). */
export async function replaceRecoveryCodes(tx: Tx, personId: string, hashes: string[], now: Date): Promise<void> {
  await exec(tx.delete(recoveryCodes).where(eq(recoveryCodes.personId, personId)));
  for (const codeHash of hashes) await exec(tx.insert(recoveryCodes).values({ id: newId('rco'), personId, codeHash, createdAt: now }));
}

export async function deleteRecoveryCodes(tx: Tx, personId: string): Promise<number> {
  const n = await remainingRecoveryCodes(tx, personId);
  await exec(tx.delete(recoveryCodes).where(eq(recoveryCodes.personId, personId)));
  return n;
}

/** Spends the code with this hash, if the person has it unused; false otherwise. */
export async function spendRecoveryCode(tx: Tx, personId: string, codeHash: string, now: Date): Promise<boolean> {
  return changed(
    await exec(tx.update(recoveryCodes)
      .set({ usedAt: now })
      .where(and(eq(recoveryCodes.personId, personId), eq(recoveryCodes.codeHash, codeHash), isNull(recoveryCodes.usedAt)))),
  );
}

export async function remainingRecoveryCodes(tx: Tx, personId: string): Promise<number> {
  return (await one(tx.select({ n: count() }).from(recoveryCodes).where(and(eq(recoveryCodes.personId, personId), isNull(recoveryCodes.usedAt)))))?.n ?? 0;
}

/** When the current set was made (null without one). */
export async function recoveryCodesCreatedAt(tx: Tx, personId: string): Promise<Date | null> {
  const at = (await one(tx.select({ at: max(recoveryCodes.createdAt) }).from(recoveryCodes).where(eq(recoveryCodes.personId, personId))))?.at;
  return at === null || at === undefined ? null : new Date(at as unknown as number);
}
