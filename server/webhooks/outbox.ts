/**
 * The webhook outbox writer (DESIGN §4.11). Every event is written in the same transaction as the
 * change it reports, so an event exists exactly when its change does. Applications without a
 * `webhookUrl` get no rows. The delivery worker picks rows up from here.
 */
import { eq } from 'drizzle-orm';
import { applications, webhookDeliveries } from '../db/schema.js';
import type { Tx } from '../audit/record.js';
import { newId } from '../util/ids.js';
import { exec, one } from '../db/store.js';

/** Every event kind (DESIGN §4.11, plus `application.redirect_uris_changed` from issue 22 and `second_factor.*` from issue 23, `person.deleted` from issue 33). */
export const WEBHOOK_EVENT_TYPES = [
  'membership.created',
  'membership.updated',
  'membership.deleted',
  'membership.signed_in',
  'invitation.created',
  'invitation.accepted',
  'invitation.revoked',
  'security.refresh_token_reused',
  'second_factor.enrolled',
  'second_factor.removed',
  'application.redirect_uris_changed',
  'person.deleted',
  'webhook.test',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Writes one event for an application; returns its id, or undefined when it has no webhook. */
export async function recordEvent(
  tx: Tx,
  at: Date,
  applicationId: string,
  type: WebhookEventType,
  data: Record<string, unknown>,
): Promise<string | undefined> {
  const app = await one(tx
    .select({ webhookUrl: applications.webhookUrl })
    .from(applications)
    .where(eq(applications.id, applicationId)));
  if (!app?.webhookUrl) return undefined;
  const id = newId('msg');
  const payload = JSON.stringify({ id, type, createdAt: at.toISOString(), applicationId, data });
  await exec(tx.insert(webhookDeliveries)
    .values({ id, applicationId, type, payload, status: 'pending', nextAttemptAt: at, createdAt: at }));
  return id;
}
