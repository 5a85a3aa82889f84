/**
 * The directory's reads (spec ldap.md): an application's active members (whose person is not
 * disabled) with their person rows,
 * and the groups with the members they show. Each statement is served by an index (the query-plan
 * test in test/integration/ldap-directory.test.ts checks them on both engines):
 * - members in slices: `memberships_app_status_idx` (application_id, status, joined_at, id), keyset;
 * - one member by username, e-mail, id or uidNumber: the person's unique index, then
 *   `memberships_app_person_uq`;
 * - a group's members in slices: the `group_members` primary key (group_id, person_id), keyset;
 * - groups: their primary key (by id, keyset) or `groups_gid_number_uq`;
 * - the members a group shows: `group_members` by its primary key joined to
 *   `memberships_app_person_uq` and `people`'s primary key.
 * People's groups (memberOf) come from the groups feature's own query (groups/queries.ts).
 */
import { and, asc, eq, gt, inArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { groupMembers, groups, memberships, people, type Person } from '../db/schema.js';
import { many } from '../db/store.js';

/** A member as the directory shows them, with where a keyset scan stands after them. */
export interface MemberRow {
  person: Pick<Person, 'id' | 'username' | 'email' | 'name' | 'givenName' | 'familyName' | 'uidNumber' | 'createdAt' | 'updatedAt'>;
  joinedAt: Date;
  membershipId: string;
}

export type GroupRow = Pick<typeof groups.$inferSelect, 'id' | 'name' | 'description' | 'gidNumber' | 'createdAt' | 'updatedAt'>;

const personColumns = {
  id: people.id,
  username: people.username,
  email: people.email,
  name: people.name,
  givenName: people.givenName,
  familyName: people.familyName,
  uidNumber: people.uidNumber,
  createdAt: people.createdAt,
  updatedAt: people.updatedAt,
};

const groupColumns = {
  id: groups.id,
  name: groups.name,
  description: groups.description,
  gidNumber: groups.gidNumber,
  createdAt: groups.createdAt,
  updatedAt: groups.updatedAt,
};

/** The application's active members who may sign in at all (a disabled person is in no directory). */
const activeMemberOf = (applicationId: string) =>
  and(eq(memberships.applicationId, applicationId), eq(memberships.status, 'active'), eq(memberships.personId, people.id), eq(people.status, 'active'));

/** The application's active members after `after` (join time, membership id), `limit` of them. */
export async function membersAfter(db: Db, applicationId: string, after: { t: number; id: string } | undefined, limit: number): Promise<MemberRow[]> {
  return await many(membersAfterQuery(db, applicationId, after, limit));
}

export function membersAfterQuery(db: Db, applicationId: string, after: { t: number; id: string } | undefined, limit: number) {
  return db
    .select({ person: personColumns, joinedAt: memberships.joinedAt, membershipId: memberships.id })
    .from(memberships)
    .innerJoin(people, eq(people.id, memberships.personId))
    .where(and(
      eq(memberships.applicationId, applicationId),
      eq(memberships.status, 'active'),
      eq(people.status, 'active'),
      after ? sql`(${memberships.joinedAt}, ${memberships.id}) > (${after.t}, ${after.id})` : undefined,
    ))
    .orderBy(asc(memberships.joinedAt), asc(memberships.id))
    .limit(limit);
}

export type MemberKey = 'username' | 'email' | 'id' | 'uidNumber';

const keyColumns = { username: people.username, email: people.email, id: people.id, uidNumber: people.uidNumber };

/** One member by one key: the bind-and-search path of every LDAP sign-in, so prepared once per handle (db/prepared.ts). */
function memberByKey(db: Db, key: MemberKey) {
  return db
    .select({ person: personColumns, joinedAt: memberships.joinedAt, membershipId: memberships.id })
    .from(people)
    .innerJoin(memberships, and(eq(memberships.applicationId, sql.placeholder('applicationId')), eq(memberships.status, 'active'), eq(memberships.personId, people.id), eq(people.status, 'active')))
    .where(eq(keyColumns[key] as typeof people.username, sql.placeholder('value')))
    .prepare();
}
const memberByOne = preparedPerDb((db) => ({
  username: memberByKey(db, 'username'),
  email: memberByKey(db, 'email'),
  id: memberByKey(db, 'id'),
  uidNumber: memberByKey(db, 'uidNumber'),
}));

/** The application's active members whose `key` is one of `values`, ordered by username. */
export async function membersBy(db: Db, applicationId: string, key: MemberKey, values: readonly (string | number)[]): Promise<MemberRow[]> {
  if (values.length === 0) return [];
  if (values.length === 1) return await many(memberByOne(db)[key], { applicationId, value: values[0] });
  return await many(membersByQuery(db, applicationId, key, values));
}

export function membersByQuery(db: Db, applicationId: string, key: MemberKey, values: readonly (string | number)[]) {
  const column = keyColumns[key];
  return db
    .select({ person: personColumns, joinedAt: memberships.joinedAt, membershipId: memberships.id })
    .from(people)
    .innerJoin(memberships, activeMemberOf(applicationId))
    .where(inArray(column as typeof people.username, values as string[]))
    .orderBy(asc(people.username));
}

/** The application's active members in group `groupId` after person id `after`, `limit` of them. */
export async function groupMembersAfter(db: Db, applicationId: string, groupId: string, after: string | undefined, limit: number): Promise<MemberRow[]> {
  return await many(groupMembersAfterQuery(db, applicationId, groupId, after, limit));
}

export function groupMembersAfterQuery(db: Db, applicationId: string, groupId: string, after: string | undefined, limit: number) {
  return db
    .select({ person: personColumns, joinedAt: memberships.joinedAt, membershipId: memberships.id })
    .from(groupMembers)
    .innerJoin(people, eq(people.id, groupMembers.personId))
    .innerJoin(memberships, activeMemberOf(applicationId))
    .where(and(eq(groupMembers.groupId, groupId), after === undefined ? undefined : gt(groupMembers.personId, after)))
    .orderBy(asc(groupMembers.personId))
    .limit(limit);
}

/** Groups by id after `after`, `limit` of them (at most 1,000 exist). */
export async function groupsAfter(db: Db, after: string | undefined, limit: number): Promise<GroupRow[]> {
  return await many(groupsAfterQuery(db, after, limit));
}

export function groupsAfterQuery(db: Db, after: string | undefined, limit: number) {
  return db
    .select(groupColumns)
    .from(groups)
    .where(after === undefined ? undefined : gt(groups.id, after))
    .orderBy(asc(groups.id))
    .limit(limit);
}

/** Groups whose id, or gidNumber, is one of `values`, by id. */
export async function groupsBy(db: Db, key: 'id' | 'gidNumber', values: readonly (string | number)[]): Promise<GroupRow[]> {
  if (values.length === 0) return [];
  return await many(groupsByQuery(db, key, values));
}

export function groupsByQuery(db: Db, key: 'id' | 'gidNumber', values: readonly (string | number)[]) {
  const where: SQL = key === 'id' ? inArray(groups.id, values as string[]) : inArray(groups.gidNumber, values as number[]);
  return db.select(groupColumns).from(groups).where(where).orderBy(asc(groups.id));
}

/** For each of `groupIds`, the usernames of the application's active members in it, sorted. */
export async function viewMembersOfGroups(db: Db, applicationId: string, groupIds: readonly string[]): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>(groupIds.map((id) => [id, []]));
  if (groupIds.length === 0) return result;
  for (const row of await many(viewMembersOfGroupsQuery(db, applicationId, groupIds))) result.get(row.groupId)?.push(row.username);
  return result;
}

export function viewMembersOfGroupsQuery(db: Db, applicationId: string, groupIds: readonly string[]) {
  return db
    .select({ groupId: groupMembers.groupId, username: people.username })
    .from(groupMembers)
    .innerJoin(people, eq(people.id, groupMembers.personId))
    .innerJoin(memberships, activeMemberOf(applicationId))
    .where(inArray(groupMembers.groupId, [...groupIds]))
    .orderBy(asc(groupMembers.groupId), asc(people.username));
}
