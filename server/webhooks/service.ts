/**
 * Webhook observability and control (issue 6): list an application's deliveries, replay one,
 * send a `webhook.test` event. Writes are audited in the same transaction as the change.
 */
import { conflict, notFound } from '../http/problem.js';
import { iso } from '../http/schemas.js';
import { toPage } from '../http/pagination.js';
import { recordAudit } from '../audit/record.js';
import { getApplication } from '../applications/lookup.js';
import type { AppContext } from '../context.js';
import type { WebhookDelivery } from '../db/schema.js';
import { recordEvent } from './outbox.js';
import { findDelivery, listDeliveryRows, requeue, type DeliveryStatus } from './queries.js';
import { transaction } from '../db/store.js';

/** How much of a failed attempt the caller may see: the administrator everything, an API key less. */
export type ErrorDetail = 'full' | 'outcome';

/** Whom a delivery log answers: the administrator in full, an API key with the outcome only. */
export const detailFor = (actor: { type: string }): ErrorDetail => (actor.type === 'admin' ? 'full' : 'outcome');

type DeliveryState = Pick<WebhookDelivery, 'attempts' | 'lastStatusCode' | 'lastError' | 'lastAttemptAt' | 'nextAttemptAt' | 'status' | 'createdAt' | 'deliveredAt'>;

/**
 * An API key sees that an attempt failed, never how (issue 22): "connection refused" beside
 * "HTTP 404" would tell a key holder which ports answer at any address it points its webhook (or
 * back-channel logout URL) at. A 2xx is shown to both (the delivery succeeded).
 */
function attemptOutcome(row: DeliveryState, detail: ErrorDetail) {
  if (detail === 'full') return { lastStatusCode: row.lastStatusCode, lastError: row.lastError };
  const succeeded = row.lastStatusCode !== null && row.lastStatusCode >= 200 && row.lastStatusCode < 300;
  return { lastStatusCode: succeeded ? row.lastStatusCode : null, lastError: row.lastError === null ? null : 'delivery_failed' };
}

/** The wire view of how a delivery went, for any outbox's row (`deliveryOutcomeProperties`). */
export function deliveryOutcome(row: DeliveryState, detail: ErrorDetail = 'full') {
  return {
    attempts: row.attempts,
    ...attemptOutcome(row, detail),
    lastAttemptAt: iso(row.lastAttemptAt),
    nextAttemptAt: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
    createdAt: iso(row.createdAt)!,
    deliveredAt: iso(row.deliveredAt),
  };
}

export function deliveryRecord(row: WebhookDelivery, detail: ErrorDetail = 'full') {
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    ...deliveryOutcome(row, detail),
    payload: JSON.parse(row.payload) as Record<string, unknown>,
  };
}

export async function listDeliveries(ctx: AppContext, applicationId: string, limit: number, detail: ErrorDetail, status?: DeliveryStatus, cursor?: string) {
  await getApplication(ctx, applicationId);
  const rows = await listDeliveryRows(ctx.db, applicationId, limit, status, cursor);
  const page = toPage(rows, limit, (r) => ({ t: r.createdAt.getTime(), id: r.id }));
  return { deliveries: page.items.map((row) => deliveryRecord(row, detail)), nextCursor: page.nextCursor };
}

/** Makes a delivery (in any state) due now with a fresh retry schedule. */
export async function retryDelivery(ctx: AppContext, applicationId: string, deliveryId: string, actor: string, detail: ErrorDetail) {
  await getApplication(ctx, applicationId);
  const now = ctx.clock.now();
  const row = await transaction(ctx.db, async (tx) => {
    const current = await findDelivery(tx, applicationId, deliveryId);
    if (!current) throw notFound('delivery_not_found', `There is no webhook delivery "${deliveryId}" for application "${applicationId}".`);
    if (current.status === 'pending' && current.leaseUntil && current.leaseUntil.getTime() > now.getTime()) {
      throw conflict('delivery_in_progress', 'This delivery is being attempted right now; retry once the attempt has finished.');
    }
    const updated = await requeue(tx, deliveryId, now);
    await recordAudit(tx, now, {
      actor,
      action: 'webhook_delivery.retried',
      applicationId,
      target: deliveryId,
      details: { type: current.type, previousStatus: current.status },
    });
    return updated;
  });
  ctx.wakeWebhooks();
  return deliveryRecord(row, detail);
}

/** Writes a `webhook.test` event; 409 when the application has no webhook URL. */
export async function sendTestEvent(ctx: AppContext, applicationId: string, actor: string) {
  const app = await getApplication(ctx, applicationId);
  if (!app.webhookUrl) {
    throw conflict('webhook_not_configured', `Application "${applicationId}" has no webhookUrl.`);
  }
  const now = ctx.clock.now();
  const row = await transaction(ctx.db, async (tx) => {
    const id = await recordEvent(tx, now, applicationId, 'webhook.test', { message: 'Test event sent from Gatehouse.' });
    const created = id ? await findDelivery(tx, applicationId, id) : undefined;
    if (!created) throw conflict('webhook_not_configured', `Application "${applicationId}" has no webhookUrl.`);
    await recordAudit(tx, now, { actor, action: 'webhook.test_sent', applicationId, target: created.id });
    return created;
  });
  ctx.wakeWebhooks();
  return deliveryRecord(row);
}
