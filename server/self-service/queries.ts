/**
 * The self-service reads and writes that touch drizzle tables: a person's memberships with their
 * application, sessions and linked accounts. Rules live in `service.ts`.
 */
import { and, asc, desc, eq, gt, isNull, lte, or } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import {
  applications,
  linkedAccounts,
  memberships,
  people,
  sessions,
  type Application,
  type LinkedAccount,
  type Membership,
  type Person,
  type Session,
} from '../db/schema.js';
import { newId } from '../util/ids.js';
import { exec, one, many } from '../db/store.js';

/** A membership with its application's row (the account page's sections read what their plugins need of it). */
export interface MembershipRow {
  m: Membership;
  app: Application;
}

const appColumns = applications;

/** Every membership of the person (suspended included), oldest first. */
export async function membershipsOf(tx: Tx, personId: string): Promise<MembershipRow[]> {
  return await many(tx
    .select({ m: memberships, app: appColumns })
    .from(memberships)
    .innerJoin(applications, eq(applications.id, memberships.applicationId))
    .where(eq(memberships.personId, personId))
    .orderBy(asc(memberships.joinedAt), asc(memberships.id)));
}

export async function membershipOf(tx: Tx, personId: string, applicationId: string): Promise<MembershipRow | undefined> {
  return await one(tx
    .select({ m: memberships, app: appColumns })
    .from(memberships)
    .innerJoin(applications, eq(applications.id, memberships.applicationId))
    .where(and(eq(memberships.personId, personId), eq(memberships.applicationId, applicationId))));
}

export async function saveProfile(tx: Tx, membershipId: string, profile: Membership['profile'], now: Date): Promise<Membership> {
  return await one(tx.update(memberships).set({ profile, updatedAt: now }).where(eq(memberships.id, membershipId)).returning());
}

/** Live sessions of the person, newest first (at most `limit`). */
export async function liveSessionsOf(tx: Tx, personId: string, now: Date, limit: number): Promise<Session[]> {
  return await many(tx
    .select()
    .from(sessions)
    .where(and(eq(sessions.personId, personId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
    .orderBy(desc(sessions.createdAt), desc(sessions.id))
    .limit(limit));
}

/**
 * Sessions of the person that ended (signed out, or expired) after `since`, newest first. A
 * person has few sessions, so filtering the rows of `sessions_person_idx` is cheap.
 */
export async function endedSessionsOf(tx: Tx, personId: string, now: Date, since: Date, limit: number): Promise<Session[]> {
  return await many(tx
    .select()
    .from(sessions)
    .where(
      and(
        eq(sessions.personId, personId),
        or(
          gt(sessions.revokedAt, since),
          and(isNull(sessions.revokedAt), lte(sessions.expiresAt, now), gt(sessions.expiresAt, since)),
        ),
      ),
    )
    .orderBy(desc(sessions.createdAt), desc(sessions.id))
    .limit(limit));
}

export async function sessionOf(tx: Tx, personId: string, sessionId: string): Promise<Session | undefined> {
  return await one(tx.select().from(sessions).where(and(eq(sessions.id, sessionId), eq(sessions.personId, personId))));
}

export async function linkedAccountsOf(tx: Tx, personId: string): Promise<LinkedAccount[]> {
  return await many(tx
    .select()
    .from(linkedAccounts)
    .where(eq(linkedAccounts.personId, personId))
    .orderBy(asc(linkedAccounts.linkedAt), asc(linkedAccounts.id)));
}

export async function deleteLinkedAccount(tx: Tx, id: string): Promise<void> {
  await exec(tx.delete(linkedAccounts).where(eq(linkedAccounts.id, id)));
}

export async function setPasswordHash(tx: Tx, personId: string, passwordHash: string | null, now: Date): Promise<void> {
  await exec(tx.update(people).set({ passwordHash, updatedAt: now }).where(eq(people.id, personId)));
}

export async function personById(tx: Tx, personId: string): Promise<Person | undefined> {
  return await one(tx.select().from(people).where(eq(people.id, personId)));
}

/** The `credential` linked account of a person with a password (DESIGN §4.9). */
export async function addCredentialAccount(tx: Tx, person: Pick<Person, 'id' | 'email'>, now: Date): Promise<void> {
  await exec(tx.insert(linkedAccounts)
    .values({ id: newId('acc'), personId: person.id, provider: 'credential', providerAccountId: person.id, email: person.email, linkedAt: now }));
}
