/**
 * Key custody schedule: the active signing key is rotated once it is older than
 * `GATEHOUSE_KEY_ROTATION_DAYS` (default 90), through the OAuth module's own rotation (which keeps
 * the retired key published until its tokens have expired). The signer's key cache reloads within
 * seconds, so no hand-off to the OAuth plugin is needed.
 */
import { desc, isNull } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import type { Db } from '../db/client.js';
import { signingKeys } from '../db/schema.js';
import { rotateSigningKey } from '../oauth/keys.js';
import { retiringWindowSeconds } from './token-lifetime.js';

const DAY = 24 * 3600 * 1000;
/** How often a running server checks the key's age. */
export const KEY_CHECK_MS = 3600 * 1000;
export const ROTATION_ACTOR = 'system:key-rotation';

/** The key that signs now: the newest one not yet retired (none before the OAuth feature made one). */
export function activeKey(db: Db): { kid: string; createdAt: Date } | undefined {
  return db
    .select({ kid: signingKeys.kid, createdAt: signingKeys.createdAt })
    .from(signingKeys)
    .where(isNull(signingKeys.retiredAt))
    .orderBy(desc(signingKeys.createdAt))
    .get();
}

/** When the schedule rotates `key` next. */
export const nextRotationAt = (key: { createdAt: Date }, rotationDays: number): Date => new Date(key.createdAt.getTime() + rotationDays * DAY);

/** Rotates when the active key is due; returns the new kid, or undefined when nothing was due. */
export async function rotateKeyIfDue(ctx: AppContext): Promise<string | undefined> {
  const now = ctx.clock.now();
  const active = activeKey(ctx.db);
  // No key yet: the OAuth plugin creates the first one at start-up.
  if (!active) return undefined;
  if (now < nextRotationAt(active, ctx.config.keyRotationDays)) return undefined;
  // A restart with a shorter lifetime leaves longer-lived tokens out there for a while.
  const window = retiringWindowSeconds(ctx.db, now, ctx.config.accessTokenTtl);
  const rotated = await rotateSigningKey(ctx.db, now, window, ROTATION_ACTOR);
  return rotated.kid;
}
