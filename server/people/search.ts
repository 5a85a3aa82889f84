/**
 * People search for the admin list (spec administrators-and-people.md, "People": `q` matches a
 * prefix of the e-mail address, a prefix of the username, or the start of any word of the name),
 * each kind through an index:
 * - e-mail and username: a range on their unique indexes (both stored lower-case);
 * - name words: the trigram index (SQLite's FTS5 `people_search`, PostgreSQL's pg_trgm GIN on
 *   `people.name`; members/search.ts) finds names containing `q`, then those where it starts a
 *   word are kept. A trigram needs three characters: a shorter `q` matches e-mails and usernames only.
 * Each kind contributes at most MAX_PER_KIND people (a `q` that broad names no one in particular);
 * the page is then read by id, ordered by e-mail, after the cursor's e-mail.
 */
import { and, asc, gt, gte, inArray, lt } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { people } from '../db/schema.js';
import { many } from '../db/store.js';
import { searchCandidates } from '../members/search.js';

export const MAX_PER_KIND = 500;

/** Whether `q` starts a word of `name` (case-insensitive; words split on spaces, hyphens, dots, apostrophes). */
export function startsAWord(name: string, q: string): boolean {
  const lower = name.toLowerCase();
  return lower.split(/[\s\-.'’]+/).some((word) => word.startsWith(q)) || lower.startsWith(q);
}

/** Ids of the people `q` finds (lower-cased and trimmed by the caller). */
export async function searchPeopleIds(db: Db, q: string): Promise<string[]> {
  const range = (column: typeof people.email | typeof people.username) => and(gte(column, q), lt(column, `${q}\uffff`));
  const byEmail = many(db.select({ id: people.id }).from(people).where(range(people.email)).orderBy(asc(people.email)).limit(MAX_PER_KIND));
  const byUsername = many(db.select({ id: people.id }).from(people).where(range(people.username)).orderBy(asc(people.username)).limit(MAX_PER_KIND));
  const ids = new Set([...(await byEmail), ...(await byUsername)].map((r) => r.id));
  const candidates = await searchCandidates(db, q);
  if (candidates?.length) {
    const named = await many(db.select({ id: people.id, name: people.name }).from(people).where(inArray(people.id, candidates.slice(0, MAX_PER_KIND))));
    for (const row of named) if (row.name && startsAWord(row.name, q)) ids.add(row.id);
  }
  return [...ids];
}

/** The condition of a search page: one of `ids`, after the cursor's e-mail. */
export function searchPage(ids: string[], afterEmail: string | undefined) {
  return and(inArray(people.id, ids.length ? ids : ['']), afterEmail === undefined ? undefined : gt(people.email, afterEmail));
}


