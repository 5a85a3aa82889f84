/**
 * Who a credential names, for the check's rules (check.ts `judge`): the person and their
 * membership of the application (one prepared, index-served join), and their directory groups.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { memberships, people } from '../db/schema.js';
import { preparedPerDb } from '../db/prepared.js';
import { one } from '../db/store.js';
import { groupIdsOfPerson } from '../groups/queries.js';

const memberQuery = preparedPerDb((db) =>
  db
    .select({
      person: { id: people.id, email: people.email, name: people.name, username: people.username },
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

/** The ids of the person's directory groups, sorted (the `groups` claim's order). */
export const groupsOfPerson = (db: Db, personId: string): Promise<string[]> => groupIdsOfPerson(db, personId);
