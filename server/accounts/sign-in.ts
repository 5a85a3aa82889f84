/**
 * E-mail and password sign-in (DESIGN §4.8, §5). Wrong e-mail and wrong password get the same
 * answer in about the same time. Per-account back-off: from the 5th consecutive failure the
 * account is locked for 30 s, doubling with every further failure up to 15 min; a lock refuses
 * new sign-ins only and never touches existing sessions.
 */
import { eq, sql } from 'drizzle-orm';
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

/** Counts a wrong password toward the per-account back-off (sign-in and password change share it). */
export function recordFailure(ctx: AppContext, person: Person, now: Date): void {
  ctx.db.transaction((tx) => {
    // Incremented in SQL so concurrent guesses cannot lose counts.
    const row = tx
      .update(people)
      .set({ failedSignIns: sql`${people.failedSignIns} + 1`, updatedAt: now })
      .where(eq(people.id, person.id))
      .returning({ failures: people.failedSignIns })
      .get();
    if (!row || row.failures < LOCK_AFTER_FAILURES) return;
    const lockedUntil = new Date(now.getTime() + lockDuration(row.failures));
    tx.update(people).set({ lockedUntil }).where(eq(people.id, person.id)).run();
    recordAudit(tx, now, {
      actor: 'system',
      action: 'security.sign_in_locked',
      target: person.id,
      details: { failedSignIns: row.failures, lockedUntil: lockedUntil.toISOString() },
    });
  });
}

/** 429 `rate_limited` (with `Retry-After`) while the account is locked by the back-off. */
export function assertNotLocked(ctx: AppContext, person: Pick<Person, 'lockedUntil'>): void {
  const lockedUntil = person.lockedUntil?.getTime() ?? 0;
  const now = ctx.clock.now().getTime();
  if (lockedUntil > now) {
    throw tooManyRequests((lockedUntil - now) / 1000, 'Too many failed sign-ins for this account; try again later.');
  }
}

export async function signInWithEmail(ctx: AppContext, input: SignInInput, client: ClientInfo): Promise<SignedIn> {
  const app = input.applicationId === undefined ? undefined : applicationForEmailSignIn(ctx, input.applicationId);
  const person = findPersonByEmail(ctx.db, input.email);
  if (person) assertNotLocked(ctx, person);
  const ok = await verifyPassword(person?.passwordHash, input.password);
  const now = ctx.clock.now();
  if (!person || !ok) {
    if (person) recordFailure(ctx, person, now);
    throw invalidCredentials();
  }
  const result = ctx.db.transaction((tx) => {
    if (person.failedSignIns !== 0 || person.lockedUntil) {
      tx.update(people).set({ failedSignIns: 0, lockedUntil: null, updatedAt: now }).where(eq(people.id, person.id)).run();
    }
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
