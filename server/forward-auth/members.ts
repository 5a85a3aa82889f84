/**
 * Who a credential names, for the check's rules (check.ts `judge`): the person and their
 * membership of the application (one prepared, index-served join), and their directory groups.
 */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { groupMembers, memberships, people } from '../db/schema.js';
import { preparedPerDb } from '../db/prepared.js';
import { many, one } from '../db/store.js';

const memberQuery = preparedPerDb((db) =>
  db
    .select({
      person: { id: people.id, email: people.email, name: people.name, username: people.username, status: people.status },
      membership: { id: memberships.id, status: memberships.status, role: memberships.role },
    })
    .from(memberships)
    .innerJoin(people, eq(people.id, memberships.personId))
    .where(and(eq(memberships.applicationId, sql.placeholder('applicationId')), eq(memberships.personId, sql.placeholder('personId'))))
    .prepare(),
);

/** The person and their membership of the application, if they are a member. */
export async function findMember(db: Db, applicationId: string, personId: string) {
  return await one(memberQuery(db), { applicationId, personId });
}

/**
 * groups/queries.ts `groupIdsOfPerson` as a statement prepared once (db/prepared.ts): a check that
 * reads the database runs it every time, and a statement built per call costs about as much as the
 * rest of the check (bench forward-auth, the rows that read the database).
 */
const groupsQuery = preparedPerDb((db) =>
  db
    .select({ groupId: groupMembers.groupId })
    .from(groupMembers)
    .where(eq(groupMembers.personId, sql.placeholder('personId')))
    .orderBy(asc(groupMembers.groupId))
    .prepare(),
);

/** The ids of the person's directory groups, sorted (the `groups` claim's order). */
export async function groupsOfPerson(db: Db, personId: string): Promise<string[]> {
  return (await many(groupsQuery(db), { personId })).map((row) => row.groupId);
}
