/**
 * Back-off against password guessing (DESIGN §5), per e-mail address. Keyed by the address, not
 * by the person, so an address without an account is counted and locked exactly like one with an
 * account: the same answers, and while locked neither runs argon2 (DESIGN §4.8: wrong e-mail and
 * wrong password get the same answer). From the 5th consecutive failure the address is locked
 * for 30 s, doubling with every further failure up to 15 min; a lock refuses new password checks
 * only and never touches existing sessions. Guesses during a lock are neither counted nor extend
 * it. Stored in `sign_in_back_off` (survives restarts), keyed by the SHA-256 of the normalised
 * address; rows go on a right password and are swept once idle for a day, with a row cap.
 *
 * The lock cannot be turned against the owner (issue 22, OWASP "device cookies"): a browser that
 * proves it signed in to this address before, with a valid device cookie (device-cookie.ts) or a
 * live session of its owner, is a trusted client. Its checks are counted under its own key with
 * the same schedule, so strangers locking the address do not lock it out; once its own key is
 * locked it is a stranger again. A lock of the address itself is audited and, with mail
 * configured, told to its owner by e-mail (at most once a day).
 */
import type { FastifyBaseLogger } from 'fastify';
import { and, asc, count, eq, inArray, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import type { Db } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { signInBackOff, type Person } from '../db/schema.js';
import { recordAudit } from '../audit/record.js';
import { Problem, tooManyRequests } from '../http/problem.js';
import { sha256 } from '../util/crypto.js';
import { guessingMessage } from '../mail/account-messages.js';
import { sendInBackground } from './email-verification.js';
import { addressKey, trustedNonce } from './device-cookie.js';
import { normalizeEmail } from './people.js';
import { liveSession } from './session.js';
import { exec, one, transaction } from '../db/store.js';

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
  /** The counter claimed: the address's, or a trusted browser's own. */
  key: string;
  trusted: boolean;
}

/** What a browser shows of itself to be trusted with an address (OWASP device cookies). */
export interface BrowserProof {
  /** The raw device cookie it sent. */
  deviceCookie?: string | undefined;
  /** Its session cookie's token: trusted when that session is live and the address's owner's. */
  sessionToken?: string | undefined;
  /** A live session of the address's owner that the caller has already resolved (self-service). */
  ownSessionId?: string | undefined;
}

/** Notifications of guessing go out at most this often per address. */
export const GUESSING_NOTICE_EVERY_MS = 24 * 60 * 60_000;

/** 429 while the address is locked, saying how long (`Retry-After`, and `lockedUntil` for the pages' count-down). */
export class SignInLocked extends Problem {
  constructor(readonly lockedUntil: Date, now: Date) {
    const seconds = Math.max(1, Math.ceil((lockedUntil.getTime() - now.getTime()) / 1000));
    const locked = tooManyRequests(seconds);
    super(429, locked.code, `Too many failed sign-ins for this account; try again in ${seconds} second${seconds === 1 ? '' : 's'}.`, undefined, locked.headers);
  }
}

const lockedProblem = (lockedUntil: Date, now: Date): Problem => new SignInLocked(lockedUntil, now);

/**
 * Claims one password check for `email` before the password is verified (sign-in and password
 * change share the back-off): 429 `rate_limited` with `Retry-After` while the address is locked;
 * otherwise the check is counted as a failure up front, and the 5th and later lock the address
 * before their verification runs. Counting first is what keeps guesses sent all at once from
 * slipping past the lock while argon2 verifies them (the lock test and the count are one
 * conditional upsert). A right password then clears the count (`passwordCheckPassed`).
 * A trusted browser (`proof`) is counted under its own key instead, while that key is not locked.
 */
export async function claimPasswordCheck(ctx: AppContext, email: string, proof: BrowserProof = {}): Promise<PasswordCheck> {
  const now = ctx.clock.now();
  if (sweepDue(ctx.db, now)) await sweepBackOff(ctx.db, now);
  const queries = backOffQueries(ctx.db);
  const browser = await trustedBrowserKey(ctx.db, email, proof, now);
  if (browser) {
    const claimed = await queries.claim(browser, now);
    if (!('lockedAt' in claimed)) return { ...claimed, key: browser, trusted: true };
  }
  const address = addressKey(email);
  const claimed = await queries.claim(address, now);
  if ('lockedAt' in claimed) throw lockedProblem(claimed.lockedAt, now);
  return { ...claimed, key: address, trusted: false };
}

