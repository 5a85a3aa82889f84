/**
 * Naming administrators and changing their roles (spec administrators-and-people.md,
 * "Administrators"). Only the owner or the admin token reach these (admin-policy.ts: the routes
 * are not listed, so they need `owner`), which is also why an app manager cannot raise their own
 * role. The last owner cannot be removed or demoted (409 `last_owner`). Every change is audited
 * under the acting person (`person:<id>`) or `admin`.
 *
 * An administrator is also an active member of the built-in panel client (panel-client.ts), whose
 * `closed` policy then admits exactly the administrators at the panel's sign-in; removing the
 * role suspends that membership and ends the person's panel sign-ins (endSessions: its refresh
 * tokens die; panel-access.ts refuses its access tokens).
 */
import { and, eq } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import type { Tx } from '../db/client.js';
import { recordAudit } from '../audit/record.js';
import { memberships, people, type AdminRole, type Person } from '../db/schema.js';
import { exec, one, transaction } from '../db/store.js';
import { badRequest, conflict, notFound } from '../http/problem.js';
import type { Grant } from '../http/admin-policy.js';
import { iso } from '../http/schemas.js';
import { createMembership } from '../members/create.js';
import { endSessions } from '../accounts/session.js';
import { countOwners, deleteGrant, existingApplications, findGrant, listAdministrators, writeGrant, type AdministratorRow } from './queries.js';
import { ensurePanelClient, PANEL_CLIENT_ID } from './panel-client.js';
import { forgetPanelGrants } from './panel-access.js';

export interface GrantInput {
  role: AdminRole;
  applications?: string[];
}

export const lastOwner = () => conflict('last_owner', 'This is the last owner: name another owner first, then change or remove this one.');

export function administratorRecord(row: AdministratorRow) {
  return {
    personId: row.personId,
    email: row.email,
    name: row.name,
    role: row.role,
    applications: row.applications,
    grantedBy: row.grantedBy,
    createdAt: iso(row.createdAt)!,
    updatedAt: iso(row.updatedAt)!,
  };
}

export async function listAdministratorRecords(ctx: AppContext) {
  return { administrators: (await listAdministrators(ctx.db)).map(administratorRecord) };
}

async function personOrNotFound(tx: Tx, personId: string): Promise<Person> {
  const person = await one(tx.select().from(people).where(eq(people.id, personId)));
  if (!person) throw notFound('person_not_found', `There is no person with id "${personId}".`);
  return person;
}

/** What a grant input means, checked: an app manager names 1–100 existing applications; other roles none. */
async function checkedGrant(tx: Tx, input: GrantInput): Promise<Grant> {
  if (input.role !== 'app_manager') {
    if (input.applications?.length) throw badRequest('validation_failed', 'Only an app_manager has applications.', [{ path: '/applications', message: 'must be empty unless role is app_manager' }]);
    return { role: input.role, applications: [] };
  }
  const wanted = [...new Set(input.applications ?? [])].sort();
  if (!wanted.length) throw badRequest('validation_failed', 'An app_manager needs at least one application.', [{ path: '/applications', message: 'must list at least one application' }]);
  const found = new Set(await existingApplications(tx, wanted.filter((id) => id !== PANEL_CLIENT_ID)));
  const unknown = wanted.filter((id) => !found.has(id));
  if (unknown.length) {
    throw badRequest('validation_failed', `No such application: ${unknown.join(', ')}.`, unknown.map((id) => ({ path: '/applications', message: `no application "${id}"` })));
  }
  return { role: 'app_manager', applications: wanted };
}

/**
 * Gives a person a role inside the caller's transaction: the grant, the built-in client and the
 * panel membership (set-up uses it for the first owner).
 */
export async function grantRole(tx: Tx, ctx: AppContext, now: Date, person: Person, grant: Grant, actor: string): Promise<void> {
  const before = await findGrant(tx, person.id);
  if (before?.role === 'owner' && grant.role !== 'owner' && (await countOwners(tx)) <= 1) throw lastOwner();
  await writeGrant(tx, now, person.id, grant, actor);
  await ensurePanelClient(tx, ctx.config.issuer, now);
  const membership = await createMembership(tx, now, PANEL_CLIENT_ID, person, 'admin');
  if (membership.status !== 'active') await exec(tx.update(memberships).set({ status: 'active', updatedAt: now }).where(eq(memberships.id, membership.id)));
  await recordAudit(tx, now, {
    actor,
    action: before ? 'administrator.role_changed' : 'administrator.added',
    target: person.id,
    details: { email: person.email, role: grant.role, applications: grant.applications, ...(before ? { previousRole: before.role, previousApplications: before.applications } : {}) },
  });
}

export async function putAdministrator(ctx: AppContext, personId: string, input: GrantInput, actor: string) {
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    const person = await personOrNotFound(tx, personId);
    await grantRole(tx, ctx, now, person, await checkedGrant(tx, input), actor);
  });
  forgetPanelGrants(ctx.db);
  const row = (await listAdministrators(ctx.db)).find((r) => r.personId === personId)!;
  return administratorRecord(row);
}

/** Takes the role away inside the caller's transaction; false when the person held none. */
export async function revokeRole(ctx: Pick<AppContext, 'hooks'>, tx: Tx, now: Date, personId: string, actor: string, email: string): Promise<boolean> {
  const before = await findGrant(tx, personId);
  if (!before) return false;
  if (before.role === 'owner' && (await countOwners(tx)) <= 1) throw lastOwner();
  await deleteGrant(tx, personId);
  await exec(tx
    .update(memberships)
    .set({ status: 'suspended', updatedAt: now })
    .where(and(eq(memberships.applicationId, PANEL_CLIENT_ID), eq(memberships.personId, personId))));
  // The panel's refresh tokens die now; its access tokens are refused by panel-access.ts.
  await endSessions(ctx, tx, now, { personId, application: { id: PANEL_CLIENT_ID, ssoGroupId: null } }, 'membership_suspended');
  await recordAudit(tx, now, { actor, action: 'administrator.removed', target: personId, details: { email, previousRole: before.role, previousApplications: before.applications } });
  return true;
}

export async function deleteAdministrator(ctx: AppContext, personId: string, actor: string): Promise<void> {
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    const person = await personOrNotFound(tx, personId);
    if (!(await revokeRole(ctx, tx, now, personId, actor, person.email))) {
      throw notFound('administrator_not_found', `${person.email} is not an administrator.`);
    }
  });
  forgetPanelGrants(ctx.db);
}
