/**
 * People across applications, for the panel's People page. Every read is index-backed:
 * - the list walks `people_created_idx` (created_at, id) by keyset, or, with `q`, the people
 *   search.ts finds (e-mail and username prefixes, words of the name, each through an index),
 *   keyset by e-mail;
 * - each row's membership count and the detail's memberships use `memberships_person_idx`.
 * - the detail's groups use `group_members_person_idx` (groups/queries.ts).
 */
import { asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { applications, linkedAccounts, memberships, people, type Person } from '../db/schema.js';
import { decodeCursor, encodeCursor, toPage } from '../http/pagination.js';
import { notFound } from '../http/problem.js';
import { iso } from '../http/schemas.js';
import type { PeopleQuery } from './schemas.js';
import { exec, one, many } from '../db/store.js';
import { isPanelClient } from '../http/schemas.js';
import { searchPage, searchPeopleIds } from './search.js';
import { secondFactorSummary } from '../accounts/second-factor/service.js';
import { groupsOfPerson } from '../groups/queries.js';

const summary = {
  id: people.id,
  status: people.status,
  email: people.email,
  username: people.username,
  emailVerified: people.emailVerified,
  name: people.name,
  createdAt: people.createdAt,
  // Spelled out: inside a subquery drizzle would leave both columns unqualified.
  applications: sql<number>`(SELECT count(*) FROM "memberships" WHERE "memberships"."person_id" = "people"."id")`,
};

type SummaryRow = { id: string; status: 'active' | 'disabled'; email: string; username: string; emailVerified: boolean; name: string | null; createdAt: Date; applications: number };
const toWire = (r: SummaryRow) => ({ ...r, createdAt: iso(r.createdAt)! });

export async function listPeople(db: Db, query: PeopleQuery, limit: number) {
  if (query.q !== undefined) {
    const prefix = query.q.trim().toLowerCase();
    // After the cursor's e-mail (unique), within [prefix, prefix + U+FFFF).
    const after = query.cursor ? decodeCursor(query.cursor).id : undefined;
    // A prefix of the e-mail or username, or the start of a word of the name (search.ts).
    const ids = await searchPeopleIds(db, prefix);
    const rows = await many(db
      .select(summary)
      .from(people)
      .where(searchPage(ids, after))
      .orderBy(asc(people.email))
      .limit(limit + 1));
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return { people: items.map(toWire), nextCursor: rows.length > limit && last ? encodeCursor({ t: 0, id: last.email }) : null };
  }
  // A row-value comparison, so SQLite starts the index walk at the cursor (an OR would not).
  const key = query.cursor ? decodeCursor(query.cursor) : undefined;
  const rows = await many(db
    .select(summary)
    .from(people)
    .where(key ? sql`(${people.createdAt}, ${people.id}) > (${key.t}, ${key.id})` : undefined)
    .orderBy(asc(people.createdAt), asc(people.id))
    .limit(limit + 1));
  const page = toPage(rows, limit, (r) => ({ t: r.createdAt.getTime(), id: r.id }));
  return { people: page.items.map(toWire), nextCursor: page.nextCursor };
}

export async function getPerson(db: Db, id: string) {
  const person = await one(db.select().from(people).where(eq(people.id, id)));
  if (!person) throw notFound('person_not_found', `There is no person with id "${id}".`);
  const member = await many(db
    .select({ m: memberships, applicationName: applications.name })
    .from(memberships)
    .innerJoin(applications, eq(applications.id, memberships.applicationId))
    .where(eq(memberships.personId, id))
    .orderBy(asc(memberships.joinedAt)));
  // The panel's built-in client is not an application the person belongs to (administrators/panel-client.ts).
  const visible = member.filter(({ m }) => !isPanelClient(m.applicationId));
  const accounts = await many(db
    .select({ provider: linkedAccounts.provider, email: linkedAccounts.email, linkedAt: linkedAccounts.linkedAt })
    .from(linkedAccounts)
    .where(eq(linkedAccounts.personId, id)));
  return {
    id: person.id,
    status: person.status,
    email: person.email,
    username: person.username,
    emailVerified: person.emailVerified,
    name: person.name,
    givenName: person.givenName,
    familyName: person.familyName,
    createdAt: iso(person.createdAt)!,
    updatedAt: iso(person.updatedAt)!,
    hasPassword: person.passwordHash !== null,
    source: person.sourceId === null ? null : { id: person.sourceId, dn: person.sourceDn ?? '' },
    groups: await groupsOfPerson(db, id),
    secondFactor: await secondFactorSummary(db, person.id),
    memberships: visible.map(({ m, applicationName }) => ({
      id: m.id,
      applicationId: m.applicationId,
      applicationName,
      status: m.status,
      role: m.role,
      joinedAt: iso(m.joinedAt)!,
      lastActiveAt: iso(m.lastActiveAt),
    })),
    linkedAccounts: accounts.map((a) => ({ ...a, linkedAt: iso(a.linkedAt)! })),
  };
}

export async function findPersonRow(db: Db, id: string): Promise<Person | undefined> {
  return one(db.select().from(people).where(eq(people.id, id)));
}

export async function updatePersonRow(db: Db, id: string, set: Partial<Omit<Person, 'id' | 'createdAt'>>): Promise<void> {
  await exec(db.update(people).set(set).where(eq(people.id, id)));
}
