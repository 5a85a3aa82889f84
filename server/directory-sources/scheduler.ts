/**
 * Scheduled runs (spec directory-sources.md, "Sync"): once a minute, each source with a
 * `syncIntervalMinutes` whose last run is that old gets a run — changes only while its last full
 * run is less than a day old, full otherwise. One run at a time per source (sync.ts `startRun`;
 * across instances on PostgreSQL, an advisory lock). Runs in the background at normal priority:
 * a run yields between pages, so sign-ins and token requests go on meanwhile.
 */
import type { AppContext } from '../context.js';
import { allSources, latestRun } from './queries.js';
import { runFinished } from './runs.js';

export const SCHEDULE_CHECK_MS = 60_000;

export class SyncScheduler {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private busy: Promise<void> | undefined;

  constructor(private readonly ctx: AppContext, private readonly log: { warn(obj: unknown, msg: string): void }) {}

  start(): void {
    this.timer = setInterval(() => {
      if (!this.busy) this.busy = this.check().then(() => undefined).catch((error) => this.log.warn({ err: error }, 'directory sources: scheduling failed')).finally(() => (this.busy = undefined));
    }, SCHEDULE_CHECK_MS);
    this.timer.unref();
  }

  /** Starts the runs that are due; returns the sources it started. */
  async check(): Promise<string[]> {
    const started: string[] = [];
    const now = this.ctx.clock.now().getTime();
    for (const source of await allSources(this.ctx.db)) {
      if (this.stopped || source.syncIntervalMinutes === null) continue;
      const last = await latestRun(this.ctx.db, source.id);
      if (last?.state === 'running') continue;
      if (last && now - last.startedAt.getTime() < source.syncIntervalMinutes * 60_000) continue;
      // The sync engine is loaded when a source is first due (engine.ts, decision 0369).
      await (await import('./engine.js')).startRun(this.ctx, source, { full: false, trigger: 'scheduled' });
      started.push(source.id);
    }
    return started;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.busy;
    for (const source of await allSources(this.ctx.db).catch(() => [])) await runFinished(source.id);
  }
}
