/**
 * People across applications, for the panel's People page. Every read is index-backed:
 * - the list walks `people_created_idx` (created_at, id) by keyset, or, with `q`, the unique
 *   e-mail index as a prefix range (e-mails are stored lower-cased), keyset by e-mail;
 * - each row's membership count and the detail's memberships use `memberships_person_idx`.
 * A name search would scan the table, so `q` matches the start of the e-mail address only.
 */
import { and, asc, eq, gt, gte, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { applications, linkedAccounts, memberships, people } from '../db/schema.js';
import { decodeCursor, encodeCursor, toPage } from '../http/pagination.js';
import { notFound } from '../http/problem.js';
import { iso } from '../http/schemas.js';
import type { PeopleQuery } from './schemas.js';
import { one, many } from '../db/store.js';
import { isPanelClient } from '../administrators/panel-client.js';

const summary = {
  id: people.id,
  status: people.status,
  email: people.email,
  emailVerified: people.emailVerified,
  name: people.name,
  createdAt: people.createdAt,
  // Spelled out: inside a subquery drizzle would leave both columns unqualified.
  applications: sql<number>`(SELECT count(*) FROM "memberships" WHERE "memberships"."person_id" = "people"."id")`,
};

type SummaryRow = { id: string; status: 'active' | 'disabled'; email: string; emailVerified: boolean; name: string | null; createdAt: Date; applications: number };
const toWire = (r: SummaryRow) => ({ ...r, createdAt: iso(r.createdAt)! });

export async function listPeople(db: Db, query: PeopleQuery, limit: number) {
  if (query.q !== undefined) {
    const prefix = query.q.trim().toLowerCase();
    // After the cursor's e-mail (unique), within [prefix, prefix + U+FFFF).
    const after = query.cursor ? decodeCursor(query.cursor).id : undefined;
    const rows = await many(db
      .select(summary)
      .from(people)
      .where(and(gte(people.email, prefix), lt(people.email, `${prefix}\uffff`), after === undefined ? undefined : gt(people.email, after)))
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
    emailVerified: person.emailVerified,
    name: person.name,
    createdAt: iso(person.createdAt)!,
    hasPassword: person.passwordHash !== null,
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