/** The back-off key of a browser that proves it may be trusted with `email`, or undefined. */
async function trustedBrowserKey(db: Db, email: string, proof: BrowserProof, now: Date): Promise<string | undefined> {
  const nonce = await trustedNonce(db, proof.deviceCookie, addressKey(email));
  if (nonce) return sha256(`device.${nonce}`);
  if (proof.ownSessionId) return sha256(`session.${proof.ownSessionId}`);
  if (proof.sessionToken && proof.sessionToken.length <= 200) {
    const live = await liveSession(db, proof.sessionToken, now);
    if (live && normalizeEmail(live.person.email) === normalizeEmail(email)) return sha256(`session.${live.session.id}`);
  }
  return undefined;
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
  const unclaim = db
    .update(t)
    .set({ failures: sql`case when ${t.failures} > 0 then ${t.failures} - 1 else 0 end`, lockedUntil: sql`case when ${t.failures} - 1 < ${p('lock')} then null else ${t.lockedUntil} end` })
    .where(eq(t.emailHash, p('emailHash')))
    .prepare();
  const notified = db
    .update(t)
    .set({ notifiedAt: sql`${p('nowMs')}` })
    .where(and(eq(t.emailHash, p('emailHash')), or(isNull(t.notifiedAt), lte(t.notifiedAt, p('sinceMs')))))
    .prepare();
  // The upsert counts atomically (a conditional update under PostgreSQL's row lock); the lock it
  // may set after is the same for whichever concurrent claim sets it.
  const claim = (emailHash: string, now: Date): Promise<Omit<PasswordCheck, 'key' | 'trusted'> | { lockedAt: Date }> =>
    transaction(db, async () => {
      const row = await one(countFailure, { emailHash, now, nowMs: now.getTime() });
      if (!row) return { lockedAt: (await one(lockedUntil, { emailHash }))?.lockedUntil ?? now };
      if (row.failures < LOCK_AFTER_FAILURES) return { failures: row.failures, lockedUntil: undefined };
      const until = new Date(now.getTime() + lockDuration(row.failures));
      await exec(lock, { emailHash, untilMs: until.getTime() });
      return { failures: row.failures, lockedUntil: until };
    }, { isolation: 'read committed' });
  return { claim, clear, notified, unclaim };
});

/**
 * The claimed check failed: a lock it set on a person's address is audited (a right password
 * would have cleared it) and told to the person by e-mail when mail is configured, at most once a
 * day. Addresses without an account leave no trace; a trusted browser's own lock neither.
 */
export async function passwordCheckFailed(
  ctx: AppContext,
  person: Pick<Person, 'id' | 'email'> | undefined,
  check: PasswordCheck,
  log?: Pick<FastifyBaseLogger, 'warn'>,
): Promise<void> {
  if (!person || !check.lockedUntil || check.trusted) return;
  const now = ctx.clock.now();
  await recordAudit(ctx.db, now, {
    actor: 'system',
    action: 'security.sign_in_locked',
    target: person.id,
    details: { failedSignIns: check.failures, lockedUntil: check.lockedUntil.toISOString() },
  });
  const due = await exec(backOffQueries(ctx.db).notified, { emailHash: check.key, nowMs: now.getTime(), sinceMs: now.getTime() - GUESSING_NOTICE_EVERY_MS });
  if (due === 1) sendInBackground(ctx, guessingMessage(person.email, check.failures, now, ctx.config.locale), log ?? { warn: () => {} }, 'guessing notice');
}

/** A right password: the counter it was claimed on (the address's, or the trusted browser's) starts over. */
export async function passwordCheckPassed(db: Db, check: PasswordCheck): Promise<void> {
  await exec(backOffQueries(db).clear, { emailHash: check.key });
}

/**
 * The claimed check could not be made (a directory source did not answer): the claim is taken
 * back, so an outage of the source locks nobody out. A lock the claim set goes with it.
 */
export async function passwordCheckUncounted(db: Db, check: PasswordCheck): Promise<void> {
  await exec(backOffQueries(db).unclaim, { emailHash: check.key, lock: LOCK_AFTER_FAILURES });
}

/** A password reset or change: the back-off of that address starts over (also inside a transaction on `db`). */
export async function clearBackOff(db: Db, email: string): Promise<void> {
  await exec(backOffQueries(db).clear, { emailHash: addressKey(email) });
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
export async function sweepBackOff(db: Db, now: Date, maxRows = BACK_OFF_MAX_ROWS): Promise<void> {
  const idleSince = new Date(now.getTime() - BACK_OFF_IDLE_MS);
  await exec(db.delete(signInBackOff)
    .where(and(lt(signInBackOff.lastFailureAt, idleSince), or(isNull(signInBackOff.lockedUntil), lte(signInBackOff.lockedUntil, now)))));
  const rows = (await one(db.select({ n: count() }).from(signInBackOff)))?.n ?? 0;
  if (rows <= maxRows) return;
  const oldest = db
    .select({ emailHash: signInBackOff.emailHash })
    .from(signInBackOff)
    .orderBy(asc(signInBackOff.lastFailureAt))
    .limit(rows - maxRows);
  await exec(db.delete(signInBackOff).where(inArray(signInBackOff.emailHash, oldest)));
}
