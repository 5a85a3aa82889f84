/**
 * Member search (`q`: a substring of the e-mail or name, DESIGN §4.5) through a trigram index, so
 * a search that matches few people — or none — reads only their index entries instead of every
 * member of the application. On SQLite the index is `people_search` (FTS5, migration
 * `search_and_counts`); on PostgreSQL, pg_trgm's GIN indexes on `people.email` and `people.name`
 * (PostgreSQL migration `people_search_and_counts`), which answer ILIKE.
 *
 * The index answers queries of three characters or more. It gives the people whose e-mail or
 * name contains `q` (case-insensitively); the member list then looks each up in the application's
 * (application_id, person_id) index. When more than MAX_CANDIDATES people match, the matches are
 * dense and walking the application's members in order (the LIKE path in service.ts) finds a
 * page sooner; shorter queries take that path too.
 *
 * Case: SQLite's index folds case over Unicode, its LIKE over ASCII only; PostgreSQL's ILIKE and
 * pg_trgm fold case as the database's LC_CTYPE does (ASCII only under the C locale). E-mails are
 * stored lower-cased, so only names can differ, and only outside ASCII.
 */
import { ilike, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { people } from '../db/schema.js';
import { engineOf, many, sqlRows } from '../db/store.js';

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
  // No e-mail or name holds a NUL, so nothing matches (FTS5 ends a query string at NUL, and
  // PostgreSQL refuses one in text): answered here, on both engines, whatever the length.
  if (q.includes('\u0000')) return [];
  if ([...q].length < MIN_INDEXED_LENGTH) return undefined;
  const rows =
    engineOf(db) === 'postgres'
      ? await many(db.select({ id: people.id }).from(people).where(containsText(db, likePattern(q))).limit(MAX_CANDIDATES + 1))
      : await sqlRows<{ id: string }>(db, sql`SELECT p.id AS id FROM people_search JOIN people p ON p.rowid = people_search.rowid WHERE people_search MATCH ${phrase(q)} LIMIT ${MAX_CANDIDATES + 1}`);
  return rows.length > MAX_CANDIDATES ? undefined : rows.map((r) => r.id);
}

/** `q` as a LIKE pattern for "contains": `%`, `_` and `\` are literal, not wildcards. */
export function likePattern(q: string): string {
  return `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The person's e-mail or name contains `pattern` (likePattern), case-insensitively: SQLite's LIKE
 * (ASCII case-insensitive; `\` declared its escape) or PostgreSQL's ILIKE (whose escape is `\`).
 */
export function containsText(db: Db, pattern: string | SQL): SQL {
  if (engineOf(db) === 'postgres') return or(ilike(people.email, pattern), ilike(people.name, pattern))!;
  return or(sql`${people.email} LIKE ${pattern} ESCAPE '\\'`, sql`${people.name} LIKE ${pattern} ESCAPE '\\'`)!;
}
