/**
 * The plan of a query with `?` parameters, on either engine, for tests that check a read stays
 * index-backed as its tables grow.
 *
 * SQLite: EXPLAIN QUERY PLAN's details, joined by ` | ` (`SEARCH people USING INDEX ...`).
 * PostgreSQL: the generic plan (the one a prepared statement runs for any values, like SQLite's),
 * with sequential scans priced out so that an index the planner *can* use shows even on the empty
 * tables of a test (a tiny table is otherwise read whole, which says nothing about a big one); an
 * index it cannot use leaves a `Seq Scan`. Lines joined by ` | ` (`Index Scan using
 * people_created_idx on people ...`, `Bitmap Index Scan on people_email_trgm_idx ...`).
 */
import type { Sql } from 'postgres';
import type { Db } from '../../server/db/client.js';
import { engineOf } from '../../server/db/store.js';

export async function queryPlan(db: Db, query: string, ...params: unknown[]): Promise<string> {
  if (engineOf(db) === 'sqlite') {
    return (db.$client.prepare(`EXPLAIN QUERY PLAN ${query}`).all(...params) as { detail: string }[]).map((r) => r.detail).join(' | ');
  }
  let n = 0;
  const numbered = query.replace(/\?/g, () => `$${++n}`);
  const client = db.$client as unknown as Sql;
  const rows = await client.begin(async (tx) => {
    await tx.unsafe('SET LOCAL enable_seqscan = off');
    await tx.unsafe('SET LOCAL plan_cache_mode = force_generic_plan');
    await tx.unsafe(`PREPARE gatehouse_plan AS ${numbered}`);
    // No parameters: no parentheses (PostgreSQL refuses `EXECUTE name()`).
    const args = n === 0 ? '' : `(${Array.from({ length: n }, () => 'NULL').join(', ')})`;
    const plan = await tx.unsafe(`EXPLAIN EXECUTE gatehouse_plan${args}`);
    await tx.unsafe('DEALLOCATE gatehouse_plan');
    return plan;
  });
  return (rows as unknown as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN'].trim()).join(' | ');
}

/** Whether a PostgreSQL plan (queryPlan) reads `index`, and no table whole. */
export function usesPostgresIndex(plan: string, index: string): boolean {
  const read = new RegExp(`(Index (Only )?Scan (Backward )?using ${index} on|Bitmap Index Scan on ${index}\\b)`);
  return read.test(plan) && !/Seq Scan/.test(plan);
}
