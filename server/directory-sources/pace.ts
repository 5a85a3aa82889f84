/**
 * Work sliced by time, so a sync never holds the event loop for long (spec directory-sources.md
 * "Limits": loop delay p99 ≤ 50 ms during a 100,000-person run; decision 0392).
 *
 * - `Slicer`: for CPU work item by item (mapping entries, comparing digests): `due()` says when
 *   the slice has run its time, and the caller yields (`tick`) there.
 * - `Pacer`: for writes in transactions. On SQLite a transaction runs synchronously from BEGIN to
 *   COMMIT, so its length is what the loop is held: each batch is sized from how long the last
 *   ones took per item, aiming at `targetMs`, between `min` and `max` items; the loop turns
 *   between batches. On PostgreSQL a transaction mostly waits on the network (the loop is free),
 *   so its target is longer.
 */

import { statSync } from 'node:fs';
import type { Db } from '../db/client.js';
import { engineOf } from '../db/store.js';

/** Yields to the event loop: timers and I/O (sign-ins, token requests) run before the next slice. */
export const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** How long one slice of a sync's CPU work or one SQLite write batch may hold the loop. */
export const SLICE_MS = 5;

export class Slicer {
  private started = performance.now();
  private count = 0;

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** Whether this slice has used its time (looks at the clock every 8 items). */
  due(): boolean {
    if ((++this.count & 7) !== 0) return false;
    return performance.now() - this.started >= this.sliceMs;
  }

  /** Yields and starts a new slice. */
  async yield(): Promise<void> {
    await tick();
    this.started = performance.now();
    this.count = 0;
  }

  /** Yields when the slice is due. */
  async maybeYield(): Promise<void> {
    if (this.due()) await this.yield();
  }
}

export class Pacer {
  private size: number;
  /** Milliseconds an item took, smoothed over the last batches. */
  private perItem: number | undefined;

  constructor(
    private readonly min: number,
    private readonly max: number,
    private readonly targetMs = SLICE_MS,
    /** Runs between batches (the WAL's pause: `walPacer`). */
    private readonly between: () => Promise<void> = async () => {},
  ) {
    this.size = min;
  }

  /**
   * Writes `items` in batches sized by time, yielding between them. The time is the process's
   * CPU time, not the clock's: on a shared machine the clock also counts the time other programs
   * had the core, which the batch's size cannot change (and would shrink batches to a handful,
   * each commit then writing the same index pages again).
   */
  async run<T>(items: readonly T[], write: (batch: T[]) => Promise<void>): Promise<void> {
    for (let i = 0; i < items.length;) {
      const batch = items.slice(i, i + this.size);
      const started = process.cpuUsage();
      await write(batch);
      const used = process.cpuUsage(started);
      this.took((used.user + used.system) / 1000, batch.length);
      i += batch.length;
      await tick();
      await this.between();
    }
  }

  /** Learns from a batch of `n` items that took `ms`; the next batch's size follows. */
  took(ms: number, n: number): void {
    if (n <= 0) return;
    const each = Math.max(ms / n, 0.001);
    this.perItem = this.perItem === undefined ? each : 0.5 * this.perItem + 0.5 * each;
    // Grows at most twofold a batch (one cheap batch says little), shrinks at once.
    const wanted = Math.floor(this.targetMs / this.perItem);
    this.size = Math.max(this.min, Math.min(this.max, wanted, this.size * 2));
  }

  get batchSize(): number {
    return this.size;
  }
}

/**
 * SQLite's page cache, larger while a sync runs (decision 0392). The store's bound (1 MiB,
 * decision 0487) holds ~240 pages; a sync of 100,000 people looks up and inserts keys all over
 * the people, entry, membership and audit indexes (random ids, addresses, entry UUIDs), so nearly
 * every look-up read its pages again from the file or the WAL. 64 MiB keeps those indexes' inner pages and much of
 * their leaves; back to what it was when the last run on the handle ends, and the memory returned.
 */
export const SYNC_CACHE_KIB = 64 * 1024;
const widened = new Map<object, { runs: number; previous: number }>();

