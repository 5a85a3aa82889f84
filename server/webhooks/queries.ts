/**
 * Outbox queries for the delivery worker and the admin API. A row is *due* when it is pending,
 * its `nextAttemptAt` has come and nobody holds a live lease on it.
 */
import { and, asc, count, eq, inArray, isNull, lte, notInArray, or, sql, type SQL } from 'drizzle-orm';
import type { SelectedFields } from 'drizzle-orm/sqlite-core';
import { applications, backchannelLogouts, webhookDeliveries, type WebhookDelivery } from '../db/schema.js';
import type { Db, Tx } from '../db/client.js';
import { afterCursor } from '../http/pagination.js';
import { engineOf, exec, one, many, transaction } from '../db/store.js';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** A claimed row with what one attempt needs from its application, read at attempt time. */
export interface ClaimedDelivery {
  id: string;
  applicationId: string;
  payload: string;
  attempts: number;
  webhookUrl: string | null;
  webhookSecret: string | null;
  webhookPreviousSecret: string | null;
  webhookPreviousSecretUntil: Date | null;
}

const webhookFields = {
  id: webhookDeliveries.id,
  applicationId: webhookDeliveries.applicationId,
  payload: webhookDeliveries.payload,
  attempts: webhookDeliveries.attempts,
  webhookUrl: applications.webhookUrl,
  webhookSecret: applications.webhookSecret,
  webhookPreviousSecret: applications.webhookPreviousSecret,
  webhookPreviousSecretUntil: applications.webhookPreviousSecretUntil,
};

/** The columns every outbox table shares: webhook deliveries and back-channel logouts. */
export type OutboxTable = typeof webhookDeliveries | typeof backchannelLogouts;

/** Rows of an outbox still to be delivered (due or waiting for a retry), counted from its (status, next_attempt_at) index. */
export async function outboxBacklog(db: Db, table: OutboxTable): Promise<number> {
  const d = table as typeof webhookDeliveries;
  return (await one(db.select({ n: count() }).from(d).where(eq(d.status, 'pending'))))?.n ?? 0;
}

/** Rows due at `now`: pending, their time come, no live lease, outside the saturated applications. */
function dueRows(d: typeof webhookDeliveries, now: SQL | Date, notSaturated: SQL | undefined) {
  return and(eq(d.status, 'pending'), lte(d.nextAttemptAt, now), or(isNull(d.leaseUntil), lte(d.leaseUntil, now)), notSaturated);
}

/**
 * The worker's statements run once per delivery, hundreds of times a second; they are prepared
 * once per database and outbox table. Placeholders bypass drizzle's value mapping, so times are
 * passed as epoch milliseconds (the column format). `fields` are what one attempt needs, read at
 * claim time (the row's own columns and its application's, joined).
 */
function prepareWorkerStatements(db: Db, table: OutboxTable, fields: SelectedFields) {
  // Typed as one of them: drizzle's builders do not take a union of tables, and the columns
  // used here have the same names and types in both.
  const d = table as typeof webhookDeliveries;
  // Wrapped in `sql` so update values accept them.
  const p = (name: string) => sql`${sql.placeholder(name)}`;
  const now = p('now');
  return {
    due: db
      .select(fields)
      .from(d)
      .innerJoin(applications, eq(applications.id, d.applicationId))
      .where(dueRows(d, now, sql`${d.applicationId} not in (select value from json_each(${sql.placeholder('saturated')}))`))
      // Index order only: adding `id` would make SQLite sort every row sharing a due time (a
      // burst written in one millisecond) on each claim. Ties come out in insertion order.
      .orderBy(asc(d.nextAttemptAt))
      .limit(sql.placeholder('limit'))
      .prepare(),
    lease: db.update(d).set({ leaseUntil: p('leaseUntil') }).where(eq(d.id, sql.placeholder('id'))).prepare(),
    attempt: db
      .update(d)
      .set({
        status: p('status'),
        attempts: p('attempts'),
        leaseUntil: null,
        lastAttemptAt: p('lastAttemptAt'),
        lastStatusCode: p('lastStatusCode'),
        lastError: p('lastError'),
        nextAttemptAt: sql`coalesce(${sql.placeholder('nextAttemptAt')}, ${d.nextAttemptAt})`,
        deliveredAt: sql`coalesce(${sql.placeholder('deliveredAt')}, ${d.deliveredAt})`,
      })
      .where(eq(d.id, sql.placeholder('id')))
      .prepare(),
  };
}

/** PostgreSQL's select builder's row-locking clause (not in the SQLite builder's type). */
interface PgLockable {
  for(strength: 'update', config: { of: OutboxTable; skipLocked: true }): unknown;
}

/** A claimed row: what every channel's attempt needs, plus its own fields. */
export interface ClaimedRow {
  id: string;
  applicationId: string;
  attempts: number;
}

/**
 * The worker's queries over one outbox table: claiming due rows with a lease, recording an
 * attempt, giving leases back. `fields` must select the row's `id`, `applicationId` and
 * `attempts` (the worker's bookkeeping) besides what an attempt sends.
 */
export class OutboxQueries<Row extends ClaimedRow> {
  private readonly prepared = new WeakMap<Db, ReturnType<typeof prepareWorkerStatements>>();

  constructor(
    private readonly table: OutboxTable,
    private readonly fields: SelectedFields,
  ) {}

