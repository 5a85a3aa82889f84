/**
 * The app-password reads and writes that touch drizzle tables. The bind path's look-up is one
 * statement prepared once per database handle (db/prepared.ts): the secret's hash through its
 * unique index, joined by primary keys to the person, the membership and the application.
 */
import { and, asc, count, eq, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { appPasswords, applications, memberships, people, type AppPassword } from '../db/schema.js';
import { exec, many, one } from '../db/store.js';

const p = sql.placeholder;

/** What a sign-in with an app password needs to know, and no more (the bind path reads it every time). */
const matchColumns = {
  password: { id: appPasswords.id, applicationId: appPasswords.applicationId, lastUsedAt: appPasswords.lastUsedAt },
  person: { id: people.id, email: people.email, username: people.username, name: people.name, status: people.status },
  membership: { id: memberships.id, status: memberships.status },
  application: {
    id: applications.id,
    name: applications.name,
    ldap: applications.ldap,
    forwardAuth: applications.forwardAuth,
    groupsFilter: applications.groupsFilter,
    // Whether it has RADIUS settings (server/radius/): not the settings, which hold the clients' secrets.
    radius: sql<boolean>`${applications.radius} is not null`.mapWith(Boolean),
  },
};

/** An app password with its person, membership and application, joined by their primary keys. */
const matched = (db: Db) =>
  db
    .select(matchColumns)
    .from(appPasswords)
    .innerJoin(people, eq(people.id, appPasswords.personId))
    .innerJoin(memberships, eq(memberships.id, appPasswords.membershipId))
    .innerJoin(applications, eq(applications.id, appPasswords.applicationId));

const byHash = preparedPerDb((db) => matched(db).where(eq(appPasswords.secretHash, p('hash'))).prepare());
const byId = preparedPerDb((db) => matched(db).where(eq(appPasswords.id, p('id'))).prepare());

const touch = preparedPerDb((db) =>
  db.update(appPasswords).set({ lastUsedAt: sql`${p('nowMs')}` }).where(eq(appPasswords.id, p('id'))).prepare(),
);

export type AppPasswordMatchRow = NonNullable<Awaited<ReturnType<typeof findByHash>>>;

/** The app password with this secret hash, with its person, membership and application. */
export async function findByHash(db: Db, hash: string) {
  return await one(byHash(db), { hash });
}

/** The app password with this id, with its person, membership and application. */
export async function findById(db: Db, id: string) {
  return await one(byId(db), { id });
}

export async function touchAppPassword(db: Db, id: string, now: Date): Promise<void> {
  await exec(touch(db), { id, nowMs: now.getTime() });
}

export interface AppPasswordRow {
  password: AppPassword;
  applicationName: string;
}

/** A person's app passwords, oldest first (at most APP_PASSWORDS_PER_PERSON exist). */
export async function appPasswordsOf(db: Db, personId: string): Promise<AppPasswordRow[]> {
  return await many(db
    .select({ password: appPasswords, applicationName: applications.name })
    .from(appPasswords)
    .innerJoin(applications, eq(applications.id, appPasswords.applicationId))
    .where(eq(appPasswords.personId, personId))
    .orderBy(asc(appPasswords.createdAt), asc(appPasswords.id)));
}

export async function countAppPasswordsOf(tx: Tx, personId: string): Promise<number> {
  return (await one(tx.select({ n: count() }).from(appPasswords).where(eq(appPasswords.personId, personId))))?.n ?? 0;
}

export async function insertAppPassword(tx: Tx, row: typeof appPasswords.$inferInsert): Promise<AppPassword> {
  return await one(tx.insert(appPasswords).values(row).returning());
}

/** Deletes one of the person's app passwords; the deleted row, or undefined when there was none. */
export async function deleteAppPassword(tx: Tx, personId: string, id: string): Promise<AppPassword | undefined> {
  return await one(tx.delete(appPasswords).where(and(eq(appPasswords.personId, personId), eq(appPasswords.id, id))).returning());
}
