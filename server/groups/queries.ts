/**
 * Directory groups' reads and writes (spec claims-and-groups.md, "Groups"). Every statement is
 * served by an index (test/integration/groups-admin.test.ts checks the plans on both engines):
 * - a person's groups: `group_members_person_idx` (person_id, group_id), then each group by its
 *   primary key, in id order;
 * - a group's members: the primary key (group_id, person_id), keyset by person id, each person
 *   by theirs;
 * - the list: `groups_created_idx` (created_at, id) by keyset, or with `q` the primary key as an
 *   id prefix range, keyset by id.
 *
 * Reads of memberships start from `groups`: a deleted group's member rows may outlive it for a
 * while (the purge plan removes them in batches), and must not show.
 */
import { and, asc, count, eq, gt, gte, inArray, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { groupMembers, groups, people, type Group } from '../db/schema.js';
import { exec, many, one } from '../db/store.js';
import { decodeCursor, encodeCursor, toPage } from '../http/pagination.js';

/** The app context or a database handle (a transaction's): the reads below take either. */
export type DbSource = Db | { db: Db };
const dbOf = (source: DbSource): Db => ('$client' in source ? source : source.db);

/**
 * Prepared once per handle (db/prepared.ts): token grants and LDAP binds ask it on every request.
 * Joined with `groups` (a primary-key look-up per group): a deleted group's rows may linger until purged.
 */
const groupsOfOne = preparedPerDb((db) =>
  db
    .select({ groupId: groupMembers.groupId })
    .from(groupMembers)
    .innerJoin(groups, eq(groups.id, groupMembers.groupId))
    .where(eq(groupMembers.personId, sql.placeholder('personId')))
    .orderBy(asc(groupMembers.groupId))
    .prepare(),
);

/** The ids of the groups `personId` is in, sorted (the `groups` claim's order). */
export async function groupIdsOfPerson(source: DbSource, personId: string): Promise<string[]> {
  const rows = await many(groupsOfOne(dbOf(source)), { personId });
  return rows.map((r) => r.groupId);
}

/** For many people at once: person id → their group ids, sorted (everyone asked about has an entry). */
export async function groupIdsOfPeople(source: DbSource, personIds: readonly string[]): Promise<Map<string, string[]>> {
  const db = dbOf(source);
  const result = new Map<string, string[]>(personIds.map((id) => [id, []]));
  if (personIds.length === 0) return result;
  const rows = await many(db
    .select({ personId: groupMembers.personId, groupId: groupMembers.groupId })
    .from(groupMembers)
    .innerJoin(groups, eq(groups.id, groupMembers.groupId))
    .where(inArray(groupMembers.personId, [...new Set(personIds)]))
    .orderBy(asc(groupMembers.personId), asc(groupMembers.groupId)));
  for (const row of rows) result.get(row.personId)!.push(row.groupId);
  return result;
}

/** The groups `personId` is in, by id: `{ id, name }` for the admin API and the panel. */
export async function groupsOfPerson(db: Db, personId: string): Promise<Array<{ id: string; name: string }>> {
  return many(db
    .select({ id: groups.id, name: groups.name })
    .from(groupMembers)
    .innerJoin(groups, eq(groups.id, groupMembers.groupId))
    .where(eq(groupMembers.personId, personId))
    .orderBy(asc(groupMembers.groupId)));
}

/** How many groups a person is in (the 200 limit): an index range of at most 200 entries. */
export async function countGroupsOfPerson(db: Db, personId: string): Promise<number> {
  const row = await one(db
    .select({ n: count() })
    .from(groupMembers)
    .innerJoin(groups, eq(groups.id, groupMembers.groupId))
    .where(eq(groupMembers.personId, personId)));
  return Number(row?.n ?? 0);
}

/** How many groups there are (the 1,000 limit): at most 1,000 index entries. */
export async function countGroups(db: Db): Promise<number> {
  return Number((await one(db.select({ n: count() }).from(groups)))?.n ?? 0);
}

export async function findGroup(db: Db, id: string): Promise<Group | undefined> {
  return one(db.select().from(groups).where(eq(groups.id, id)));
}

/** Which of `ids` are groups (invitations naming groups, pickers). */
export async function existingGroupIds(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await many(db.select({ id: groups.id }).from(groups).where(inArray(groups.id, [...new Set(ids)])));
  return new Set(rows.map((r) => r.id));
}

/** One page of groups: by creation (keyset), or with `q` those whose id starts with it (keyset by id). */
export async function listGroupRows(db: Db, query: { q?: string; cursor?: string }, limit: number): Promise<{ items: Group[]; nextCursor: string | null }> {
  if (query.q !== undefined) {
    const prefix = query.q.trim().toLowerCase();
    const after = query.cursor ? decodeCursor(query.cursor).id : undefined;
    const rows = await many(db
      .select()
      .from(groups)
      .where(and(gte(groups.id, prefix), lt(groups.id, `${prefix}\uffff`), after === undefined ? undefined : gt(groups.id, after)))
      .orderBy(asc(groups.id))
      .limit(limit + 1));
    return toPage(rows, limit, (r) => ({ t: 0, id: r.id }));
  }
  const key = query.cursor ? decodeCursor(query.cursor) : undefined;
  // A row-value comparison, so SQLite starts the index walk at the cursor (an OR would not).
  const rows = await many(db
    .select()
    .from(groups)
    .where(key ? sql`(${groups.createdAt}, ${groups.id}) > (${key.t}, ${key.id})` : undefined)
    .orderBy(asc(groups.createdAt), asc(groups.id))
    .limit(limit + 1));
  return toPage(rows, limit, (r) => ({ t: r.createdAt.getTime(), id: r.id }));
}

export interface GroupMemberRow {
  personId: string;
  email: string;
  username: string;
  name: string | null;
  addedAt: Date;
}

/** One page of a group's members, by person id (the primary key's order; ids are time-ordered). */
export async function listMemberRows(db: Db, groupId: string, cursor: string | undefined, limit: number): Promise<{ items: GroupMemberRow[]; nextCursor: string | null }> {
  const after = cursor ? decodeCursor(cursor).id : undefined;
  const rows = await many(db
    .select({ personId: groupMembers.personId, email: people.email, username: people.username, name: people.name, addedAt: groupMembers.addedAt })
    .from(groupMembers)
    .innerJoin(people, eq(people.id, groupMembers.personId))
    .where(and(eq(groupMembers.groupId, groupId), after === undefined ? undefined : gt(groupMembers.personId, after)))
    .orderBy(asc(groupMembers.personId))
    .limit(limit + 1));
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeCursor({ t: 0, id: last.personId }) : null };
}

