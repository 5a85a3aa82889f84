/**
 * The directory sources' reads and writes. Each statement a request runs uses an index
 * (test/integration/directory-sources-plans.test.ts checks the plans on both engines):
 * - sources by primary key, listed by `directory_sources_created_idx`;
 * - a source's people: `people_source_idx` (source_id, status), or by primary key (a page of its entries' targets);
 * - a source's entries: the primary key (source_id, kind, entry_key), keyset by entry_key;
 * - an entry by person or group: `directory_entries_target_uq` (kind, target_id);
 * - runs: `directory_sync_runs_source_idx` (source_id, started_at), by primary key.
 */
import { and, asc, count, desc, eq, gt, inArray, lt, or } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import {
  applications,
  directoryEntries,
  directorySources,
  directorySyncRuns,
  groupMembers,
  groups,
  people,
  type DirectorySource,
  type DirectorySyncRun,
} from '../db/schema.js';
import { exec, many, one } from '../db/store.js';
import { afterCursor, toPage } from '../http/pagination.js';

export async function findSource(db: Db, id: string): Promise<DirectorySource | undefined> {
  return one(db.select().from(directorySources).where(eq(directorySources.id, id)));
}

export async function listSourceRows(db: Db, cursor: string | undefined, limit: number) {
  const rows = await many(db.select().from(directorySources)
    .where(afterCursor(directorySources.createdAt, directorySources.id, cursor))
    .orderBy(asc(directorySources.createdAt), asc(directorySources.id))
    .limit(limit + 1));
  return toPage(rows, limit, (r) => ({ t: r.createdAt.getTime(), id: r.id }));
}

/** Every source, oldest first (at most ten): sign-in asks them in this order. */
export async function allSources(db: Db): Promise<DirectorySource[]> {
  return many(db.select().from(directorySources).orderBy(asc(directorySources.createdAt), asc(directorySources.id)).limit(100));
}

export async function countSources(db: Db): Promise<number> {
  return Number((await one(db.select({ n: count() }).from(directorySources)))?.n ?? 0);
}

export async function insertSource(db: Db, row: typeof directorySources.$inferInsert): Promise<void> {
  await exec(db.insert(directorySources).values(row));
}

export async function updateSourceRow(db: Db, id: string, set: Partial<typeof directorySources.$inferInsert>): Promise<void> {
  await exec(db.update(directorySources).set(set).where(eq(directorySources.id, id)));
}

export async function deleteSourceRow(db: Db, id: string): Promise<number> {
  return exec(db.delete(directorySources).where(eq(directorySources.id, id)));
}

/** How many people a source keeps, by status. */
export async function countSourcePeople(db: Db, sourceId: string): Promise<{ active: number; disabled: number }> {
  const rows = await many(db.select({ status: people.status, n: count() }).from(people).where(eq(people.sourceId, sourceId)).groupBy(people.status));
  const by = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  return { active: by.active ?? 0, disabled: by.disabled ?? 0 };
}

export async function existingApplicationIds(db: Db, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  return new Set((await many(db.select({ id: applications.id }).from(applications).where(inArray(applications.id, ids)))).map((r) => r.id));
}

// --- Entries --------------------------------------------------------------------------------

export interface EntryRow {
  entryKey: string;
  targetId: string;
  digest: string;
  disabled: boolean;
}

/**
 * A page of a source's entries of one kind, by key (keyset: `after`; `last` is the page's last key
 * whether or not its row is kept). Entries whose person or group is gone (deleted here meanwhile)
 * are left out: their entry is then new again, and its row is written over (writes.ts).
 */
export async function entryPage(db: Db, sourceId: string, kind: 'person' | 'group', after: string | undefined, limit: number): Promise<{ rows: EntryRow[]; last: string | undefined; full: boolean }> {
  const target = kind === 'person' ? people.id : groups.id;
  const rows = await many(db.select({ entryKey: directoryEntries.entryKey, targetId: directoryEntries.targetId, digest: directoryEntries.digest, disabled: directoryEntries.disabled, live: target })
    .from(directoryEntries)
    .leftJoin(kind === 'person' ? people : groups, eq(target, directoryEntries.targetId))
    .where(and(eq(directoryEntries.sourceId, sourceId), eq(directoryEntries.kind, kind), after === undefined ? undefined : gt(directoryEntries.entryKey, after)))
    .orderBy(asc(directoryEntries.entryKey))
    .limit(limit));
  return { rows: rows.filter((r) => r.live !== null).map(({ live: _live, ...r }) => r), last: rows[rows.length - 1]?.entryKey, full: rows.length === limit };
}

