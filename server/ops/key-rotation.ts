/**
 * Key custody schedule: a new key is rotated in once the newest key is older than
 * `GATEHOUSE_KEY_ROTATION_DAYS` (default 90), through the OAuth module's own rotation (which
 * publishes the new key before it signs and keeps the old one published until its tokens have
 * expired). The signer's key cache reloads within seconds, so no hand-off to the OAuth plugin is
 * needed.
 */
import { desc } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import type { Db } from '../db/client.js';
import { signingKeys } from '../db/schema.js';
import { rotateSigningKey } from '../oauth/keys.js';
import { retiringWindowSeconds } from './token-lifetime.js';
import { many } from '../db/store.js';

export { activeKey } from '../oauth/keys.js';

const DAY = 24 * 3600 * 1000;
/** How often a running server checks the key's age. */
export const KEY_CHECK_MS = 3600 * 1000;
export const ROTATION_ACTOR = 'system:key-rotation';

/**
 * The key the schedule counts from: each algorithm's newest key (the one signing, or a next one
 * already published), and of those the oldest. Keys rotate together, so they are the same age;
 * after the upgrade that added ES256 and EdDSA, the RS256 key keeps its own schedule.
 */
export async function newestKey(db: Db): Promise<{ kid: string; createdAt: Date } | undefined> {
  // A handful of rows (three per rotation, retired ones included): read whole, newest first.
  const rows = await many(db.select({ alg: signingKeys.alg, kid: signingKeys.kid, createdAt: signingKeys.createdAt }).from(signingKeys).orderBy(desc(signingKeys.createdAt)));
  const newestPerAlg = rows.filter((row, i) => rows.findIndex((r) => r.alg === row.alg) === i);
  const oldest = newestPerAlg.at(-1);
  return oldest && { kid: oldest.kid, createdAt: oldest.createdAt };
}

/** When the schedule rotates next, counted from the newest key. */
export const nextRotationAt = (key: { createdAt: Date }, rotationDays: number): Date => new Date(key.createdAt.getTime() + rotationDays * DAY);

/** Rotates when the newest key is due; returns the new kid, or undefined when nothing was due. */
export async function rotateKeyIfDue(ctx: AppContext): Promise<string | undefined> {
  const now = ctx.clock.now();
  const newest = await newestKey(ctx.db);
  // No key yet: the OAuth plugin creates the first one at start-up.
  if (!newest) return undefined;
  if (now < nextRotationAt(newest, ctx.config.keyRotationDays)) return undefined;
  // A restart with a shorter lifetime leaves longer-lived tokens out there for a while.
  const window = await retiringWindowSeconds(ctx.db, now, ctx.config.accessTokenTtl);
  const rotated = await rotateSigningKey(ctx.db, now, window, ROTATION_ACTOR);
  return rotated.kid;
}
