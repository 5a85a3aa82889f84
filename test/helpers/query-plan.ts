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

/**
 * Runs `work` and returns the SQL text of every statement it ran, as the driver received it (on
 * SQLite each run of a better-sqlite3 statement, so one prepared once per handle by db/prepared.ts
 * counts each time; on PostgreSQL each `unsafe` call): plan tests read the SQL the server runs, not
 * a copy of it.
 */
export async function statementsSent(db: Db, work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  type Patchable = Record<string, (...args: unknown[]) => unknown>;
  const patches: [Patchable, string, (...args: unknown[]) => unknown][] = [];
  const patch = (target: Patchable, name: string, sqlOf: (self: unknown, args: unknown[]) => string) => {
    const original = target[name]!;
    patches.push([target, name, original]);
    target[name] = function (this: unknown, ...args: unknown[]) {
      seen.push(sqlOf(this, args));
      return original.apply(this, args);
    };
  };
  if (engineOf(db) === 'sqlite') {
    const statement = Object.getPrototypeOf(db.$client.prepare('SELECT 1')) as Patchable;
    for (const name of ['run', 'get', 'all', 'iterate']) patch(statement, name, (self) => (self as { source: string }).source);
  } else {
    patch(db.$client as unknown as Patchable, 'unsafe', (_self, args) => String(args[0]));
  }
  try {
    await work();
  } finally {
    for (const [target, name, original] of patches.reverse()) target[name] = original;
  }
  return seen;
}

/** The plan (queryPlan) of a statement as statementsSent saw it, its parameters unbound. */
export async function planOfSent(db: Db, statement: string): Promise<string> {
  const sql = statement.replace(/\$\d+/g, '?');
  return await queryPlan(db, sql, ...Array.from({ length: sql.split('?').length - 1 }, () => null));
}

/**
 * SQLite: a people table that outgrew its statistics, for tests of what re-analyses it. One person
 * is inserted and analysed (the statistics the sweeper's `PRAGMA optimize` leaves a minute after
 * start: a one-person table), then 3,000 more in one transaction, so that under those statistics
 * SQLite reads all 3,001 people for a look-up by e-mail address or username (`SCAN people`).
 * Returns how many people the table holds.
 */
export function peopleOutgrowingStatistics(db: Db): number {
  const client = db.$client;
  const insert = client.prepare("INSERT INTO people (id, email, username, email_verified, status, created_at, updated_at) VALUES (?, ?, ?, 1, 'active', 0, 0)");
  insert.run('usr_first', 'first@example.com', 'first');
  client.exec('ANALYZE people');
  client.transaction(() => {
    for (let i = 0; i < 3000; i++) insert.run(`usr_${i}`, `person${i}@example.com`, `person${i}`);
  })();
  return (client.prepare('SELECT count(*) AS n FROM people').get() as { n: number }).n;
}
