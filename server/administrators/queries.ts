/**
 * Administrators (spec administrators-and-people.md): who holds which role, read by every admin
 * request made with a panel token (panel-access.ts) and written by the administrators API and
 * first-run set-up. Every read is a primary-key or index look-up: `administrators` by person,
 * `administrators_role_idx` for counting owners, `administrator_applications` by person (its
 * primary key) or by application.
 */
import { and, asc, count, eq, inArray, isNull, gt, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import { administratorApplications, administrators, applications, people, sessions, type AdminRole } from '../db/schema.js';
import { exec, many, one } from '../db/store.js';
import type { Grant } from '../http/admin-policy.js';

/** The grant a person holds, or undefined when they are not an administrator. */
export async function findGrant(db: Db | Tx, personId: string): Promise<Grant | undefined> {
  const row = await one(db.select({ role: administrators.role }).from(administrators).where(eq(administrators.personId, personId)));
  if (!row) return undefined;
  return { role: row.role, applications: row.role === 'app_manager' ? await managedApplications(db, personId) : [] };
}

async function managedApplications(db: Db | Tx, personId: string): Promise<string[]> {
  const rows = await many(db
    .select({ id: administratorApplications.applicationId })
    .from(administratorApplications)
    .where(eq(administratorApplications.personId, personId))
    .orderBy(asc(administratorApplications.applicationId)));
  return rows.map((r) => r.id);
}

/**
 * What a panel token's holder may do right now: their grant, if their session `sessionId` is
 * live and they are an active person and still an administrator; otherwise undefined. One
 * statement on primary keys (plus the managed applications of an app manager).
 */
export async function liveGrant(db: Db, personId: string, sessionId: string, now: Date): Promise<Grant | undefined> {
  const row = await one(db
    .select({ role: administrators.role })
    .from(administrators)
    .innerJoin(people, eq(people.id, administrators.personId))
    .innerJoin(sessions, and(eq(sessions.id, sessionId), eq(sessions.personId, administrators.personId)))
    .where(and(eq(administrators.personId, personId), eq(people.status, 'active'), isNull(sessions.revokedAt), gt(sessions.expiresAt, now))));
  if (!row) return undefined;
  return { role: row.role, applications: row.role === 'app_manager' ? await managedApplications(db, personId) : [] };
}

export async function countOwners(db: Db | Tx): Promise<number> {
  const row = await one(db.select({ n: count() }).from(administrators).where(eq(administrators.role, 'owner')));
  return row?.n ?? 0;
}

export interface AdministratorRow {
  personId: string;
  email: string;
  name: string | null;
  role: AdminRole;
  applications: string[];
  grantedBy: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Every administrator with their e-mail and name, owners first, then by e-mail (a handful of rows: the table is bounded by who administers). */
export async function listAdministrators(db: Db | Tx): Promise<AdministratorRow[]> {
  const rows = await many(db
    .select({
      personId: administrators.personId,
      email: people.email,
      name: people.name,
      role: administrators.role,
      grantedBy: administrators.grantedBy,
      createdAt: administrators.createdAt,
      updatedAt: administrators.updatedAt,
    })
    .from(administrators)
    // No ORDER BY: sorted below (a handful of rows), so the read walks `administrators`, not `people`.
    .innerJoin(people, eq(people.id, administrators.personId)));
  const managers = rows.filter((r) => r.role === 'app_manager').map((r) => r.personId);
  const links = managers.length
    ? await many(db
        .select({ personId: administratorApplications.personId, applicationId: administratorApplications.applicationId })
        .from(administratorApplications)
        .where(inArray(administratorApplications.personId, managers))
        .orderBy(asc(administratorApplications.personId), asc(administratorApplications.applicationId)))
    : [];
  const order: Record<AdminRole, number> = { owner: 0, people_manager: 1, app_manager: 2 };
  return rows
    .map((r) => ({ ...r, applications: links.filter((l) => l.personId === r.personId).map((l) => l.applicationId) }))
    .sort((a, b) => order[a.role] - order[b.role] || a.email.localeCompare(b.email));
}

/** The ids among `ids` that are applications (an app manager's list must name real ones). */
export async function existingApplications(db: Db | Tx, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await many(db.select({ id: applications.id }).from(applications).where(inArray(applications.id, ids)));
  return rows.map((r) => r.id);
}

/** Sets a person's role (and an app manager's applications), inside the caller's transaction. */
export async function writeGrant(tx: Tx, now: Date, personId: string, grant: Grant, grantedBy: string): Promise<void> {
  await exec(tx
    .insert(administrators)
    .values({ personId, role: grant.role, grantedBy, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: administrators.personId, set: { role: grant.role, grantedBy, updatedAt: now } }));
  await exec(tx.delete(administratorApplications).where(eq(administratorApplications.personId, personId)));
  if (grant.role === 'app_manager' && grant.applications.length) {
    await exec(tx.insert(administratorApplications).values(grant.applications.map((applicationId) => ({ personId, applicationId }))));
  }
}

export async function deleteGrant(tx: Tx, personId: string): Promise<boolean> {
  await exec(tx.delete(administratorApplications).where(eq(administratorApplications.personId, personId)));
  return (await exec(tx.delete(administrators).where(eq(administrators.personId, personId)))) > 0;
}

/** Owners, for first-run checks and for making them members of new applications. */
export async function ownerIds(db: Db | Tx): Promise<string[]> {
  const rows = await many(db.select({ id: administrators.personId }).from(administrators).where(eq(administrators.role, sql`'owner'`)));
  return rows.map((r) => r.id);
}
