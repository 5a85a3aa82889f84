/**
 * Back-off against password guessing (DESIGN §5), per e-mail address. Keyed by the address, not
 * by the person, so an address without an account is counted and locked exactly like one with an
 * account: the same answers, and while locked neither runs argon2 (DESIGN §4.8: wrong e-mail and
 * wrong password get the same answer). From the 5th consecutive failure the address is locked
 * for 30 s, doubling with every further failure up to 15 min; a lock refuses new password checks
 * only and never touches existing sessions. Guesses during a lock are neither counted nor extend
 * it. Stored in `sign_in_back_off` (survives restarts), keyed by the SHA-256 of the normalised
 * address; rows go on a right password and are swept once idle for a day, with a row cap.
 */
import { and, asc, count, eq, inArray, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import type { Db } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { signInBackOff, type Person } from '../db/schema.js';
import { recordAudit } from '../audit/record.js';
import { tooManyRequests } from '../http/problem.js';
import { sha256 } from '../util/crypto.js';
import { normalizeEmail } from './people.js';

export const LOCK_AFTER_FAILURES = 5;
const LOCK_BASE_MS = 30_000;
const LOCK_MAX_MS = 15 * 60_000;
/** A row whose last failure is this old (and whose lock is over) is forgotten. */
export const BACK_OFF_IDLE_MS = 24 * 60 * 60_000;
/** At most this many addresses are remembered; beyond it the longest idle go first. */
export const BACK_OFF_MAX_ROWS = 100_000;
const SWEEP_EVERY_MS = 60_000;

/** How long the address stays locked after its `failures`-th consecutive failure. */
export function lockDuration(failures: number): number {
  return Math.min(LOCK_BASE_MS * 2 ** (failures - LOCK_AFTER_FAILURES), LOCK_MAX_MS);
}

/** A password check claimed against the back-off: the count it made, and the lock it set. */
export interface PasswordCheck {
  failures: number;
  lockedUntil: Date | undefined;
}

const keyOf = (email: string) => sha256(normalizeEmail(email));

const lockedProblem = (lockedUntil: Date, now: Date) =>
  tooManyRequests((lockedUntil.getTime() - now.getTime()) / 1000, 'Too many failed sign-ins for this account; try again later.');

/**
 * Claims one password check for `email` before the password is verified (sign-in and password
 * change share the back-off): 429 `rate_limited` with `Retry-After` while the address is locked;
 * otherwise the check is counted as a failure up front, and the 5th and later lock the address
 * before their verification runs. Counting first is what keeps guesses sent all at once from
 * slipping past the lock while argon2 verifies them (the lock test and the count are one
 * conditional upsert). A right password then clears the count (`clearBackOff`).
 */
export function claimPasswordCheck(ctx: AppContext, email: string): PasswordCheck {
  const now = ctx.clock.now();
  if (sweepDue(ctx.db, now)) sweepBackOff(ctx.db, now);
  return backOffQueries(ctx.db).claim(keyOf(email), now);
}

/**
 * Every password check runs the claim, and every right password the clear: their statements are
 * prepared once per database handle (db/prepared.ts), the claim as one native transaction.
 * Placeholders in `where` and raw `set` SQL are bound as given (timestamps in milliseconds);
 * inserted values go through the columns' mapping (Dates).
 */
const backOffQueries = preparedPerDb((db) => {
  const p = sql.placeholder;
  const t = signInBackOff;
  const countFailure = db
    .insert(t)
    .values({ emailHash: p('emailHash'), failures: 1, lockedUntil: null, lastFailureAt: p('now') })
    .onConflictDoUpdate({
      target: t.emailHash,
      set: { failures: sql`${t.failures} + 1`, lastFailureAt: sql`excluded.last_failure_at` },
      setWhere: or(isNull(t.lockedUntil), lte(t.lockedUntil, p('nowMs'))),
    })
    .returning({ failures: t.failures })
    .prepare();
  const lockedUntil = db.select({ lockedUntil: t.lockedUntil }).from(t).where(eq(t.emailHash, p('emailHash'))).prepare();
  const lock = db.update(t).set({ lockedUntil: sql`${p('untilMs')}` }).where(eq(t.emailHash, p('emailHash'))).prepare();
  const clear = db.delete(t).where(eq(t.emailHash, p('emailHash'))).prepare();
  const claim = db.$client.transaction((emailHash: string, now: Date): PasswordCheck => {
    const row = countFailure.get({ emailHash, now, nowMs: now.getTime() });
    if (!row) throw lockedProblem(lockedUntil.get({ emailHash })?.lockedUntil ?? now, now);
    if (row.failures < LOCK_AFTER_FAILURES) return { failures: row.failures, lockedUntil: undefined };
    const until = new Date(now.getTime() + lockDuration(row.failures));
    lock.run({ emailHash, untilMs: until.getTime() });
    return { failures: row.failures, lockedUntil: until };
  });
  return { claim, clear };
});

/**
 * The claimed check failed: a lock it set on a person's address is audited (a right password
 * would have cleared it). Addresses without an account leave no audit entry.
 */
export function passwordCheckFailed(ctx: AppContext, person: Pick<Person, 'id'> | undefined, check: PasswordCheck): void {
  if (!person || !check.lockedUntil) return;
  recordAudit(ctx.db, ctx.clock.now(), {
    actor: 'system',
    action: 'security.sign_in_locked',
    target: person.id,
    details: { failedSignIns: check.failures, lockedUntil: check.lockedUntil.toISOString() },
  });
}

/** A right password (or a reset): the back-off of that address starts over (also inside a transaction on `db`). */
export function clearBackOff(db: Db, email: string): void {
  backOffQueries(db).clear.run({ emailHash: keyOf(email) });
}

const lastSweep = new WeakMap<Db, number>();

/** Sweeps run at most once a minute (per database), on the way into a password check. */
function sweepDue(db: Db, now: Date): boolean {
  const last = lastSweep.get(db);
  if (last !== undefined && now.getTime() >= last && now.getTime() - last < SWEEP_EVERY_MS) return false;
  lastSweep.set(db, now.getTime());
  return true;
}

/**
 * Keeps the table small without a worker: rows idle for a day whose lock is over are deleted, then
 * the longest idle beyond `maxRows` (an attacker spraying addresses can push a count out only
 * after that many fresher addresses, through the per-IP limits).
 */
export function sweepBackOff(db: Db, now: Date, maxRows = BACK_OFF_MAX_ROWS): void {
  const idleSince = new Date(now.getTime() - BACK_OFF_IDLE_MS);
  db.delete(signInBackOff)
    .where(and(lt(signInBackOff.lastFailureAt, idleSince), or(isNull(signInBackOff.lockedUntil), lte(signInBackOff.lockedUntil, now))))
    .run();
  const rows = db.select({ n: count() }).from(signInBackOff).get()?.n ?? 0;
  if (rows <= maxRows) return;
  const oldest = db
    .select({ emailHash: signInBackOff.emailHash })
    .from(signInBackOff)
    .orderBy(asc(signInBackOff.lastFailureAt))
    .limit(rows - maxRows);
  db.delete(signInBackOff).where(inArray(signInBackOff.emailHash, oldest)).run();
}