export async function entryOfTarget(db: Db, kind: 'person' | 'group', targetId: string) {
  return one(db.select().from(directoryEntries).where(and(eq(directoryEntries.kind, kind), eq(directoryEntries.targetId, targetId))));
}

export async function entryByKey(db: Db, sourceId: string, kind: 'person' | 'group', key: string) {
  return one(db.select().from(directoryEntries).where(and(eq(directoryEntries.sourceId, sourceId), eq(directoryEntries.kind, kind), eq(directoryEntries.entryKey, key))));
}

/**
 * The source's people among these ids (a page of its entries' targets): id, DN, username. The
 * source is compared here, not in the statement: with `source_id = ?` beside the id list, SQLite's
 * sampled statistics (`analysis_limit`, 400 rows an index) take the source for a few hundred rows
 * and read all of its people through `people_source_idx` — 126 ms a page at 100,000 people, where
 * the 500 look-ups by primary key take 8 ms (decision 0393).
 */
export async function sourcePeopleByIds(db: Db, sourceId: string, ids: string[]) {
  if (!ids.length) return [];
  const rows = await many(db.select({ id: people.id, dn: people.sourceDn, username: people.username, sourceId: people.sourceId })
    .from(people)
    .where(inArray(people.id, ids)));
  return rows.filter((r) => r.sourceId === sourceId).map(({ sourceId: _source, ...r }) => r);
}

/** The people (any source or none) holding one of these e-mail addresses or usernames. */
export async function peopleHolding(db: Db, emails: string[], usernames: string[]) {
  if (!emails.length && !usernames.length) return [];
  return many(db.select({ id: people.id, email: people.email, username: people.username, sourceId: people.sourceId })
    .from(people)
    .where(or(emails.length ? inArray(people.email, emails) : undefined, usernames.length ? inArray(people.username, usernames) : undefined)));
}

/** Local groups and other sources' groups among these ids. */
export async function groupsHolding(db: Db, ids: string[]) {
  if (!ids.length) return [];
  return many(db.select({ id: groups.id, sourceId: groups.sourceId }).from(groups).where(inArray(groups.id, ids)));
}

export async function groupMemberIds(db: Db, groupId: string): Promise<string[]> {
  return (await many(db.select({ personId: groupMembers.personId }).from(groupMembers).where(eq(groupMembers.groupId, groupId)))).map((r) => r.personId);
}

// --- Runs -----------------------------------------------------------------------------------

export async function insertRun(db: Db, row: typeof directorySyncRuns.$inferInsert): Promise<void> {
  await exec(db.insert(directorySyncRuns).values(row));
}

export async function updateRun(db: Db, id: string, set: Partial<typeof directorySyncRuns.$inferInsert>): Promise<void> {
  await exec(db.update(directorySyncRuns).set(set).where(eq(directorySyncRuns.id, id)));
}

export async function findRun(db: Db, sourceId: string, runId: string): Promise<DirectorySyncRun | undefined> {
  return one(db.select().from(directorySyncRuns).where(and(eq(directorySyncRuns.id, runId), eq(directorySyncRuns.sourceId, sourceId))));
}

/** The source's newest run (a running one is the one to answer with). */
export async function latestRun(db: Db, sourceId: string): Promise<DirectorySyncRun | undefined> {
  return one(db.select().from(directorySyncRuns).where(eq(directorySyncRuns.sourceId, sourceId)).orderBy(desc(directorySyncRuns.startedAt)).limit(1));
}

export async function listRunRows(db: Db, sourceId: string, before: { t: number; id: string } | undefined, limit: number) {
  return many(db.select().from(directorySyncRuns)
    .where(and(eq(directorySyncRuns.sourceId, sourceId), before ? or(lt(directorySyncRuns.startedAt, new Date(before.t)), and(eq(directorySyncRuns.startedAt, new Date(before.t)), lt(directorySyncRuns.id, before.id))) : undefined))
    .orderBy(desc(directorySyncRuns.startedAt), desc(directorySyncRuns.id))
    .limit(limit + 1));
}

