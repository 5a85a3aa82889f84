/**
 * Queueing logout tokens (OpenID Connect Back-Channel Logout 1.0 §2.5–2.7, spec
 * grants-and-logout.md). Rows are written in the transaction that ends the session (or suspends
 * or removes a member), so a logout is queued exactly when its cause happened; the delivery
 * worker (channel.ts) signs and sends them later, so no request ever waits for a receiver.
 *
 * Recipients:
 * - a session ended: every application that received tokens from it (session_clients) and has
 *   a `backchannelLogoutUri`, one token each with `sub` and `sid`;
 * - a member suspended or removed: every application of that application's realm (its SSO
 *   group, or itself) that the person is a member of, and the application itself, with `sub`
 *   only (no session is meant: all of the person's sessions at those applications end).
 *
 * Each recipient costs one row in one multi-row insert, so ending a session touches the store
 * the same number of times whether 1 or 50 applications are told.
 */
import { and, eq, inArray, isNotNull, or, sql } from 'drizzle-orm';
import { applications, backchannelLogouts, memberships, sessionClients } from '../../db/schema.js';
import type { Tx } from '../../audit/record.js';
import { newId } from '../../util/ids.js';

/**
 * Delivery workers of this process, woken after logouts were queued. Module-level because the
 * session-ending function runs inside transactions opened deep in other features, which hold a
 * store handle but not the app context; a wake is only a hint (workers also poll), and waking
 * a worker of another app instance (tests build several) merely makes it look once for nothing.
 */
const wakers = new Set<() => void>();

/** Registers a worker's wake-up; returns the function that unregisters it. */
export function onLogoutsQueued(wake: () => void): () => void {
  wakers.add(wake);
  return () => wakers.delete(wake);
}

/** Called inside the writing transaction: workers look on a later tick, after the commit. */
function wakeWorkers(): void {
  for (const wake of wakers) wake();
}

interface Recipient {
  applicationId: string;
  subject: string;
  sessionId: string | null;
}

function queue(tx: Tx, now: Date, recipients: Recipient[], reason: string): number {
  if (!recipients.length) return 0;
  tx.insert(backchannelLogouts)
    .values(recipients.map((r) => ({ id: newId('bcl'), ...r, reason, status: 'pending' as const, nextAttemptAt: now, createdAt: now })))
    .run();
  wakeWorkers();
  return recipients.length;
}

/** Queues a logout token (`sub` + `sid`) for each application that received tokens from these ended sessions. */
export function queueSessionLogouts(tx: Tx, now: Date, ended: { id: string; personId: string }[], reason: string): number {
  if (!ended.length) return 0;
  const rows = tx
    .select({ sessionId: sessionClients.sessionId, applicationId: sessionClients.applicationId })
    .from(sessionClients)
    .innerJoin(applications, eq(applications.id, sessionClients.applicationId))
    .where(and(inArray(sessionClients.sessionId, ended.map((s) => s.id)), isNotNull(applications.backchannelLogoutUri)))
    .all();
  const personOf = new Map(ended.map((s) => [s.id, s.personId]));
  return queue(tx, now, rows.map((r) => ({ applicationId: r.applicationId, subject: personOf.get(r.sessionId)!, sessionId: r.sessionId })), reason);
}

/**
 * Queues a `sub`-only logout token for the person at every application of `application`'s realm
 * that they are a member of, and at `application` itself (whose membership may be gone already).
 */
export function queueMemberLogouts(
  tx: Tx,
  now: Date,
  personId: string,
  application: { id: string; ssoGroupId: string | null },
  reason: string,
): number {
  const member = sql`exists (select 1 from ${memberships} where ${memberships.applicationId} = ${applications.id} and ${memberships.personId} = ${personId})`;
  const rows = tx
    .select({ id: applications.id })
    .from(applications)
    .where(
      and(
        isNotNull(applications.backchannelLogoutUri),
        application.ssoGroupId
          ? or(eq(applications.id, application.id), and(eq(applications.ssoGroupId, application.ssoGroupId), member))
          : eq(applications.id, application.id),
      ),
    )
    .all();
  return queue(tx, now, rows.map((r) => ({ applicationId: r.id, subject: personId, sessionId: null })), reason);
}
