/**
 * An application's secrets (DESIGN §4.3): the client secret (kept as its SHA-256, shown once when
 * made or rotated) and the webhook signing secret (sealed at rest in PostgreSQL mode, shown once
 * when generated; on a change the old one keeps signing for a day beside the new one). The
 * secrets plugin fields make (`ldapPassword`) are theirs (plugin-api/application-fields.ts) and
 * shown once the same way.
 */
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { applications, type Application, type ClientType } from '../db/schema.js';
import type { AppContext } from '../context.js';
import type { Tx } from '../db/client.js';
import { conflict } from '../http/problem.js';
import { recordAudit } from '../audit/record.js';
import { exec, transaction } from '../db/store.js';
import { randomToken, sha256 } from '../util/crypto.js';
import { openNullable, sealNullable } from '../db/secrets-at-rest.js';
import { webhookSecretPurpose } from '../webhooks/sign.js';
import { getApplication } from './lookup.js';

/** How long deliveries are signed with the old secret too after a rotation (issue: webhooks). */
export const WEBHOOK_SECRET_OVERLAP_MS = 24 * 3600 * 1000;

export function newClientSecret(): string {
  return randomToken('ghs_');
}

/** Standard Webhooks secret format: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The client secret of a create: a web client's, given (a configuration file's) or generated (and then shown). */
export function createClientSecret(clientType: ClientType, given: string | undefined) {
  const givenSecret = clientType === 'web' ? given : undefined;
  const shown = clientType === 'web' && !givenSecret ? newClientSecret() : undefined;
  const stored = givenSecret ?? shown;
  return { shown, hash: stored ? sha256(stored) : null };
}

/** The client secret follows the client type on an update: a new web client gets one (shown), a public client loses it. */
export function updatedClientSecret(current: Application, clientType: ClientType) {
  const shown = clientType === 'web' && current.clientType !== 'web' ? newClientSecret() : undefined;
  return { shown, hash: clientType === 'web' ? (shown ? sha256(shown) : current.clientSecretHash) : null };
}

/**
 * The webhook secret after an update: cleared with the URL; generated when a URL appears without
 * one; on change the old secret keeps signing alongside the new one for a day so receivers can
 * roll over. Stored sealed in PostgreSQL mode (db/secrets-at-rest.ts): compared in the clear,
 * written sealed. `columns` are the row's, to write inside `tx`.
 */
export function updatedWebhookSecret(ctx: AppContext, current: Application, webhookUrl: string | null, given: string | null | undefined, now: Date) {
  const purpose = webhookSecretPurpose(current.id);
  const currentSecret = openNullable(ctx.db, current.webhookSecret, purpose);
  let secret = currentSecret;
  let generated: string | undefined;
  if (!webhookUrl) secret = null;
  else if (given) secret = given;
  else if (given === null || !secret) secret = generated = newWebhookSecret();
  const rotated = Boolean(currentSecret && secret && secret !== currentSecret);
  const columns = (tx: Tx) => ({
    // Unchanged: the stored value as it is; the previous secret keeps the current one's seal.
    webhookSecret: secret === currentSecret ? current.webhookSecret : sealNullable(tx, secret, purpose),
    webhookPreviousSecret: rotated ? current.webhookSecret : webhookUrl ? current.webhookPreviousSecret : null,
    webhookPreviousSecretUntil: rotated
      ? new Date(now.getTime() + WEBHOOK_SECRET_OVERLAP_MS)
      : webhookUrl
        ? current.webhookPreviousSecretUntil
        : null,
  });
  return { generated, rotated, columns };
}

/** A new client secret: generated, or `given` (a configuration file's reference: config-as-code). */
export async function rotateClientSecret(ctx: AppContext, id: string, actor: string, given?: string) {
  const app = await getApplication(ctx, id);
  if (app.clientType !== 'web') {
    throw conflict('not_confidential_client', `Application "${id}" is a ${app.clientType} client and has no client secret.`);
  }
  const clientSecret = given ?? newClientSecret();
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    await exec(tx.update(applications).set({ clientSecretHash: sha256(clientSecret), updatedAt: now }).where(eq(applications.id, id)));
    await recordAudit(tx, now, { actor, action: 'application.client_secret_rotated', applicationId: id, target: id });
  });
  return { clientSecret };
}
