/**
 * SSO groups (DESIGN §4.8): applications in one group share sign-in (one realm). An application
 * is in at most one group; adding it to another moves it. Deleting a group leaves its
 * applications standing alone.
 */
import { asc, eq, inArray } from 'drizzle-orm';
import { applications, ssoGroups, type SsoGroup } from '../db/schema.js';
import type { AppContext } from '../context.js';
import { recordAudit } from '../audit/record.js';
import { conflict, notFound } from '../http/problem.js';
import { afterCursor, toPage } from '../http/pagination.js';
import { iso } from '../http/schemas.js';
import { getApplication as findOrFail } from './service.js';
import { isPanelClient } from '../http/schemas.js';

/** The application with an id; the panel's built-in client is none (administrators/panel-client.ts). */
async function getApplication(ctx: AppContext, id: string) {
  if (isPanelClient(id)) throw notFound('application_not_found', `There is no application with id "${id}".`);
  return await findOrFail(ctx, id);
}
import { groupRealm } from './realms.js';
import { beginPurge, isPurging } from '../data-lifecycle/purge.js';
import { exec, one, many, transaction } from '../db/store.js';

async function memberIds(ctx: AppContext, groupIds: string[]): Promise<Map<string, string[]>> {
  const byGroup = new Map<string, string[]>(groupIds.map((id) => [id, []]));
  if (groupIds.length === 0) return byGroup;
  const rows = await many(ctx.db
    .select({ id: applications.id, groupId: applications.ssoGroupId })
    .from(applications)
    .where(inArray(applications.ssoGroupId, groupIds))
    .orderBy(asc(applications.createdAt), asc(applications.id)));
  for (const row of rows) if (row.groupId) byGroup.get(row.groupId)?.push(row.id);
  return byGroup;
}

function groupRecord(group: SsoGroup, applicationIds: string[]) {
  return { id: group.id, name: group.name, applicationIds, createdAt: iso(group.createdAt)! };
}

export async function getGroup(ctx: AppContext, id: string) {
  const group = await one(ctx.db.select().from(ssoGroups).where(eq(ssoGroups.id, id)));
  if (!group) throw notFound('sso_group_not_found', `There is no SSO group with id "${id}".`);
  return groupRecord(group, (await memberIds(ctx, [id])).get(id) ?? []);
}

export async function listGroups(ctx: AppContext, limit: number, cursor?: string) {
  const rows = await many(ctx.db
    .select()
    .from(ssoGroups)
    .where(afterCursor(ssoGroups.createdAt, ssoGroups.id, cursor))
    .orderBy(asc(ssoGroups.createdAt), asc(ssoGroups.id))
    .limit(limit + 1));
  const page = toPage(rows, limit, (g) => ({ t: g.createdAt.getTime(), id: g.id }));
  const members = await memberIds(ctx, page.items.map((g) => g.id));
  return { ssoGroups: page.items.map((g) => groupRecord(g, members.get(g.id) ?? [])), nextCursor: page.nextCursor };
}

export async function createGroup(ctx: AppContext, input: { id: string; name: string }, actor: string) {
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    if (await one(tx.select({ id: ssoGroups.id }).from(ssoGroups).where(eq(ssoGroups.id, input.id)))) {
      throw conflict('sso_group_exists', `An SSO group with id "${input.id}" already exists.`);
    }
    if (await isPurging(tx, 'sso_group', input.id)) {
      throw conflict('deletion_in_progress', `The SSO group "${input.id}" is still being deleted; its id is free again once that has finished.`);
    }
    await exec(tx.insert(ssoGroups).values({ id: input.id, name: input.name, createdAt: now, updatedAt: now }));
    await recordAudit(tx, now, { actor, action: 'sso_group.created', target: input.id, details: { name: input.name } });
  });
  return getGroup(ctx, input.id);
}

export async function renameGroup(ctx: AppContext, id: string, name: string, actor: string) {
  await getGroup(ctx, id);
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    await exec(tx.update(ssoGroups).set({ name, updatedAt: now }).where(eq(ssoGroups.id, id)));
    await recordAudit(tx, now, { actor, action: 'sso_group.renamed', target: id, details: { name } });
  });
  return getGroup(ctx, id);
}

/** Its applications stand alone at once; the sessions' marks of its realm go in the background purge. */
export async function deleteGroup(ctx: AppContext, id: string, actor: string) {
  await getGroup(ctx, id);
  const now = ctx.clock.now();
  await beginPurge(ctx, { kind: 'sso_group', target: id, params: { realm: groupRealm(id) }, actor }, async (tx) => {
    // The applications it held, for the audit entry: the delete sets their ssoGroupId to null.
    const detached = (await many(tx
      .select({ id: applications.id })
      .from(applications)
      .where(eq(applications.ssoGroupId, id))
      .orderBy(asc(applications.id))))
      .map((row) => row.id);
    // Detached here rather than by the foreign key's SET NULL (an indexed handful of rows), so the
    // delete is right inside a transaction that runs without foreign-key enforcement (a
    // configuration apply that also deletes applications: config-as-code/apply.ts).
    if (detached.length) await exec(tx.update(applications).set({ ssoGroupId: null }).where(eq(applications.ssoGroupId, id)));
    await exec(tx.delete(ssoGroups).where(eq(ssoGroups.id, id)));
    await recordAudit(tx, now, { actor, action: 'sso_group.deleted', target: id, details: { applicationsDetached: detached } });
  }, { cascade: true });
}

export async function addApplication(ctx: AppContext, groupId: string, appId: string, actor: string) {
  await getGroup(ctx, groupId);
  const app = await getApplication(ctx, appId);
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    await exec(tx.update(applications).set({ ssoGroupId: groupId, updatedAt: now }).where(eq(applications.id, appId)));
    await recordAudit(tx, now, {
      actor, action: 'sso_group.application_added', applicationId: appId, target: groupId,
      details: app.ssoGroupId && app.ssoGroupId !== groupId ? { movedFrom: app.ssoGroupId } : {},
    });
  });
  return getGroup(ctx, groupId);
}

export async function removeApplication(ctx: AppContext, groupId: string, appId: string, actor: string) {
  await getGroup(ctx, groupId);
  const app = await getApplication(ctx, appId);
  if (app.ssoGroupId !== groupId) {
    throw notFound('application_not_in_group', `Application "${appId}" is not in SSO group "${groupId}".`);
  }
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    await exec(tx.update(applications).set({ ssoGroupId: null, updatedAt: now }).where(eq(applications.id, appId)));
    await recordAudit(tx, now, { actor, action: 'sso_group.application_removed', applicationId: appId, target: groupId });
  });
  return getGroup(ctx, groupId);
}
