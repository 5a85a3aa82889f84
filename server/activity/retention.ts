/**
 * Retention of the activity counters (issue 25), as rules a sweeper runs in small batches:
 * - `activity_people` only decides whether a person was already counted today, so rows older
 *   than yesterday go (yesterday stays for requests that straddle midnight);
 * - `activity_daily` keeps 400 days (the charts show 30; a year's comparison stays possible).
 * Each rule deletes at most `batch` rows per call through its primary key (index-backed) and says
 * how many it deleted; the caller repeats while a call deletes a whole batch, yielding between
 * calls. Issue 21's sweeper takes these rules into its list; until then the activity plugin runs
 * them hourly (activity/routes.ts).
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { dayOf } from './record.js';

export const ACTIVITY_KEEP_DAYS = 400;

export interface RetentionRule {
  name: string;
  /** Deletes at most `batch` expired rows; returns how many it deleted. */
  prune(db: Db, now: Date, batch: number): number;
}

export const activityRetentionRules: RetentionRule[] = [
  {
    name: 'activity_people older than yesterday',
    prune: (db, now, batch) =>
      db.run(sql`DELETE FROM activity_people WHERE (day, application_id, person_id) IN
        (SELECT day, application_id, person_id FROM activity_people WHERE day < ${dayOf(now) - 1} LIMIT ${batch})`).changes,
  },
  {
    name: `activity_daily older than ${ACTIVITY_KEEP_DAYS} days`,
    prune: (db, now, batch) =>
      // The primary key leads with the application: one range per application, walked in batches.
      db.run(sql`DELETE FROM activity_daily WHERE (application_id, day) IN
        (SELECT application_id, day FROM activity_daily WHERE day < ${dayOf(now) - ACTIVITY_KEEP_DAYS} LIMIT ${batch})`).changes,
  },
];

/** Runs every rule to the end, one batch per turn of the event loop; returns the rows deleted per rule. */
export async function runRetentionRules(db: Db, rules: readonly RetentionRule[], now: Date, batch = 500): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  for (const rule of rules) {
    let total = 0;
    for (;;) {
      const n = rule.prune(db, now, batch);
      total += n;
      if (n < batch) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    deleted[rule.name] = total;
  }
  return deleted;
}

/** Runs the activity rules to the end; returns how many rows went. */
export async function pruneActivity(db: Db, now: Date, batch = 500): Promise<number> {
  const deleted = await runRetentionRules(db, activityRetentionRules, now, batch);
  return Object.values(deleted).reduce((a, b) => a + b, 0);
}
