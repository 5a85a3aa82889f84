/**
 * Webhook observability and control (issue 6): list an application's deliveries, replay one,
 * send a `webhook.test` event. Writes are audited in the same transaction as the change.
 */
import { conflict, notFound } from '../http/problem.js';
import { iso } from '../http/schemas.js';
import { toPage } from '../http/pagination.js';
import { recordAudit } from '../audit/record.js';
import { getApplication } from '../applications/service.js';
import type { AppContext } from '../context.js';
import type { WebhookDelivery } from '../db/schema.js';
import { recordEvent } from './outbox.js';
import { findDelivery, listDeliveryRows, requeue, type DeliveryStatus } from './queries.js';

/** The wire view of how a delivery went, for any outbox's row (`deliveryOutcomeProperties`). */
export function deliveryOutcome(row: Pick<WebhookDelivery, 'attempts' | 'lastStatusCode' | 'lastError' | 'lastAttemptAt' | 'nextAttemptAt' | 'status' | 'createdAt' | 'deliveredAt'>) {
  return {
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    lastAttemptAt: iso(row.lastAttemptAt),
    nextAttemptAt: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
    createdAt: iso(row.createdAt)!,
    deliveredAt: iso(row.deliveredAt),
  };
}

export function deliveryRecord(row: WebhookDelivery) {
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    ...deliveryOutcome(row),
    payload: JSON.parse(row.payload) as Record<string, unknown>,
  };
}

export function listDeliveries(ctx: AppContext, applicationId: string, limit: number, status?: DeliveryStatus, cursor?: string) {
  getApplication(ctx, applicationId);
  const rows = listDeliveryRows(ctx.db, applicationId, limit, status, cursor);
  const page = toPage(rows, limit, (r) => ({ t: r.createdAt.getTime(), id: r.id }));
  return { deliveries: page.items.map(deliveryRecord), nextCursor: page.nextCursor };
}

/** Makes a delivery (in any state) due now with a fresh retry schedule. */
export function retryDelivery(ctx: AppContext, applicationId: string, deliveryId: string, actor: string) {
  getApplication(ctx, applicationId);
  const now = ctx.clock.now();
  const row = ctx.db.transaction((tx) => {
    const current = findDelivery(tx, applicationId, deliveryId);
    if (!current) throw notFound('delivery_not_found', `There is no webhook delivery "${deliveryId}" for application "${applicationId}".`);
    if (current.status === 'pending' && current.leaseUntil && current.leaseUntil.getTime() > now.getTime()) {
      throw conflict('delivery_in_progress', 'This delivery is being attempted right now; retry once the attempt has finished.');
    }
    const updated = requeue(tx, deliveryId, now);
    recordAudit(tx, now, {
      actor,
      action: 'webhook_delivery.retried',
      applicationId,
      target: deliveryId,
      details: { type: current.type, previousStatus: current.status },
    });
    return updated;
  });
  ctx.wakeWebhooks();
  return deliveryRecord(row);
}

/** Writes a `webhook.test` event; 409 when the application has no webhook URL. */
export function sendTestEvent(ctx: AppContext, applicationId: string, actor: string) {
  const app = getApplication(ctx, applicationId);
  if (!app.webhookUrl) {
    throw conflict('webhook_not_configured', `Application "${applicationId}" has no webhookUrl.`);
  }
  const now = ctx.clock.now();
  const row = ctx.db.transaction((tx) => {
    const id = recordEvent(tx, now, applicationId, 'webhook.test', { message: 'Test event sent from Gatehouse.' });
    const created = id ? findDelivery(tx, applicationId, id) : undefined;
    if (!created) throw conflict('webhook_not_configured', `Application "${applicationId}" has no webhookUrl.`);
    recordAudit(tx, now, { actor, action: 'webhook.test_sent', applicationId, target: created.id });
    return created;
  });
  ctx.wakeWebhooks();
  return deliveryRecord(row);
}
