/**
 * The retention sweeper: off the request path, it deletes what the rules in retention-rules.ts
 * say has been kept long enough, one bounded batch at a time with a pause after each (batch.ts),
 * then, on SQLite, lets it refresh its query statistics (`PRAGMA optimize`, with a bounded
 * analysis) and hands freed pages back to the file system (`PRAGMA incremental_vacuum`, a few
 * hundred pages at a time; only databases created with incremental auto-vacuum, see db/client.ts).
 * On PostgreSQL both are autovacuum's (it analyses and reclaims as rows are deleted).
 *
 * The first pass runs within a minute of start, then every GATEHOUSE_SWEEP_INTERVAL seconds; on a
 * shared PostgreSQL one instance at a time sweeps (`singleton`), and an instance that finds
 * another sweeping skips its turn. What a pass removed, and when, is kept in `meta` (`gatehouse
 * status`, `GET /api/admin/operations`).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import { readMeta, writeMeta } from '../db/meta.js';
import { engineOf, singleton } from '../db/store.js';
import type { Clock } from '../util/clock.js';
import { memoryFreed } from '../util/memory-freed.js';
import { addCounts, BatchSizer, pause, runBatch } from './batch.js';
import { RETENTION_RULES } from './retention-rules.js';

const STATE_KEY = 'sweeper';
/** The first pass waits this long after start (or the interval, when shorter). */
export const FIRST_PASS_MS = 30_000;
/** Pages handed back per incremental-vacuum step (1 MiB of 4 KiB pages). */
const VACUUM_STEP_PAGES = 256;
/** Rows `PRAGMA optimize` may read per index when it re-analyses (bounds its cost on big tables). */
const ANALYSIS_LIMIT = 400;

export interface SweepRun {
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** Rows deleted, per rule (a rule's children are counted under `<rule>.<table>`). */
  pruned: Record<string, number>;
  total: number;
  /** Pages handed back to the file system. */
  vacuumedPages: number;
  /** Set when the pass stopped on an error (it is tried again at the next interval). */
  error: string | null;
}

export interface SweeperRecord {
  lastRun: SweepRun | null;
  /** Passes since this database was created. */
  runs: number;
  /** Rows deleted by every pass so far. */
  prunedTotal: number;
}

export async function readSweeperRecord(db: Db): Promise<SweeperRecord> {
  return (await readMeta<SweeperRecord>(db, STATE_KEY)) ?? { lastRun: null, runs: 0, prunedTotal: 0 };
}

interface SweepOptions {
  /** Called between batches; resolves when the next batch may run (the background pause). */
  between?: (batchMs: number) => Promise<void>;
  /** Checked between batches: a stopping server ends the pass early. */
  stopped?: () => boolean;
  /** Told about a step that held the event loop for more than SLOW_MS (batches aim at a few ms). */
  slow?: (what: string, ms: number) => void;
}

const SLOW_MS = 100;

/** One pass over every rule; records and returns what it did. */
export async function sweep(db: Db, config: Config, clock: Clock, options: SweepOptions = {}): Promise<SweepRun> {
  const between = options.between ?? pause;
  const stopped = options.stopped ?? (() => false);
  const started = clock.now();
  const t0 = performance.now();
  const pruned: Record<string, number> = {};
  const sizer = BatchSizer.for(db);
  let vacuumedPages = 0;
  let error: string | null = null;
  try {
    for (const rule of RETENTION_RULES) {
      const days = rule.keep ? config.retention[rule.keep] : 0;
      if (rule.keep && days === 0) continue; // kept for ever
      const now = clock.now();
      const step = { ...rule, where: rule.where(new Date(now.getTime() - days * 86_400_000), now) };
      for (;;) {
        if (stopped()) break;
        const batch = await runBatch(db, step, sizer);
        if (batch.ms > SLOW_MS) options.slow?.(rule.name, batch.ms);
        addCounts(pruned, batch.removed);
        if (batch.done) break;
        await between(batch.ms);
      }
    }
    if (!stopped() && engineOf(db) === 'sqlite') {
      const sqlite = db.$client;
      sqlite.pragma(`analysis_limit = ${ANALYSIS_LIMIT}`);
      const t = performance.now();
      // 0x10002: ANALYZE (0x02) every table that needs it (0x10000), not only those this connection
      // queried lately: a table first analysed at a few rows and grown since (people after a
      // directory's first sync, sessions after a busy week) is otherwise read whole for each IN
      // list (decision 0393). SQLite re-analyses only tables whose size changed many-fold since
      // their statistics, so a pass usually analyses nothing; analysis_limit bounds what it does.
      sqlite.pragma('optimize=0x10002');
      if (performance.now() - t > SLOW_MS) options.slow?.('PRAGMA optimize', performance.now() - t);
      if (sqlite.pragma('auto_vacuum', { simple: true }) === 2) {
        while (!stopped() && (sqlite.pragma('freelist_count', { simple: true }) as number) > 0) {
          const t = performance.now();
          const before = sqlite.pragma('freelist_count', { simple: true }) as number;
          sqlite.pragma(`incremental_vacuum(${VACUUM_STEP_PAGES})`);
          vacuumedPages += before - (sqlite.pragma('freelist_count', { simple: true }) as number);
          await between(performance.now() - t);
        }
      }
    }
  } catch (caught) {
    error = (caught as Error)?.message ?? String(caught);
  }
  const run: SweepRun = {
    startedAt: started.toISOString(),
    finishedAt: clock.now().toISOString(),
    durationMs: Math.round(performance.now() - t0),
    pruned,
    total: Object.values(pruned).reduce((a, b) => a + b, 0),
    vacuumedPages,
    error,
  };
  // A pass that outlived its SQLite connection (closed under it) has nowhere to record itself.
  if (engineOf(db) === 'postgres' || db.$client.open) {
    const record = await readSweeperRecord(db);
    await writeMeta(db, STATE_KEY, { lastRun: run, runs: record.runs + 1, prunedTotal: record.prunedTotal + run.total } satisfies SweeperRecord, clock.now());
  }
  return run;
}

export interface SweeperStatus {
  intervalSeconds: number;
  running: boolean;
  /** When the next scheduled pass starts; null when the schedule is off. */
  nextRunAt: string | null;
  lastRun: SweepRun | null;
  runs: number;
  prunedTotal: number;
}

/** The schedule around `sweep`: first pass within a minute, then every interval; one pass at a time. */
export class Sweeper {
  private current: Promise<SweepRun | undefined> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private nextRunAt: Date | null = null;
  private stopping = false;

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Starts the schedule (when GATEHOUSE_SWEEP_INTERVAL is not 0). */
  start(): void {
    if (this.config.sweepInterval === 0) return;
    this.schedule(Math.min(FIRST_PASS_MS, this.config.sweepInterval * 1000));
  }

