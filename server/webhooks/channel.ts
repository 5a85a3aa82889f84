/**
 * The webhook outbox as a delivery channel (DESIGN §4.11): each row is POSTed as stored, signed
 * per Standard Webhooks with the secrets active at attempt time.
 */
import type { DeliveryChannel } from './worker.js';
import { webhookOutbox, type ClaimedDelivery } from './queries.js';
import { postWebhook } from './send.js';
import { activeSecrets, openedSecrets, webhookHeaders } from './sign.js';
import type { TargetPolicy } from './target-address.js';

/**
 * The webhook channel under a target policy (which hosts deliveries may reach, target-address.ts);
 * `db` is the store the secrets were read from (sealed there in PostgreSQL mode).
 */
export function webhookChannel(policy: TargetPolicy, db: object): DeliveryChannel<ClaimedDelivery> {
  return {
    queries: webhookOutbox,
    async send(delivery, at, timeoutMs, stop) {
      const secrets = activeSecrets(openedSecrets(db, delivery), at);
      // The URL was removed after the event was written: nothing to send to.
      if (!delivery.webhookUrl || !secrets.length) return { ok: false, statusCode: null, error: 'webhook_not_configured', final: true };
      const headers = webhookHeaders(delivery.id, at, delivery.payload, secrets);
      return postWebhook(delivery.webhookUrl, delivery.payload, headers, timeoutMs, policy, stop);
    },
  };
}
