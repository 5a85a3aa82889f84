/**
 * Resolves a presented API key (DESIGN §4.7) to its actor, for the admin guard (admin-auth.ts);
 * the keys themselves are made and revoked by the api-keys feature. Keys are stored as SHA-256 hashes, so
 * the lookup is by hash (an exact index hit, no timing signal about other keys). `lastUsedAt` is
 * written at most once a minute per key to keep reads cheap.
 */
import { eq } from 'drizzle-orm';
import { apiKeys } from '../db/schema.js';
import type { Db } from '../db/client.js';
import type { Clock } from '../util/clock.js';
import { sha256 } from '../util/crypto.js';
import { exec, one } from '../db/store.js';

export const API_KEY_PREFIX = 'ghk_';
const LAST_USED_GRANULARITY_MS = 60_000;

export interface ApiKeyActor {
  type: 'api_key';
  keyId: string;
  applicationId: string;
  scopes: string[];
}

export async function authenticateApiKey(ctx: { db: Db; clock: Clock }, presented: string): Promise<ApiKeyActor | undefined> {
  if (!presented.startsWith(API_KEY_PREFIX)) return undefined;
  const row = await one(ctx.db.select().from(apiKeys).where(eq(apiKeys.keyHash, sha256(presented))));
  if (!row || row.revokedAt) return undefined;
  const now = ctx.clock.now();
  if (row.expiresAt && row.expiresAt.getTime() <= now.getTime()) return undefined;
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_GRANULARITY_MS) {
    await exec(ctx.db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, row.id)));
  }
  return { type: 'api_key', keyId: row.id, applicationId: row.applicationId, scopes: row.scopes };
}
