/**
 * E-mail and password sign-in (DESIGN §4.8, §5). Wrong e-mail and wrong password get the same
 * answer in about the same time. Per-account back-off: from the 5th consecutive failure the
 * account is locked for 30 s, doubling with every further failure up to 15 min; a lock refuses
 * new sign-ins only and never touches existing sessions.
 */
import { and, eq, isNull, lte, or, sql } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { memberships, people, type Application, type Person } from '../db/schema.js';
import type { Config } from '../config.js';
import type { Tx } from '../audit/record.js';
import { recordAudit } from '../audit/record.js';
import { Problem, tooManyRequests } from '../http/problem.js';
import { findMembership, membershipEventData } from '../members/create.js';
import { recordEvent } from '../webhooks/outbox.js';
import { verifyPassword } from './passwords.js';
import { applicationForEmailSignIn, findPersonByEmail, startSession, type ClientInfo } from './people.js';

export const LOCK_AFTER_FAILURES = 5;
const LOCK_BASE_MS = 30_000;
const LOCK_MAX_MS = 15 * 60_000;

export interface SignInInput {
  email: string;
  password: string;
  applicationId?: string | undefined;
}

export interface SignedIn {
  person: Person;
  sessionId: string;
  /** Set when a new session was created and its cookie must be sent. */
  token: string | undefined;
}

export const invalidCredentials = () =>
  new Problem(401, 'invalid_credentials', 'The e-mail address or password is not correct.');

/** How long the account stays locked after its `failures`-th consecutive failure. */
export function lockDuration(failures: number): number {
  return Math.min(LOCK_BASE_MS * 2 ** (failures - LOCK_AFTER_FAILURES), LOCK_MAX_MS);
}

/** A password check claimed against the back-off: the count it made, and the lock it set. */
export interface PasswordCheck {
  failures: number;
  lockedUntil: Date | undefined;
}

const lockedProblem = (lockedUntil: Date, now: Date) =>
  tooManyRequests((lockedUntil.getTime() - now.getTime()) / 1000, 'Too many failed sign-ins for this account; try again later.');

/**
 * Claims one password check against `person` before the password is verified (sign-in and
 * password change share the back-off): 429 `rate_limited` with `Retry-After` while the account is
 * locked; otherwise the check is counted as a failure up front, and the 5th and later lock the
 * account before their verification runs. Counting first is what keeps guesses sent all at once
 * from slipping past the lock while argon2 verifies them (the lock check and the count are one
 * conditional UPDATE). A right password then clears the count (`clearBackOff`).
 */
export function claimPasswordCheck(ctx: AppContext, person: Pick<Person, 'id'>): PasswordCheck {
  const now = ctx.clock.now();
  return ctx.db.transaction((tx) => {
    const row = tx
      .update(people)
      .set({ failedSignIns: sql`${people.failedSignIns} + 1` })
      .where(and(eq(people.id, person.id), or(isNull(people.lockedUntil), lte(people.lockedUntil, now))))
      .returning({ failures: people.failedSignIns })
      .get();
    if (!row) {
      const current = tx.select({ lockedUntil: people.lockedUntil }).from(people).where(eq(people.id, person.id)).get();
      throw lockedProblem(current?.lockedUntil ?? now, now);
    }
    if (row.failures < LOCK_AFTER_FAILURES) return { failures: row.failures, lockedUntil: undefined };
    const lockedUntil = new Date(now.getTime() + lockDuration(row.failures));
    tx.update(people).set({ lockedUntil }).where(eq(people.id, person.id)).run();
    return { failures: row.failures, lockedUntil };
  });
}

/** The claimed check failed: a lock it set is audited (a right password would have cleared it). */
export function passwordCheckFailed(ctx: AppContext, person: Pick<Person, 'id'>, check: PasswordCheck): void {
  if (!check.lockedUntil) return;
  recordAudit(ctx.db, ctx.clock.now(), {
    actor: 'system',
    action: 'security.sign_in_locked',
    target: person.id,
    details: { failedSignIns: check.failures, lockedUntil: check.lockedUntil.toISOString() },
  });
}

/** A right password: the back-off starts over (bookkeeping, so `updatedAt` is left alone). */
export function clearBackOff(tx: Tx, personId: string): void {
  tx.update(people).set({ failedSignIns: 0, lockedUntil: null }).where(eq(people.id, personId)).run();
}

export async function signInWithEmail(ctx: AppContext, input: SignInInput, client: ClientInfo): Promise<SignedIn> {
  const app = input.applicationId === undefined ? undefined : applicationForEmailSignIn(ctx, input.applicationId);
  const person = findPersonByEmail(ctx.db, input.email);
  const check = person ? claimPasswordCheck(ctx, person) : undefined;
  const ok = await verifyPassword(person?.passwordHash, input.password);
  const now = ctx.clock.now();
  if (!person || !ok) {
    if (person) passwordCheckFailed(ctx, person, check!);
    throw invalidCredentials();
  }
  const result = ctx.db.transaction((tx) => {
    clearBackOff(tx, person.id);
    return signInPerson(tx, now, ctx.config, person, app, client);
  });
  if (app) ctx.wakeWebhooks();
  return { person: { ...person, failedSignIns: 0, lockedUntil: null }, ...result };
}

/**
 * Signs an authenticated person in on this browser (any method: password, external provider):
 * starts or keeps the session, marks the application's realm, and for an existing member updates
 * `lastActiveAt` and emits `membership.signed_in`. The caller wakes the webhook worker.
 */
export function signInPerson(tx: Tx, now: Date, config: Config, person: Person, app: Application | undefined, client: ClientInfo) {
  const started = startSession(tx, now, config, person, app, client);
  const membership = app ? findMembership(tx, app.id, person.id) : undefined;
  if (app && membership) {
    tx.update(memberships).set({ lastActiveAt: now }).where(eq(memberships.id, membership.id)).run();
    recordEvent(tx, now, app.id, 'membership.signed_in', membershipEventData(membership, person));
  }
  return started;
}
