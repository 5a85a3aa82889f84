/**
 * The directory sources' own counters (docs/monitoring.md), made through the plugin API's metrics
 * (`ctx.metrics.counter` answers the same counter again for the same name).
 */
import type { AppContext } from '../context.js';

const runs = (ctx: Pick<AppContext, 'metrics'>) =>
  ctx.metrics.counter({ name: 'gatehouse_directory_sync_runs_total', help: 'Directory source sync runs by result (succeeded, failed).', labelNames: ['result'] });
const binds = (ctx: Pick<AppContext, 'metrics'>) =>
  ctx.metrics.counter({ name: 'gatehouse_directory_binds_total', help: 'Password checks against a directory source by result (valid, invalid, unavailable).', labelNames: ['result'] });

/** Makes the counters (the plugin's setup), so a scrape shows them before anything is counted. */
export function registerMetrics(ctx: Pick<AppContext, 'metrics'>): void {
  runs(ctx);
  binds(ctx);
}

/** A sync run ended: `succeeded` or `failed`. */
export function countSyncRun(ctx: Pick<AppContext, 'metrics'>, result: 'succeeded' | 'failed'): void {
  runs(ctx).inc({ result });
}

/** A password checked by binding to a source: `valid`, `invalid`, or `unavailable` (503 directory_unavailable). */
export function countBind(ctx: Pick<AppContext, 'metrics'>, result: 'valid' | 'invalid' | 'unavailable'): void {
  binds(ctx).inc({ result });
}
