/**
 * Retention of the tables the OAuth feature grows (spec grants-and-logout.md; CONVENTIONS
 * "Thinking in years of data"):
 * - `device_authorizations`: a row is useless once expired (10 minutes), decided or not;
 * - `backchannel_logouts`: finished deliveries are kept `LOGOUT_LOG_DAYS` (30) days for the log.
 * (`session_clients` rows go with their session, by cascade.)
 *
 * Each rule deletes in batches of `BATCH` rows by an index, yielding to the event loop between
 * batches. This small pruner runs them after start-up and then every 10 minutes; when the
 * data-lifecycle sweeper (issue 21) is merged, `OAUTH_RETENTION` moves into its rules instead.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import type { Db } from '../db/client.js';
import { pruneDeviceAuthorizations } from './device/store.js';
import { LOGOUT_LOG_DAYS, pruneBackchannelLogouts } from './backchannel/log.js';

const BATCH = 500;
const FIRST_RUN_MS = 30_000;
const EVERY_MS = 10 * 60_000;
const DAY_MS = 86_400_000;

export interface PruneRule {
  name: string;
  /** Deletes up to `limit` rows that are past retention at `now`; returns how many. */
  run(db: Db, now: Date, limit: number): number;
}

export const OAUTH_RETENTION: PruneRule[] = [
  { name: 'device authorizations (expired)', run: (db, now, limit) => pruneDeviceAuthorizations(db, now, limit) },
  {
    name: 'back-channel logouts (finished, 30 days)',
    run: (db, now, limit) => pruneBackchannelLogouts(db, new Date(now.getTime() - LOGOUT_LOG_DAYS * DAY_MS), limit),
  },
];

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Runs every rule to the end, a batch at a time; returns the rows deleted per rule. */
export async function pruneOnce(ctx: AppContext, rules = OAUTH_RETENTION): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  for (const rule of rules) {
    let total = 0;
    for (;;) {
      const n = rule.run(ctx.db, ctx.clock.now(), BATCH);
      total += n;
      if (n < BATCH) break;
      await tick();
    }
    deleted[rule.name] = total;
  }
  return deleted;
}

/** Starts the periodic pruning; returns the function that stops it. */
export function startPruning(ctx: AppContext, log: FastifyBaseLogger): () => void {
  let timer: NodeJS.Timeout;
  let stopped = false;
  const run = () => {
    pruneOnce(ctx)
      .catch((error: unknown) => log.error({ err: error }, 'pruning OAuth tables failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(run, EVERY_MS).unref();
      });
  };
  timer = setTimeout(run, FIRST_RUN_MS).unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
