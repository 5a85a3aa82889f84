/**
 * Bounded batches: the one way long deletes run (retention sweeps and big deletes alike). A step
 * names a table, the column that identifies a row and a condition; each batch takes at most
 * `size` matching rows in its own short transaction, so the event loop is never held for long and
 * a crash loses at most the batch in flight. The size adapts to how long the last batch took
 * (shrunk in proportion above TARGET_MS, doubled well under it), so a batch costs a few milliseconds whatever
 * the rows drag with them through `ON DELETE` cascades.
 *
 * `children` are removed first, at most `size` of them per batch, for parents that may own many
 * rows (a refresh-token family with thousands of rotated tokens): the parents go only once a
 * batch found no child left, so no single statement's cascade is unbounded.
 *
 * Every statement is built with drizzle from the schema's own tables, so both engines run the
 * same steps; the conditions come from retention-rules.ts and purge-plans.ts, and a test checks
 * that each one is served by an index. The one engine-specific word is the row's own identity
 * for tables with a composite key (`ROW_ID`): SQLite's `rowid`, PostgreSQL's `ctid` (stable
 * within the batch's transaction, which is all a batch needs).
 */
import { getTableName, inArray, sql, SQL, type SQLWrapper } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db, Tx } from '../db/client.js';
import { engineOf, exec, many, transaction } from '../db/store.js';

/** A batch aims to take about this long; the next one is resized to fit. */
export const TARGET_MS = 8;
/**
 * On PostgreSQL a batch waits on the network, not the event loop, and its round trips alone
 * (BEGIN, the statements, COMMIT) take a few milliseconds: sized to SQLite's target it would never
 * grow. This keeps its row locks short and the deletes a steady trickle for autovacuum.
 */
export const PG_TARGET_MS = 50;
const MIN_SIZE = 1;
const MAX_SIZE = 5_000;
/** Small, so the first batch (often on cold pages, sometimes inside a request) is short; it doubles quickly. */
const FIRST_SIZE = 64;

/** A row's own identity, for tables with a composite key: `rowid` on SQLite, `ctid` on PostgreSQL. */
export const ROW_ID = sql`rowid`;

export interface ChildRows {
  table: SQLiteTable;
  /** Identifies a child row (its primary key, or ROW_ID for tables with a composite key). */
  key: SQLiteColumn | SQL;
  /** The child's foreign key to the parent's `key`. */
  column: SQLiteColumn;
}

export interface BatchStep {
  /** Counted under this name (state, audit details). */
  name: string;
  table: SQLiteTable;
  /** Identifies a row: the primary key column, or ROW_ID for tables with a composite key. */
  key: SQLiteColumn | SQL;
  /** The rows this step removes (or changes). Must be served by an index. */
  where: SQL;
  /** Instead of deleting: set these columns (the values must make `where` false, or the step never ends). */
  set?: Record<string, unknown>;
  children?: ChildRows[];
  /** Rows in the first batch (default FIRST_SIZE); later batches adapt. */
  size?: number;
}

export interface BatchResult {
  /** Rows removed (or changed) by this batch, per counted name. */
  removed: Record<string, number>;
  /** True when the step has nothing left to do. */
  done: boolean;
  ms: number;
}

/** The adaptive size of each step, kept between batches. */
export class BatchSizer {
  private readonly sizes = new Map<string, number>();

  constructor(private readonly targetMs = TARGET_MS) {}

  /** A sizer aiming at the batch length that suits `db`'s engine. */
  static for(db: Db): BatchSizer {
    return new BatchSizer(engineOf(db) === 'postgres' ? PG_TARGET_MS : TARGET_MS);
  }

  size(step: BatchStep): number {
    return this.sizes.get(step.name) ?? step.size ?? FIRST_SIZE;
  }

  record(step: BatchStep, ms: number): void {
    const size = this.size(step);
    const target = this.targetMs;
    // Too slow: shrink in proportion (one slow batch is not followed by another); fast: double.
    if (ms > target) this.sizes.set(step.name, Math.max(MIN_SIZE, Math.floor((size * target) / ms)));
    else if (ms < target / 4) this.sizes.set(step.name, Math.min(MAX_SIZE, size * 2));
  }
}

const CTID = sql`ctid`;

/** Columns and ROW_ID alike, as SQL for `db`'s engine (what `inArray` and `select` take). */
function asSql(db: Db, key: SQLiteColumn | SQL): SQL {
  if (key === ROW_ID) return engineOf(db) === 'postgres' ? CTID : ROW_ID;
  return key instanceof SQL ? key : sql`${key}`;
}

/**
 * The rows whose `key` is among those `picked` selects. PostgreSQL plans `ctid IN (subquery)` as
 * a scan of the whole table against a hash of the subquery, so there the ctids go as an array,
 * which it fetches directly (a TID scan).
 */
function keyIn(key: SQL, picked: SQLWrapper): SQL {
  return key === CTID ? sql`${CTID} = ANY(ARRAY${picked})` : inArray(key, picked as Parameters<typeof inArray>[1]);
}


/**
 * Runs one batch of `step` in its own transaction. `inside` runs in that transaction too (to
 * record progress with the rows it describes).
 */
export async function runBatch(db: Db, step: BatchStep, sizer: BatchSizer, inside?: (tx: Tx, removed: Record<string, number>) => Promise<void>): Promise<BatchResult> {
  const started = performance.now();
  const size = sizer.size(step);
  const key = asSql(db, step.key);
  const result = await transaction(db, async (tx) => {
    const removed: Record<string, number> = {};
    let done: boolean;
    if (step.children?.length) {
      // Children first, bounded; the parents go once none of theirs is left.
      const parents = (await many(tx
        .select({ key })
        .from(step.table)
        .where(step.where)
        .limit(size)))
        .map((row) => row.key);
      let childrenLeft = false;
      for (const child of step.children) {
        const childKey = asSql(db, child.key);
        const picked = tx.select({ key: childKey }).from(child.table).where(inArray(child.column, parents)).limit(size);
        const n = parents.length ? await exec(tx.delete(child.table).where(keyIn(childKey, picked))) : 0;
        if (n) removed[`${step.name}.${getTableName(child.table)}`] = n;
        if (n >= size) childrenLeft = true;
      }
      if (!childrenLeft && parents.length) removed[step.name] = await exec(tx.delete(step.table).where(inArray(key, parents)));
      done = !childrenLeft && parents.length < size;
    } else {
      const picked = tx.select({ key }).from(step.table).where(step.where).limit(size);
      const n = step.set
        ? await exec(tx.update(step.table).set(step.set).where(keyIn(key, picked)))
        : await exec(tx.delete(step.table).where(keyIn(key, picked)));
      if (n) removed[step.name] = n;
      done = n < size;
    }
    await inside?.(tx, removed);
    return { removed, done };
  });
  const ms = performance.now() - started;
  sizer.record(step, ms);
  return { ...result, ms };
}

/** Adds `more` into `total`, name by name. */
export function addCounts(total: Record<string, number>, more: Record<string, number>): Record<string, number> {
  for (const [name, n] of Object.entries(more)) total[name] = (total[name] ?? 0) + n;
  return total;
}

/**
 * The pause after a batch of background work: as long as the batch took (at least 1 ms), so the
 * work uses at most half of the event loop and requests queued meanwhile go first.
 */
export function pause(afterMs: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(afterMs))));
}
