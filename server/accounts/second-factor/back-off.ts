/**
 * Back-off against second-factor guessing per person, across pending sign-ins (a pending sign-in
 * itself is void after 5 failures, pending.ts). From the 5th failure in a row the person's second
 * step is locked for 30 s, doubling per further failure up to 15 min (the password back-off's
 * curve, accounts/sign-in-back-off.ts); while locked, every second step answers 429
 * `rate_limited` with `Retry-After` without looking at the code. A success clears it. Rows live in
 * `second_factor_back_off` (survive restarts); rows idle for a day whose lock is over go by the
 * retention sweeper's rule (data-lifecycle/retention-rules.ts).
 */
import { eq, sql } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import type { Db } from '../../db/client.js';
import { preparedPerDb } from '../../db/prepared.js';
import { secondFactorBackOff } from '../../db/schema.js';
import { tooManyRequests } from '../../http/problem.js';
import { LOCK_AFTER_FAILURES, lockDuration } from '../sign-in-back-off.js';


export const secondStepLocked = (retryAfterSeconds: number) =>
  tooManyRequests(retryAfterSeconds, 'Too many wrong codes; wait a little, then sign in again.');

/** Read on every second step: prepared once (db/prepared.ts). */
const rowQuery = preparedPerDb((db: Db) =>
  db.select().from(secondFactorBackOff).where(eq(secondFactorBackOff.personId, sql.placeholder('id'))).prepare(),
);

/** 429 while the person's second step is locked; whether the person has failures counted (to clear on success). */
export function checkSecondStepLock(ctx: AppContext, personId: string): boolean {
  const row = rowQuery(ctx.db).get({ id: personId });
  const now = ctx.clock.now().getTime();
  if (row?.lockedUntil && row.lockedUntil.getTime() > now) throw secondStepLocked((row.lockedUntil.getTime() - now) / 1000);
  return row !== undefined;
}

/** Counts a failed second step; returns the lock it set (epoch ms), if any. */
export function secondStepFailed(ctx: AppContext, personId: string): number | undefined {
  const now = ctx.clock.now();
  const row = ctx.db
    .insert(secondFactorBackOff)
    .values({ personId, failures: 1, lockedUntil: null, lastFailureAt: now })
    .onConflictDoUpdate({ target: secondFactorBackOff.personId, set: { failures: sql`${secondFactorBackOff.failures} + 1`, lastFailureAt: now } })
    .returning({ failures: secondFactorBackOff.failures })
    .get();
  if (row.failures < LOCK_AFTER_FAILURES) return undefined;
  const until = now.getTime() + lockDuration(row.failures);
  ctx.db.update(secondFactorBackOff).set({ lockedUntil: new Date(until) }).where(eq(secondFactorBackOff.personId, personId)).run();
  return until;
}

/** The lock in force for the person (epoch ms), if any. */
export function secondStepLockedUntil(ctx: AppContext, personId: string): number | undefined {
  const at = rowQuery(ctx.db).get({ id: personId })?.lockedUntil;
  return at && at.getTime() > ctx.clock.now().getTime() ? at.getTime() : undefined;
}

export function clearSecondStepBackOff(db: Db, personId: string): void {
  db.delete(secondFactorBackOff).where(eq(secondFactorBackOff.personId, personId)).run();
}
