/**
 * Directory groups' reads and writes (spec claims-and-groups.md, "Groups"). Every statement is
 * served by an index (test/integration/groups-admin.test.ts checks the plans on both engines):
 * - a person's groups: `group_members_person_idx` (person_id, group_id), covering, in id order;
 * - a group's members: the primary key (group_id, person_id);
 * - the list: `groups_created_idx` (created_at, id) by keyset, or with `q` the primary key as an
 *   id prefix range.
 */
import { asc, eq, inArray } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { groupMembers } from '../db/schema.js';
import { many } from '../db/store.js';

/** The app context or a database handle (a transaction's): the reads below take either. */
export type DbSource = Db | { db: Db };
const dbOf = (source: DbSource): Db => ('db' in source && !('$client' in source) ? source.db : (source as Db));

/** The ids of the groups `personId` is in, sorted (the `groups` claim's order). */
export async function groupIdsOfPerson(source: DbSource, personId: string): Promise<string[]> {
  const db = dbOf(source);
  const rows = await many(db
    .select({ groupId: groupMembers.groupId })
    .from(groupMembers)
    .where(eq(groupMembers.personId, personId))
    .orderBy(asc(groupMembers.groupId)));
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
    .where(inArray(groupMembers.personId, [...new Set(personIds)]))
    .orderBy(asc(groupMembers.personId), asc(groupMembers.groupId)));
  for (const row of rows) result.get(row.personId)!.push(row.groupId);
  return result;
}
