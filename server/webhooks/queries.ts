/**
 * Outbox queries for the delivery worker and the admin API. A row is *due* when it is pending,
 * its `nextAttemptAt` has come and nobody holds a live lease on it.
 */
import { and, asc, eq, inArray, isNull, lte, notInArray, or } from 'drizzle-orm';
import { applications, webhookDeliveries, type WebhookDelivery } from '../db/schema.js';
import type { Db } from '../db/client.js';
import type { Tx } from '../audit/record.js';
import { afterCursor } from '../http/pagination.js';

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

const due = (now: Date) =>
  and(
    eq(webhookDeliveries.status, 'pending'),
    lte(webhookDeliveries.nextAttemptAt, now),
    or(isNull(webhookDeliveries.leaseUntil), lte(webhookDeliveries.leaseUntil, now)),
  );

/**
 * Leases up to `limit` due rows, oldest due first, skipping applications in `saturated` and
 * taking at most `roomFor(appId)` rows per application. One transaction, so a row is never
 * claimed twice. `exhausted` tells that every due row outside `saturated` was seen.
 */
export function claimDue(
  db: Db,
  now: Date,
  leaseUntil: Date,
  limit: number,
  saturated: string[],
  roomFor: (applicationId: string) => number,
): { claimed: ClaimedDelivery[]; exhausted: boolean } {
  return db.transaction((tx) => {
    const rows = tx
      .select({
        id: webhookDeliveries.id,
        applicationId: webhookDeliveries.applicationId,
        payload: webhookDeliveries.payload,
        attempts: webhookDeliveries.attempts,
        webhookUrl: applications.webhookUrl,
        webhookSecret: applications.webhookSecret,
        webhookPreviousSecret: applications.webhookPreviousSecret,
        webhookPreviousSecretUntil: applications.webhookPreviousSecretUntil,
      })
      .from(webhookDeliveries)
      .innerJoin(applications, eq(applications.id, webhookDeliveries.applicationId))
      .where(and(due(now), saturated.length ? notInArray(webhookDeliveries.applicationId, saturated) : undefined))
      .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.id))
      .limit(limit)
      .all();
    const taken = new Map<string, number>();
    const claimed = rows.filter((row) => {
      const n = taken.get(row.applicationId) ?? 0;
      if (n >= roomFor(row.applicationId)) return false;
      taken.set(row.applicationId, n + 1);
      return true;
    });
    if (claimed.length) {
      tx.update(webhookDeliveries)
        .set({ leaseUntil })
        .where(inArray(webhookDeliveries.id, claimed.map((c) => c.id)))
        .run();
    }
    // Fewer rows than asked: no other application has due rows right now.
    return { claimed, exhausted: rows.length < limit };
  });
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

/** Records one finished attempt and releases the lease. */
export function recordAttempt(db: Db, id: string, attempts: number, outcome: AttemptOutcome): void {
  const status: DeliveryStatus = outcome.ok ? 'succeeded' : outcome.nextAttemptAt ? 'pending' : 'failed';
  db.update(webhookDeliveries)
    .set({
      status,
      attempts,
      leaseUntil: null,
      lastAttemptAt: outcome.attemptedAt,
      lastStatusCode: outcome.statusCode,
      lastError: outcome.error,
      ...(outcome.nextAttemptAt ? { nextAttemptAt: outcome.nextAttemptAt } : {}),
      ...(outcome.ok ? { deliveredAt: outcome.finishedAt } : {}),
    })
    .where(eq(webhookDeliveries.id, id))
    .run();
}

/** Gives a lease back without counting an attempt (the worker is stopping). */
export function releaseLease(db: Db, ids: string[]): void {
  if (!ids.length) return;
  db.update(webhookDeliveries).set({ leaseUntil: null }).where(inArray(webhookDeliveries.id, ids)).run();
}

export function findDelivery(tx: Tx, applicationId: string, id: string): WebhookDelivery | undefined {
  return tx
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.applicationId, applicationId), eq(webhookDeliveries.id, id)))
    .get();
}

export function listDeliveryRows(db: Db, applicationId: string, limit: number, status?: DeliveryStatus, cursor?: string) {
  return db
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
    .limit(limit + 1)
    .all();
}

/** Makes a delivery due now with a fresh retry schedule. */
export function requeue(tx: Tx, id: string, now: Date): WebhookDelivery {
  return tx
    .update(webhookDeliveries)
    .set({ status: 'pending', attempts: 0, nextAttemptAt: now, leaseUntil: null, deliveredAt: null })
    .where(eq(webhookDeliveries.id, id))
    .returning()
    .get()!;
}
