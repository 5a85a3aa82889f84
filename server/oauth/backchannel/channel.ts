/**
 * Sending logout tokens (Back-Channel Logout 1.0 §2.5): the back-channel outbox as a delivery
 * channel of the webhook worker (webhooks/worker.ts), so it has the same leases, retry schedule
 * (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then `failed`), per-try timeout, per-application
 * concurrency cap and target-address rules (no redirects; no link-local, unspecified or multicast
 * address, not this server, loopback only with GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK=1; checked again
 * at connect time).
 *
 * The logout token is signed at each attempt: it must expire within 2 minutes, and a retry hours
 * later needs a fresh one. Its `jti` is the row id, the same on every attempt, so a receiver that
 * processed an attempt whose answer was lost can recognise the retry. The body is
 * `logout_token=<JWT>`, form-encoded (§2.5); any 2xx answer is success.
 */
import type { AppContext } from '../../context.js';
import { applications, backchannelLogouts, type SigningAlg } from '../../db/schema.js';
import { OutboxQueries, type ClaimedRow } from '../../webhooks/queries.js';
import { postWebhook } from '../../webhooks/send.js';
import { webhookTargetPolicy } from '../../webhooks/target-address.js';
import type { DeliveryChannel } from '../../webhooks/worker.js';
import { signLogoutToken } from '../jwt.js';
import type { KeyRing } from '../keys.js';

export interface ClaimedLogout extends ClaimedRow {
  subject: string;
  sessionId: string | null;
  /** The application's `backchannelLogoutUri`, read at attempt time. */
  uri: string | null;
  /** The application's `signingAlg`, read at attempt time (a retry after a change signs with the new one). */
  signingAlg: SigningAlg;
}

export const logoutOutbox = new OutboxQueries<ClaimedLogout>(backchannelLogouts, {
  id: backchannelLogouts.id,
  applicationId: backchannelLogouts.applicationId,
  attempts: backchannelLogouts.attempts,
  subject: backchannelLogouts.subject,
  sessionId: backchannelLogouts.sessionId,
  uri: applications.backchannelLogoutUri,
  signingAlg: applications.signingAlg,
});

const HEADERS = { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Gatehouse-Logout/1' };

export function logoutChannel(ctx: AppContext, keys: KeyRing): DeliveryChannel<ClaimedLogout> {
  const policy = webhookTargetPolicy(ctx);
  return {
    queries: logoutOutbox,
    async send(row, at, timeoutMs, stop) {
      // The URI was removed after the logout was queued: nowhere to send it.
      if (!row.uri) return { ok: false, statusCode: null, error: 'backchannel_logout_not_configured', final: true };
      const token = await signLogoutToken(keys, {
        alg: row.signingAlg, issuer: ctx.config.issuer, clientId: row.applicationId, subject: row.subject, sessionId: row.sessionId, jti: row.id, now: at,
      });
      return postWebhook(row.uri, new URLSearchParams({ logout_token: token }).toString(), HEADERS, timeoutMs, policy, stop);
    },
  };
}
