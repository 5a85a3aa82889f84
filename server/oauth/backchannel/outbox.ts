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
 * Recipients are chosen and written by one INSERT … SELECT, so ending a session touches the
 * store the same number of times whether 1 or 50 applications are told.
 */
import { and, eq, isNotNull, or, sql, type SQL } from 'drizzle-orm';
import { applications, backchannelLogouts, memberships, sessionClients, sessions } from '../../db/schema.js';
import type { Tx } from '../../db/client.js';
import { engineOf, exec } from '../../db/store.js';

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

/**
 * A queued logout as SELECT expressions, in the table's column order (drizzle's INSERT … SELECT
 * wants every column, in order): who and which session come from the caller's query, the rest is
 * a new pending row.
 */
function queuedRow(postgres: boolean, now: Date, reason: string, who: { applicationId: SQL.Aliased<string> | typeof applications.id | typeof sessionClients.applicationId; subject: SQL.Aliased<string> | typeof sessions.personId; sessionId: SQL.Aliased<string | null> | typeof sessionClients.sessionId }) {
  // In a SELECT list PostgreSQL does not learn a parameter's type from the INSERT's column: the
  // time is cast there, and so are the NULLs (text otherwise). SQLite keeps milliseconds.
  const at = postgres ? sql`${now.toISOString()}::timestamptz` : sql`${now.getTime()}`;
  const none = (name: string, type = 'timestamptz') => (postgres ? sql<null>`null::${sql.raw(type)}` : sql<null>`null`).as(name);
  return {
    // Random ids made by the engine: 96 bits on SQLite; PostgreSQL has no randomblob, and its
    // built-in gen_random_uuid() gives 122 (32 hex digits).
    id: (postgres
      ? sql<string>`'bcl_' || replace(gen_random_uuid()::text, '-', '')`
      : sql<string>`'bcl_' || lower(hex(randomblob(12)))`).as('id'),
    applicationId: who.applicationId,
    subject: who.subject,
    sessionId: who.sessionId,
    reason: sql<string>`${reason}`.as('reason'),
    status: sql<'pending'>`'pending'`.as('status'),
    attempts: sql<number>`0`.as('attempts'),
    nextAttemptAt: sql<Date>`${at}`.as('next_attempt_at'),
    leaseUntil: none('lease_until'),
    lastAttemptAt: none('last_attempt_at'),
    lastStatusCode: none('last_status_code', 'integer'),
    lastError: none('last_error', 'text'),
    createdAt: sql<Date>`${at}`.as('created_at'),
    deliveredAt: none('delivered_at'),
  };
}

function queued(n: number): number {
  if (n > 0) wakeWorkers();
  return n;
}

/** Queues a logout token (`sub` + `sid`) for each application with a logout URI that received tokens from these ended sessions. */
export async function queueSessionLogouts(tx: Tx, now: Date, ended: { id: string }[], reason: string): Promise<number> {
  if (!ended.length) return 0;
  const postgres = engineOf(tx) === 'postgres';
  const ids = JSON.stringify(ended.map((s) => s.id));
  const recipients = tx
    .select(queuedRow(postgres, now, reason, { applicationId: sessionClients.applicationId, subject: sessions.personId, sessionId: sessionClients.sessionId }))
    .from(sessionClients)
    .innerJoin(sessions, eq(sessions.id, sessionClients.sessionId))
    .innerJoin(applications, eq(applications.id, sessionClients.applicationId))
    .where(
      and(
        // One parameter however many sessions ended (a password reset ends all of them).
        postgres
          ? sql`${sessionClients.sessionId} in (select jsonb_array_elements_text(${ids}::jsonb))`
          : sql`${sessionClients.sessionId} in (select value from json_each(${ids}))`,
        isNotNull(applications.backchannelLogoutUri),
      ),
    );
  return queued(await exec(tx.insert(backchannelLogouts).select(recipients)));
}

/**
 * Queues a `sub`-only logout token for the person at every application of `application`'s realm
 * that they are a member of, and at `application` itself (whose membership may be gone already).
 */
export async function queueMemberLogouts(
  tx: Tx,
  now: Date,
  personId: string,
  application: { id: string; ssoGroupId: string | null },
  reason: string,
): Promise<number> {
  const member = sql`exists (select 1 from ${memberships} where ${memberships.applicationId} = ${applications.id} and ${memberships.personId} = ${personId})`;
  const realm = application.ssoGroupId
    ? or(eq(applications.id, application.id), and(eq(applications.ssoGroupId, application.ssoGroupId), member))
    : eq(applications.id, application.id);
  const postgres = engineOf(tx) === 'postgres';
  const recipients = tx
    .select(queuedRow(postgres, now, reason, { applicationId: applications.id, subject: sql<string>`${personId}`.as('subject'), sessionId: (postgres ? sql<null>`null::text` : sql<null>`null`).as('session_id') }))
    .from(applications)
    .where(and(isNotNull(applications.backchannelLogoutUri), realm));
  return queued(await exec(tx.insert(backchannelLogouts).select(recipients)));
}
