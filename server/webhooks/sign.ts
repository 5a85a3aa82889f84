/**
 * Standard Webhooks signing (https://www.standardwebhooks.com, DESIGN §4.11): the signed content
 * is `${id}.${timestamp}.${body}`, HMAC-SHA256, base64, sent as `v1,<sig>`. A `whsec_` secret is
 * base64-decoded to get the key; any other secret is used as its UTF-8 bytes. During a secret
 * rotation both secrets sign, as space-separated entries, so receivers can roll over.
 */
import { createHmac } from 'node:crypto';
import { openNullable } from '../db/secrets-at-rest.js';

const WHSEC_PREFIX = 'whsec_';

/** Standard Webhooks keys are 24 to 64 bytes. */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Why a `whsec_` secret cannot be used, or undefined: Node's base64 decoder skips what it does not
 * understand, so `whsec_!!!!…` would sign with an empty key that anyone can reproduce.
 */
export function webhookSecretProblem(secret: string): string | undefined {
  if (!secret.startsWith(WHSEC_PREFIX)) return undefined;
  const encoded = secret.slice(WHSEC_PREFIX.length);
  if (!STRICT_BASE64.test(encoded)) return 'after whsec_ must come standard base64 (A–Z, a–z, 0–9, +, /, = padding)';
  const bytes = Buffer.from(encoded, 'base64').length;
  if (bytes < MIN_KEY_BYTES || bytes > MAX_KEY_BYTES) {
    return `a whsec_ secret must carry ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes of key (this one has ${bytes})`;
  }
  return undefined;
}

/** The HMAC key bytes of a stored webhook secret. */
export function signingKey(secret: string): Buffer {
  return secret.startsWith(WHSEC_PREFIX)
    ? Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64')
    : Buffer.from(secret, 'utf8');
}

/** `v1,<base64>` for one key. `timestamp` is in whole seconds. */
export function sign(key: Buffer, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * What a webhook secret of `applicationId` is sealed for in PostgreSQL mode (db/secrets-at-rest.ts):
 * the current and the previous secret alike, so a rotation moves the sealed value as it is.
 */
export const webhookSecretPurpose = (applicationId: string) => `webhook secret of application ${applicationId}`;

/** An application's stored secrets in the clear (sealed in PostgreSQL mode). */
export function openedSecrets<T extends { applicationId: string; webhookSecret: string | null; webhookPreviousSecret: string | null }>(db: object, app: T): T {
  const purpose = webhookSecretPurpose(app.applicationId);
  return { ...app, webhookSecret: openNullable(db, app.webhookSecret, purpose), webhookPreviousSecret: openNullable(db, app.webhookPreviousSecret, purpose) };
}

/** The secrets that sign at `now`: the current one, plus the previous one inside its overlap. */
export function activeSecrets(
  app: { webhookSecret: string | null; webhookPreviousSecret: string | null; webhookPreviousSecretUntil: Date | null },
  now: Date,
): string[] {
  const secrets = app.webhookSecret ? [app.webhookSecret] : [];
  const until = app.webhookPreviousSecretUntil;
  if (app.webhookPreviousSecret && until && until.getTime() > now.getTime() && app.webhookPreviousSecret !== app.webhookSecret) {
    secrets.push(app.webhookPreviousSecret);
  }
  return secrets;
}

/** The three Standard Webhooks headers for one delivery attempt. */
export function webhookHeaders(id: string, at: Date, body: string, secrets: string[]): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => sign(signingKey(s), id, timestamp, body)).join(' '),
  };
}