export function widenSqliteCache(db: object): () => void {
  if (engineOf(db) !== 'sqlite') return () => {};
  const client = (db as Db).$client;
  const held = widened.get(client);
  if (held) held.runs++;
  else {
    widened.set(client, { runs: 1, previous: client.pragma('cache_size', { simple: true }) as number });
    client.pragma(`cache_size = -${SYNC_CACHE_KIB}`);
  }
  return () => {
    const now = widened.get(client);
    if (!now || --now.runs > 0) return;
    widened.delete(client);
    if (!client.open) return;
    client.pragma(`cache_size = ${now.previous}`);
    client.pragma('shrink_memory');
  };
}

/** Tables a sync grows whose statistics its queries' plans rest on: people (IN-lists on e-mail, username, id), entries (keyset pages). */
export const STATISTICS_TABLES = ['people', 'directory_entries'] as const;
/** Rows `ANALYZE` reads per index (the sweeper's `PRAGMA optimize` uses the same bound): about 10 ms on 100,000 people. */
export const ANALYSIS_LIMIT = 400;

/**
 * Keeps SQLite's query statistics (`sqlite_stat1`) in step with a table a run grows (decision
 * 0393). Statistics taken when `people` had one row (the sweeper's `PRAGMA optimize` a minute after
 * start) make SQLite plan `email IN (…) OR username IN (…)`, `id IN (…)` as a scan of the whole
 * table, which costs more with every person created: 36 ms a look-up at 100,000 people, half of a
 * 100,000-person run's CPU and its longest write batches. `PRAGMA optimize` does not see such a
 * table as grown, so the run analyses it itself: called with the rows the table has at least,
 * it runs `ANALYZE <table>` (bounded by `analysis_limit`) once the statistics count fewer than half
 * of them, one table a turn of the event loop. Where no statistics were ever taken, SQLite plans
 * with its defaults (indexes) and nothing is done.
 */
export function statisticsKeeper(db: object): (rows: number) => Promise<void> {
  if (engineOf(db) !== 'sqlite') return async () => {};
  const client = (db as Db).$client;
  const counted = (table: string): number | undefined => {
    try {
      const row = client.prepare('SELECT stat FROM sqlite_stat1 WHERE tbl = ? LIMIT 1').get(table) as { stat: string } | undefined;
      return row ? Number.parseInt(row.stat, 10) : undefined;
    } catch {
      return undefined; // no sqlite_stat1: never analysed
    }
  };
  return async (rows) => {
    for (const table of STATISTICS_TABLES) {
      const known = counted(table);
      if (known === undefined || rows <= 2 * known + 1000) continue;
      const limit = client.pragma('analysis_limit', { simple: true }) as number;
      client.pragma(`analysis_limit = ${ANALYSIS_LIMIT}`);
      try {
        client.exec(`ANALYZE "${table}"`);
      } finally {
        client.pragma(`analysis_limit = ${limit}`);
      }
      await tick();
    }
  };
}

/** WAL growth after which a run pauses its writes for the checkpointer (decision 0392). */
export const WAL_PAUSE_BYTES = 256 * 1024 * 1024;
/** The pause: longer than the checkpointer's tick (db/checkpointer.ts, every second). */
export const WAL_PAUSE_MS = 1_200;

/**
 * Keeps a run's WAL from growing without end on SQLite. The checkpointer copies the WAL's frames
 * into the database from a worker every second, but SQLite starts the WAL over only when a write
 * begins with every frame copied, which never happens while a sync writes without pause: the WAL
 * grew to 2 GB in a 100,000-person run, and the kernel then holds the writing thread back.
 * Called between write batches: when the WAL file has grown by WAL_PAUSE_BYTES since the last
 * pause, the run waits (the loop free) for the checkpointer to catch up, so the next write starts
 * the WAL over.
 */
export function walPacer(db: object): () => Promise<void> {
  if (engineOf(db) !== 'sqlite') return async () => {};
  const file = `${(db as Db).$client.name}-wal`;
  const size = () => {
    try {
      return statSync(file).size;
    } catch {
      return 0;
    }
  };
  let base = size();
  let checked = 0;
  return async () => {
    // A stat costs microseconds; every 20 batches is often enough at ~5 ms a batch.
    if (++checked % 20 !== 0 || size() - base < WAL_PAUSE_BYTES) return;
    await new Promise((resolve) => setTimeout(resolve, WAL_PAUSE_MS));
    base = size();
  };
}