export async function insertGroup(db: Db, row: typeof groups.$inferInsert): Promise<void> {
  await exec(db.insert(groups).values(row));
}

export async function updateGroupRow(db: Db, id: string, set: Partial<Pick<Group, 'name' | 'description' | 'updatedAt'>>): Promise<void> {
  await exec(db.update(groups).set(set).where(eq(groups.id, id)));
}

/** Deletes the group's own row (its members go in the purge plan's batches). */
export async function deleteGroupRow(db: Db, id: string): Promise<number> {
  return exec(db.delete(groups).where(eq(groups.id, id)));
}

export async function isMember(db: Db, groupId: string, personId: string): Promise<boolean> {
  const row = await one(db.select({ g: groupMembers.groupId }).from(groupMembers).where(and(eq(groupMembers.groupId, groupId), eq(groupMembers.personId, personId))));
  return row !== undefined;
}

export interface PersonRef {
  id: string;
  email: string;
  username: string;
}

/** Who a membership is about (for audit and webhook data). */
export async function findPersonRef(db: Db, id: string): Promise<PersonRef | undefined> {
  return one(db.select({ id: people.id, email: people.email, username: people.username }).from(people).where(eq(people.id, id)));
}

/** Adds a membership unless it exists; true when it was added. */
export async function insertMember(db: Db, groupId: string, personId: string, at: Date): Promise<boolean> {
  return (await exec(db.insert(groupMembers).values({ groupId, personId, addedAt: at }).onConflictDoNothing())) > 0;
}

/** Removes a membership; true when there was one. */
export async function deleteMember(db: Db, groupId: string, personId: string): Promise<boolean> {
  return (await exec(db.delete(groupMembers).where(and(eq(groupMembers.groupId, groupId), eq(groupMembers.personId, personId))))) > 0;
}
