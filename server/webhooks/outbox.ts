/**
 * The webhook outbox writer (DESIGN §4.11). Every event is written in the same transaction as the
 * change it reports, so an event exists exactly when its change does. Applications without a
 * `webhookUrl` get no rows. The delivery worker picks rows up from here.
 */
import { and, asc, eq, isNotNull } from 'drizzle-orm';
import { applications, memberships, webhookDeliveries } from '../db/schema.js';
import type { Tx } from '../db/client.js';
import { newId } from '../util/ids.js';
import { exec, many, one } from '../db/store.js';

/**
 * Every event kind (DESIGN §4.11, plus `application.redirect_uris_changed` from issue 22,
 * `second_factor.*` from issue 23, `person.deleted` from issue 33, and the directory's
 * `person.updated` and `group.*` from issue 32, `person.disabled` from issue 47).
 */
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
  'person.updated',
  'person.disabled',
  'group.created',
  'group.updated',
  'group.deleted',
  'group.member_added',
  'group.member_removed',
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
  return writeEvent(tx, at, applicationId, type, data);
}

async function writeEvent(tx: Tx, at: Date, applicationId: string, type: WebhookEventType, data: Record<string, unknown>): Promise<string> {
  const id = newId('msg');
  const payload = JSON.stringify({ id, type, createdAt: at.toISOString(), applicationId, data });
  await exec(tx.insert(webhookDeliveries)
    .values({ id, applicationId, type, payload, status: 'pending', nextAttemptAt: at, createdAt: at }));
  return id;
}

/*
 * The directory's events (people and groups) belong to no one application, and webhooks are per
 * application. Who hears them (decision 0101): an event about a person goes to the applications
 * the person is an active member of, as `second_factor.*` does, so no application learns about
 * people it does not have; an event about a group itself goes to every application with a webhook.
 */

/** Writes an event about a person for each application they are an active member of; returns how many. */
export async function recordPersonEvent(tx: Tx, at: Date, personId: string, type: WebhookEventType, data: Record<string, unknown>): Promise<number> {
  const apps = await many(tx
    .select({ id: memberships.applicationId })
    .from(memberships)
    .innerJoin(applications, eq(applications.id, memberships.applicationId))
    .where(and(eq(memberships.personId, personId), eq(memberships.status, 'active'), isNotNull(applications.webhookUrl)))
    .orderBy(asc(memberships.applicationId)));
  for (const app of apps) await writeEvent(tx, at, app.id, type, data);
  return apps.length;
}

/** Writes an event about the directory (a group) for every application with a webhook; returns how many. */
export async function recordDirectoryEvent(tx: Tx, at: Date, type: WebhookEventType, data: Record<string, unknown>): Promise<number> {
  const apps = await many(tx.select({ id: applications.id }).from(applications).where(isNotNull(applications.webhookUrl)).orderBy(asc(applications.webhookUrl)));
  for (const app of apps) await writeEvent(tx, at, app.id, type, data);
  return apps.length;
}
