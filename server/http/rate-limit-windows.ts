/**
 * Rate-limit counters shared by every instance (PostgreSQL mode, issue 26): fixed windows in the
 * `rate_limit_windows` table, one row per counter key. A count is one upsert that starts a new
 * window when the row's has ended, and answers the count and the window's end, so the instances
 * behind one load balancer draw on one budget per caller. Used by the sign-in/sign-up limits
 * (accounts/rate-limits.ts) and the token endpoint's failure limiter (oauth/failure-limit.ts);
 * SQLite mode (one process) counts in memory instead and never writes here. Ended windows are
 * deleted by the retention sweeper (data-lifecycle/retention-rules.ts).
 *
 * Keys are `<scope>\n<caller>`: the scope names the limit (a route, a group, the token failures),
 * the caller is what the limit counts (an address, an address and a client).
 */
import { and, gt, gte, like, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { rateLimitWindows } from '../db/schema.js';
import { many, one } from '../db/store.js';

export interface WindowCount {
  /** Requests counted in the current window, this one included. */
  count: number;
  /** When the current window ends. */
  endsAt: Date;
}

/** Counts one request against `key` at `now` in a window of `windowMs`; answers the window's count. */
export async function countInWindow(db: Db, key: string, windowMs: number, now: Date): Promise<WindowCount> {
  const t = rateLimitWindows;
  const ended = sql`${t.windowEndsAt} <= ${now}`;
  const row = await one(db
    .insert(t)
    .values({ key, count: 1, windowEndsAt: new Date(now.getTime() + windowMs) })
    .onConflictDoUpdate({
      target: t.key,
      set: {
        count: sql`case when ${ended} then 1 else ${t.count} + 1 end`,
        windowEndsAt: sql`case when ${ended} then excluded.window_ends_at else ${t.windowEndsAt} end`,
      },
    })
    .returning({ count: t.count, endsAt: t.windowEndsAt }));
  return row!;
}

/**
 * The live windows of `scope` that reached `max` at `now` (callers over budget right now). Read
 * through the index on the window's end: only live windows are looked at, however many ended.
 */
export async function windowsOver(db: Db, scope: string, max: number, now: Date): Promise<Array<{ key: string } & WindowCount>> {
  const t = rateLimitWindows;
  return await many(db
    .select({ key: t.key, count: t.count, endsAt: t.windowEndsAt })
    .from(t)
    .where(and(gt(t.windowEndsAt, now), gte(t.count, max), like(t.key, `${scope}\n%`))));
}

/** The key of `caller` in `scope`. */
export const windowKey = (scope: string, caller: string): string => `${scope}\n${caller}`;