  private schedule(ms: number): void {
    this.nextRunAt = new Date(this.clock.now().getTime() + ms);
    this.timer = setTimeout(() => {
      void this.runNow().finally(() => {
        if (!this.stopping) this.schedule(this.config.sweepInterval * 1000);
      });
    }, ms);
    this.timer.unref();
  }

  /**
   * Runs a pass now, or joins the one under way; undefined when another instance on the same
   * PostgreSQL is sweeping (its pass is the one recorded).
   */
  runNow(): Promise<SweepRun | undefined> {
    const slow = (what: string, ms: number) => this.log.warn({ step: what, ms: Math.round(ms) }, 'slow retention step');
    this.current ??= singleton(this.db, 'sweeper', () => sweep(this.db, this.config, this.clock, { stopped: () => this.stopping, slow }))
      .then((job) => {
        if (!job.ran) return undefined;
        // The pass read every ruled table: what it read and built is garbage now, and the idle
        // reclaim gives it back at the next quiet moment instead of after 4 MB more growth (0486).
        memoryFreed();
        const run = job.value;
        if (run.error) this.log.error({ error: run.error, pruned: run.pruned }, 'retention sweep failed');
        else if (run.total || run.vacuumedPages) this.log.info({ pruned: run.pruned, vacuumedPages: run.vacuumedPages, ms: run.durationMs }, 'retention sweep');
        return run;
      })
      .catch((error: unknown) => {
        this.log.error({ err: error }, 'retention sweep could not start');
        return undefined;
      })
      .finally(() => {
        this.current = undefined;
      });
    return this.current;
  }

  async status(): Promise<SweeperStatus> {
    const record = await readSweeperRecord(this.db);
    return {
      intervalSeconds: this.config.sweepInterval,
      running: this.current !== undefined,
      nextRunAt: this.timer && this.nextRunAt ? this.nextRunAt.toISOString() : null,
      ...record,
    };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.current;
  }
}