  /**
   * PostgreSQL's claim: the due rows are locked `FOR UPDATE SKIP LOCKED` (only the outbox's rows,
   * not their applications'), so an instance never waits for, nor takes, a row another instance is
   * claiming; the lease written in the same READ COMMITTED transaction then keeps the row from
   * every instance until the attempt is recorded or the lease runs out (a crashed instance). A row
   * leased and committed by another instance after this statement's snapshot is re-checked against
   * its new version when locked, and its live lease excludes it. Built per call: a claim is one
   * round trip's worth of builder work, and the saturated set changes the SQL.
   */
  private async claimDuePostgres(db: Db, now: Date, limit: number, saturated: string[]): Promise<Row[]> {
    const d = this.table as typeof webhookDeliveries;
    const due = db
      .select(this.fields)
      .from(d)
      .innerJoin(applications, eq(applications.id, d.applicationId))
      .where(dueRows(d, now, saturated.length ? notInArray(d.applicationId, saturated) : undefined))
      .orderBy(asc(d.nextAttemptAt))
      .limit(limit);
    // `for` exists on PostgreSQL's select builder only (the one `db` hands out at run time there).
    const locked = (due as unknown as PgLockable).for('update', { of: d, skipLocked: true });
    return (await many(locked as unknown as typeof due)) as unknown as Row[];
  }

  private statements(db: Db) {
    let prepared = this.prepared.get(db);
    if (!prepared) this.prepared.set(db, (prepared = prepareWorkerStatements(db, this.table, this.fields)));
    return prepared;
  }

  /**
   * Leases up to `limit` due rows, oldest due first, skipping applications in `saturated` and
   * taking at most `roomFor(appId)` rows per application. One transaction, so a row is never
   * claimed twice. `exhausted` tells that every due row outside `saturated` was seen.
   */
  async claimDue(
    db: Db,
    now: Date,
    leaseUntil: Date,
    limit: number,
    saturated: string[],
    roomFor: (applicationId: string) => number,
  ): Promise<{ claimed: Row[]; exhausted: boolean }> {
    const postgres = engineOf(db) === 'postgres';
    const st = postgres ? undefined : this.statements(db);
    const table = this.table as typeof webhookDeliveries;
    return await transaction(db, async () => {
      const rows = st
        ? ((await many(st.due, { now: now.getTime(), saturated: JSON.stringify(saturated), limit })) as unknown as Row[])
        : await this.claimDuePostgres(db, now, limit, saturated);
      const taken = new Map<string, number>();
      const claimed = rows.filter((row) => {
        const n = taken.get(row.applicationId) ?? 0;
        if (n >= roomFor(row.applicationId)) return false;
        taken.set(row.applicationId, n + 1);
        return true;
      });
      if (st) for (const c of claimed) await exec(st.lease, { id: c.id, leaseUntil: leaseUntil.getTime() });
      else if (claimed.length) await exec(db.update(table).set({ leaseUntil }).where(inArray(table.id, claimed.map((c) => c.id))));
      // Fewer rows than asked: no other application has due rows right now.
      return { claimed, exhausted: rows.length < limit };
      // PostgreSQL: READ COMMITTED, because the row locks already keep claims apart; SERIALIZABLE
      // would fail (and retry) every claim that overlapped another instance's.
    }, { isolation: 'read committed' });
  }

  /** Records one finished attempt and releases the lease. */
  async recordAttempt(db: Db, id: string, attempts: number, outcome: AttemptOutcome): Promise<void> {
    const status: DeliveryStatus = outcome.ok ? 'succeeded' : outcome.nextAttemptAt ? 'pending' : 'failed';
    await exec(this.statements(db).attempt, {
      id,
      status,
      attempts,
      lastAttemptAt: outcome.attemptedAt.getTime(),
      lastStatusCode: outcome.statusCode,
      lastError: outcome.error,
      nextAttemptAt: outcome.nextAttemptAt?.getTime() ?? null,
      deliveredAt: outcome.ok ? outcome.finishedAt.getTime() : null,
    });
  }

  /** Gives a lease back without counting an attempt (the worker is stopping). */
  async releaseLease(db: Db, ids: string[]): Promise<void> {
    if (!ids.length) return;
    const table = this.table as typeof webhookDeliveries;
    await exec(db.update(table).set({ leaseUntil: null }).where(inArray(table.id, ids)));
  }
}

export interface AttemptOutcome {
  attemptedAt: Date;
  finishedAt: Date;
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  /** When the next attempt is due; null when the delivery is over (succeeded or failed). */
  nextAttemptAt: Date | null;
}

/** The webhook outbox: each claimed row with its application's URL and secrets, read at attempt time. */
export const webhookOutbox = new OutboxQueries<ClaimedDelivery>(webhookDeliveries, webhookFields);

export async function findDelivery(tx: Tx, applicationId: string, id: string): Promise<WebhookDelivery | undefined> {
  return await one(tx
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.applicationId, applicationId), eq(webhookDeliveries.id, id))));
}

export async function listDeliveryRows(db: Db, applicationId: string, limit: number, status?: DeliveryStatus, cursor?: string) {
  return await many(db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.applicationId, applicationId),
        status ? eq(webhookDeliveries.status, status) : undefined,
        afterCursor(webhookDeliveries.createdAt, webhookDeliveries.id, cursor),
      ),
    )
    .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id))
    .limit(limit + 1));
}

/** Makes a delivery due now with a fresh retry schedule. */
export async function requeue(tx: Tx, id: string, now: Date): Promise<WebhookDelivery> {
  return (await one(tx
    .update(webhookDeliveries)
    .set({ status: 'pending', attempts: 0, nextAttemptAt: now, leaseUntil: null, deliveredAt: null })
    .where(eq(webhookDeliveries.id, id))
    .returning()))!;
}
