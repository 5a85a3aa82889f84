/**
 * Member search (`q`: a substring of the e-mail or name, DESIGN §4.5) through the trigram index
 * `people_search` (FTS5, migration `search_and_counts`), so a search that matches few people —
 * or none — reads only their index entries instead of every member of the application.
 *
 * The index answers queries of three characters or more. It gives the people whose e-mail or
 * name contains `q` (case-insensitively); the member list then looks each up in the application's
 * (application_id, person_id) index. When more than MAX_CANDIDATES people match, the matches are
 * dense and walking the application's members in order (the LIKE path in service.ts) finds a
 * page sooner; shorter queries take that path too.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { sqlRows } from '../db/store.js';

export const MIN_INDEXED_LENGTH = 3;
export const MAX_CANDIDATES = 2_000;

/** `q` as an FTS5 phrase: quoted, so its characters are literal (a `"` is doubled). */
function phrase(q: string): string {
  return `"${q.replaceAll('"', '""')}"`;
}

/**
 * Ids of the people whose e-mail or name contains `q`, or undefined when the index cannot help
 * (`q` too short) or too many match (the caller walks the members instead).
 */
export async function searchCandidates(db: Db, q: string): Promise<string[] | undefined> {
  if ([...q].length < MIN_INDEXED_LENGTH) return undefined;
  // FTS5 ends a query string at NUL (the MATCH fails); no e-mail or name holds one, so nothing matches.
  if (q.includes('\u0000')) return [];
  const rows = await sqlRows<{ id: string }>(db, sql`SELECT p.id AS id FROM people_search JOIN people p ON p.rowid = people_search.rowid WHERE people_search MATCH ${phrase(q)} LIMIT ${MAX_CANDIDATES + 1}`);
  return rows.length > MAX_CANDIDATES ? undefined : rows.map((r) => r.id);
}
