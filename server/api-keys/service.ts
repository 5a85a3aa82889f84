/**
 * API-key management (DESIGN §4.7): a key is shown once at creation and stored as SHA-256;
 * lists show its first characters (`prefix`) so people can tell keys apart. Revoking is
 * immediate: `authenticate.ts` refuses revoked keys on the next request.
 */
import { and, asc, eq, isNull } from 'drizzle-orm';
import { apiKeys, type ApiKey } from '../db/schema.js';
import type { AppContext } from '../context.js';
import { recordAudit } from '../audit/record.js';
import { getApplication } from '../applications/lookup.js';
import { afterCursor, toPage } from '../http/pagination.js';
import { notFound, validationFailed, type FieldError } from '../http/problem.js';
import { iso } from '../http/schemas.js';
import { randomToken, sha256 } from '../util/crypto.js';
import { newId } from '../util/ids.js';
import { API_KEY_PREFIX } from '../http/api-key-auth.js';
import { API_KEY_SCOPES, type ApiKeyCreate } from './schemas.js';
import { one, many, transaction } from '../db/store.js';

const PREFIX_LENGTH = 12;

export function apiKeyRecord(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    scopes: key.scopes,
    prefix: key.prefix,
    createdAt: iso(key.createdAt)!,
    expiresAt: iso(key.expiresAt),
    lastUsedAt: iso(key.lastUsedAt),
  };
}

export async function createApiKey(ctx: AppContext, applicationId: string, input: ApiKeyCreate, actor: string) {
  await getApplication(ctx, applicationId);
  const now = ctx.clock.now();
  const errors: FieldError[] = [];
  input.scopes.forEach((scope, i) => {
    if (!(API_KEY_SCOPES as readonly string[]).includes(scope)) {
      errors.push({ path: `body.scopes.${i}`, message: `unknown scope "${scope}"; known: ${API_KEY_SCOPES.join(', ')}` });
    }
  });
  const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
  // The date-time format admits a leap second (…T23:59:60Z), which a JavaScript Date cannot hold.
  if (expiresAt && Number.isNaN(expiresAt.getTime())) errors.push({ path: 'body.expiresAt', message: 'must be a date-time without a leap second' });
  else if (expiresAt && expiresAt.getTime() <= now.getTime()) errors.push({ path: 'body.expiresAt', message: 'must be in the future' });
  if (errors.length) throw validationFailed(errors);

  const key = randomToken(API_KEY_PREFIX);
  const scopes = [...new Set(input.scopes)];
  const row = await transaction(ctx.db, async (tx) => {
    const created = await one(tx
      .insert(apiKeys)
      .values({
        id: newId('key'),
        applicationId,
        name: input.name,
        prefix: key.slice(0, PREFIX_LENGTH),
        keyHash: sha256(key),
        scopes,
        createdAt: now,
        expiresAt,
      })
      .returning());
    await recordAudit(tx, now, {
      actor,
      action: 'api_key.created',
      applicationId,
      target: created.id,
      details: { name: created.name, scopes, prefix: created.prefix, expiresAt: iso(expiresAt) },
    });
    return created;
  });
  return { ...apiKeyRecord(row), key };
}

/** Live keys (not revoked; expired ones are still listed so people see why they fail). */
export async function listApiKeys(ctx: AppContext, applicationId: string, limit: number, cursor?: string) {
  await getApplication(ctx, applicationId);
  const rows = await many(ctx.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.applicationId, applicationId), isNull(apiKeys.revokedAt), afterCursor(apiKeys.createdAt, apiKeys.id, cursor)))
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id))
    .limit(limit + 1));
  const page = toPage(rows, limit, (r) => ({ t: r.createdAt.getTime(), id: r.id }));
  return { apiKeys: page.items.map(apiKeyRecord), nextCursor: page.nextCursor };
}

/** One live key (what the create answer's `Location` names); revoked keys are gone, as in the list. */
export async function getApiKey(ctx: AppContext, applicationId: string, keyId: string) {
  await getApplication(ctx, applicationId);
  const row = await one(ctx.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.applicationId, applicationId), eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt))));
  if (!row) throw notFound('api_key_not_found', `Application "${applicationId}" has no API key "${keyId}".`);
  return apiKeyRecord(row);
}

export async function revokeApiKey(ctx: AppContext, applicationId: string, keyId: string, actor: string) {
  await getApplication(ctx, applicationId);
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    const row = await one(tx
      .update(apiKeys)
      .set({ revokedAt: now })
      .where(and(eq(apiKeys.applicationId, applicationId), eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
      .returning());
    if (!row) throw notFound('api_key_not_found', `Application "${applicationId}" has no API key "${keyId}".`);
    await recordAudit(tx, now, { actor, action: 'api_key.revoked', applicationId, target: keyId, details: { name: row.name, prefix: row.prefix } });
  });
}
