/**
 * Retention of the tables the OAuth feature grows (spec grants-and-logout.md; CONVENTIONS
 * "Thinking in years of data"):
 * - `device_authorizations`: a row is useless once expired (10 minutes), decided or not;
 * - `backchannel_logouts`: finished deliveries are kept `LOGOUT_LOG_DAYS` (30) days for the log.
 * (`session_clients` rows go with their session, by cascade.)
 *
 * The rules have the shape of the activity counters' (`RetentionRule`: delete at most a batch
 * through an index, say how many), and run the same way, a batch per turn of the event loop. This
 * small pruner runs them after start-up and then every 10 minutes; when the data-lifecycle
 * sweeper (issue 21) is merged, `OAUTH_RETENTION` moves into its list instead.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import { runRetentionRules, type RetentionRule } from '../activity/retention.js';
import { pruneDeviceAuthorizations } from './device/store.js';
import { LOGOUT_LOG_DAYS, pruneBackchannelLogouts } from './backchannel/log.js';

const BATCH = 500;
const FIRST_RUN_MS = 30_000;
const EVERY_MS = 10 * 60_000;
const DAY_MS = 86_400_000;

export const OAUTH_RETENTION: RetentionRule[] = [
  { name: 'device authorizations (expired)', prune: (db, now, batch) => pruneDeviceAuthorizations(db, now, batch) },
  {
    name: 'back-channel logouts (finished, 30 days)',
    prune: (db, now, batch) => pruneBackchannelLogouts(db, new Date(now.getTime() - LOGOUT_LOG_DAYS * DAY_MS), batch),
  },
];

/** Runs every rule to the end; returns the rows deleted per rule. */
export const pruneOnce = (ctx: AppContext) => runRetentionRules(ctx.db, OAUTH_RETENTION, ctx.clock.now(), BATCH);

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
