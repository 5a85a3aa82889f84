/**
 * Row counts of the tables that grow (`people`, `memberships`), kept by triggers in the writing
 * transaction (SQLite migration `search_and_counts`, PostgreSQL `people_search_and_counts`), so
 * the overview never counts a table.
 *
 * SQLite keeps one row per table (`people`). PostgreSQL has concurrent writers, so its triggers add
 * to a shard per connection (`people#7`) besides the row counted by the migration; a table's count
 * is the sum of its rows. Either way the table holds a handful of rows: one read, O(1).
 */
import type { Db } from './client.js';
import { rowCounts } from './schema.js';
import { many } from './store.js';

/** Every kept count, by table name. */
export async function keptRowCounts(db: Db): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const row of await many(db.select().from(rowCounts))) {
    const table = row.name.split('#', 1)[0]!;
    counts.set(table, (counts.get(table) ?? 0) + row.n);
  }
  return counts;
}
