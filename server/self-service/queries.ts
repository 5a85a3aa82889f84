/**
 * The self-service reads and writes that touch drizzle tables: a person's memberships with their
 * application, sessions and linked accounts. Rules live in `service.ts`.
 */
import { and, asc, desc, eq, gt, isNull, lte, or } from 'drizzle-orm';
import type { Tx } from '../audit/record.js';
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

export interface MembershipRow {
  m: Membership;
  app: Pick<Application, 'id' | 'name' | 'authPolicy'>;
}

const appColumns = { id: applications.id, name: applications.name, authPolicy: applications.authPolicy };

/** Every membership of the person (suspended included), oldest first. */
export function membershipsOf(tx: Tx, personId: string): MembershipRow[] {
  return tx
    .select({ m: memberships, app: appColumns })
    .from(memberships)
    .innerJoin(applications, eq(applications.id, memberships.applicationId))
    .where(eq(memberships.personId, personId))
    .orderBy(asc(memberships.joinedAt), asc(memberships.id))
    .all();
}

export function membershipOf(tx: Tx, personId: string, applicationId: string): MembershipRow | undefined {
  return tx
    .select({ m: memberships, app: appColumns })
    .from(memberships)
    .innerJoin(applications, eq(applications.id, memberships.applicationId))
    .where(and(eq(memberships.personId, personId), eq(memberships.applicationId, applicationId)))
    .get();
}

export function saveProfile(tx: Tx, membershipId: string, profile: Membership['profile'], now: Date): Membership {
  return tx.update(memberships).set({ profile, updatedAt: now }).where(eq(memberships.id, membershipId)).returning().get();
}

/** Live sessions of the person, newest first (at most `limit`). */
export function liveSessionsOf(tx: Tx, personId: string, now: Date, limit: number): Session[] {
  return tx
    .select()
    .from(sessions)
    .where(and(eq(sessions.personId, personId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
    .orderBy(desc(sessions.createdAt), desc(sessions.id))
    .limit(limit)
    .all();
}

/**
 * Sessions of the person that ended (signed out, or expired) after `since`, newest first. A
 * person has few sessions, so filtering the rows of `sessions_person_idx` is cheap.
 */
export function endedSessionsOf(tx: Tx, personId: string, now: Date, since: Date, limit: number): Session[] {
  return tx
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
    .limit(limit)
    .all();
}

export function sessionOf(tx: Tx, personId: string, sessionId: string): Session | undefined {
  return tx.select().from(sessions).where(and(eq(sessions.id, sessionId), eq(sessions.personId, personId))).get();
}

export function linkedAccountsOf(tx: Tx, personId: string): LinkedAccount[] {
  return tx
    .select()
    .from(linkedAccounts)
    .where(eq(linkedAccounts.personId, personId))
    .orderBy(asc(linkedAccounts.linkedAt), asc(linkedAccounts.id))
    .all();
}

export function deleteLinkedAccount(tx: Tx, id: string): void {
  tx.delete(linkedAccounts).where(eq(linkedAccounts.id, id)).run();
}

export function setPasswordHash(tx: Tx, personId: string, passwordHash: string | null, now: Date): void {
  tx.update(people).set({ passwordHash, updatedAt: now }).where(eq(people.id, personId)).run();
}

export function personById(tx: Tx, personId: string): Person | undefined {
  return tx.select().from(people).where(eq(people.id, personId)).get();
}

/** The `credential` linked account of a person with a password (DESIGN §4.9). */
export function addCredentialAccount(tx: Tx, person: Pick<Person, 'id' | 'email'>, now: Date): void {
  tx.insert(linkedAccounts)
    .values({ id: newId('acc'), personId: person.id, provider: 'credential', providerAccountId: person.id, email: person.email, linkedAt: now })
    .run();
}
