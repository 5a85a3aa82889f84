/**
 * How long a retired signing key must stay in the JWKS: as long as the longest access token it
 * may have signed is valid. The server records the access-token lifetime it runs with in `meta`
 * at start-up, so `gatehouse rotate-keys` (another process, with its own environment) retires
 * keys with the server's lifetime, not its own. A start with a shorter lifetime than before
 * keeps the earlier one covered until the tokens issued under it have expired.
 */
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { meta } from '../db/schema.js';
import { exec, one } from '../db/store.js';

const KEY = 'access_token_ttl';
/** The longest access-token lifetime the configuration allows (GATEHOUSE_ACCESS_TOKEN_TTL). */
export const MAX_ACCESS_TOKEN_TTL = 86_400;

interface Recorded {
  /** The lifetime the server last started with, seconds. */
  seconds: number;
  /** Tokens issued under an earlier, longer lifetime are valid until this time (epoch ms). */
  earlierUntil: number;
}

async function read(db: Db): Promise<Recorded | undefined> {
  const row = await one(db.select({ value: meta.value }).from(meta).where(eq(meta.key, KEY)));
  if (!row) return undefined;
  try {
    const value = JSON.parse(row.value) as Partial<Recorded>;
    if (typeof value.seconds !== 'number' || typeof value.earlierUntil !== 'number') return undefined;
    return { seconds: value.seconds, earlierUntil: value.earlierUntil };
  } catch {
    return undefined;
  }
}

/** Called by `start()`: the lifetime this server signs access tokens with from now on. */
export async function recordAccessTokenTtl(db: Db, seconds: number, now: Date): Promise<void> {
  const before = await read(db);
  // The previous server may have issued a token just before it stopped.
  const earlierUntil = before ? Math.max(before.earlierUntil, now.getTime() + before.seconds * 1000) : 0;
  const value = JSON.stringify({ seconds, earlierUntil } satisfies Recorded);
  await exec(db.insert(meta)
    .values({ key: KEY, value, updatedAt: now })
    .onConflictDoUpdate({ target: meta.key, set: { value, updatedAt: now } }));
}

/**
 * Seconds a key retired at `now` must stay published: the longest lifetime of a token still valid,
 * and at least `ownSeconds` (the caller's own configuration). With nothing recorded (a database no
 * server of this version has run on, e.g. a fresh restore) `unrecordedSeconds` is used.
 */
export async function retiringWindowSeconds(db: Db, now: Date, ownSeconds: number, unrecordedSeconds = ownSeconds): Promise<number> {
  const recorded = await read(db);
  if (!recorded) return Math.max(ownSeconds, unrecordedSeconds);
  const earlier = Math.ceil((recorded.earlierUntil - now.getTime()) / 1000);
  return Math.max(ownSeconds, recorded.seconds, earlier);
}
