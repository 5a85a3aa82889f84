/**
 * The RADIUS plugin's reads and writes: network certificates (found by fingerprint through their
 * unique index, with the person, membership and application joined by primary keys) and accounting sessions
 * (found by application, client address and Acct-Session-Id through their unique index).
 */
import { and, desc, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { memberships, networkCertificates, people, radiusSessions, applications, type NetworkCertificate } from '../db/schema.js';
import { exec, many, one } from '../db/store.js';

const p = sql.placeholder;

const certificateByFingerprint = preparedPerDb((db) =>
  db
    .select({
      certificate: { id: networkCertificates.id, applicationId: networkCertificates.applicationId, revokedAt: networkCertificates.revokedAt, notAfter: networkCertificates.notAfter, lastUsedAt: networkCertificates.lastUsedAt },
      person: { id: people.id, username: people.username, status: people.status },
      membership: { status: memberships.status },
      application: { forwardAuth: applications.forwardAuth },
    })
    .from(networkCertificates)
    .innerJoin(people, eq(people.id, networkCertificates.personId))
    .innerJoin(memberships, eq(memberships.id, networkCertificates.membershipId))
    .innerJoin(applications, eq(applications.id, networkCertificates.applicationId))
    .where(eq(networkCertificates.fingerprint, p('fingerprint')))
    .prepare(),
);

export async function findCertificate(db: Db, fingerprint: string) {
  return await one(certificateByFingerprint(db), { fingerprint });
}

export async function touchCertificate(db: Db, id: string, now: Date): Promise<void> {
  await exec(db.update(networkCertificates).set({ lastUsedAt: now }).where(eq(networkCertificates.id, id)));
}

export async function insertCertificate(tx: Tx | Db, row: typeof networkCertificates.$inferInsert): Promise<void> {
  await exec(tx.insert(networkCertificates).values(row));
}

export interface CertificateRow {
  certificate: NetworkCertificate;
  applicationName: string;
}

/** A person's certificates, newest first (bounded by NETWORK_CERTIFICATES_PER_PERSON). */
export async function certificatesOf(db: Db, personId: string): Promise<CertificateRow[]> {
  return await many(
    db
      .select({ certificate: networkCertificates, applicationName: applications.name })
      .from(networkCertificates)
      .innerJoin(applications, eq(applications.id, networkCertificates.applicationId))
      .where(eq(networkCertificates.personId, personId))
      .orderBy(desc(networkCertificates.createdAt), desc(networkCertificates.id)),
  );
}

export async function countLiveCertificates(db: Db, personId: string, now: Date): Promise<number> {
  const row = await one(
    db
      .select({ n: sql<number>`count(*)`.mapWith(Number) })
      .from(networkCertificates)
      .where(and(eq(networkCertificates.personId, personId), isNull(networkCertificates.revokedAt), gt(networkCertificates.notAfter, now))),
  );
  return row?.n ?? 0;
}

export async function revokeCertificate(tx: Tx | Db, id: string, now: Date): Promise<void> {
  await exec(tx.update(networkCertificates).set({ revokedAt: now }).where(and(eq(networkCertificates.id, id), isNull(networkCertificates.revokedAt))));
}

export async function certificateById(db: Db, id: string) {
  return await one(db.select().from(networkCertificates).where(eq(networkCertificates.id, id)));
}

// --- Accounting ---------------------------------------------------------------------------------

const sessionByKey = preparedPerDb((db) =>
  db
    .select({ id: radiusSessions.id, personId: radiusSessions.personId })
    .from(radiusSessions)
    .where(and(eq(radiusSessions.applicationId, p('applicationId')), eq(radiusSessions.nasAddress, p('nasAddress')), eq(radiusSessions.acctSessionId, p('acctSessionId'))))
    .prepare(),
);

export async function findSession(db: Db, key: { applicationId: string; nasAddress: string; acctSessionId: string }) {
  return await one(sessionByKey(db), key);
}

export async function insertSession(db: Db, row: typeof radiusSessions.$inferInsert): Promise<void> {
  await exec(db.insert(radiusSessions).values(row).onConflictDoNothing());
}

export async function updateSession(db: Db, id: string, set: Partial<typeof radiusSessions.$inferInsert>): Promise<void> {
  await exec(db.update(radiusSessions).set(set).where(eq(radiusSessions.id, id)));
}

/** A person's RADIUS sessions of the last 30 days, newest first, at most `limit`. */
export async function sessionsOf(db: Db, personId: string, since: Date, limit: number) {
  return await many(
    db
      .select({ session: radiusSessions, applicationName: applications.name })
      .from(radiusSessions)
      .innerJoin(applications, eq(applications.id, radiusSessions.applicationId))
      .where(and(eq(radiusSessions.personId, personId), gt(radiusSessions.startedAt, since)))
      .orderBy(desc(radiusSessions.startedAt), desc(radiusSessions.id))
      .limit(limit),
  );
}


