/**
 * Directory groups' rules (spec claims-and-groups.md, "Groups"; decision 0101): flat groups with
 * a fixed id (`^[a-z0-9][a-z0-9._-]{0,63}$`, the value apps see in the `groups` claim), at most
 * MAX_GROUPS of them and MAX_GROUPS_PER_PERSON per person. Every change is audited and reaches the
 * webhooks (webhooks/outbox.ts says who hears what); membership writes are idempotent.
 */
import type { AppContext } from '../context.js';
import type { Group } from '../db/schema.js';
import type { Tx } from '../db/client.js';
import { recordAudit } from '../audit/record.js';
import { guardGroup } from '../plugin-api/registries.js';
import { conflict, managedBySource, notFound, Problem } from '../http/problem.js';
import { iso } from '../http/schemas.js';
import { beginPurge, isPurging } from '../data-lifecycle/purge.js';
import { recordDirectoryEvent, recordPersonEvent } from '../webhooks/outbox.js';
import { transaction } from '../db/store.js';
import {
  countGroups,
  countGroupsOfPerson,
  deleteGroupRow,
  deleteMember,
  findGroup,
  findPersonRef,
  insertGroup,
  isMember,
  insertMember,
  listGroupRows,
  listMemberRows,
  updateGroupRow,
  type PersonRef,
} from './queries.js';
import { groupReferences } from './references.js';

export const MAX_GROUPS = 1000;
export const MAX_GROUPS_PER_PERSON = 200;
export const GROUP_ID_PATTERN = '^[a-z0-9][a-z0-9._-]{0,63}$';

export interface GroupInput {
  id: string;
  name: string;
  description?: string | null | undefined;
}

export interface GroupPatch {
  name?: string | undefined;
  description?: string | null | undefined;
}

export function groupRecord(g: Pick<Group, 'id' | 'name' | 'description' | 'createdAt' | 'updatedAt' | 'sourceId' | 'sourceDn'>) {
  return {
    id: g.id, name: g.name, description: g.description, source: g.sourceId === null ? null : { id: g.sourceId, dn: g.sourceDn ?? '' },
    createdAt: iso(g.createdAt)!, updatedAt: iso(g.updatedAt)!,
  };
}

/** A group a directory source mirrors changes at the source (spec directory-sources.md): 409 `managed_by_source`. */
function refuseSourceGroup(group: Pick<Group, 'id' | 'sourceId'>): void {
  if (group.sourceId !== null) throw managedBySource(`The group "${group.id}" is mirrored from a directory source; change it and its members there.`);
}

const groupNotFound = (id: string) => notFound('group_not_found', `There is no group with id "${id}".`);
const personNotFound = (id: string) => notFound('person_not_found', `There is no person with id "${id}".`);
/** Empty or blank text clears an optional description. */
const cleanDescription = (text: string | null | undefined) => (text === undefined ? undefined : text?.trim() || null);

export async function getGroup(ctx: AppContext, id: string) {
  const group = await findGroup(ctx.db, id);
  if (!group) throw groupNotFound(id);
  return groupRecord(group);
}

export async function listGroups(ctx: AppContext, query: { q?: string | undefined; cursor?: string | undefined }, limit: number) {
  const page = await listGroupRows(ctx.db, { ...(query.q !== undefined ? { q: query.q } : {}), ...(query.cursor ? { cursor: query.cursor } : {}) }, limit);
  return { groups: page.items.map(groupRecord), nextCursor: page.nextCursor };
}

export async function createGroup(ctx: AppContext, input: GroupInput, actor: string) {
  const now = ctx.clock.now();
  const row = { id: input.id, name: input.name.trim(), description: cleanDescription(input.description) ?? null, createdAt: now, updatedAt: now };
  const created = await transaction(ctx.db, async (tx) => {
    // Until a deleted group's members are purged its id stays taken: nothing new inherits them.
    if ((await findGroup(tx, input.id)) || (await isPurging(tx, 'group', input.id))) {
      throw conflict('group_exists', `A group with id "${input.id}" already exists.`);
    }
    if ((await countGroups(tx)) >= MAX_GROUPS) {
      throw conflict('group_limit_reached', `There are already ${MAX_GROUPS.toLocaleString('en')} groups, the most Gatehouse keeps; delete one first.`);
    }
    await insertGroup(tx, row);
    await recordAudit(tx, now, { actor, action: 'group.created', target: input.id, details: { name: row.name } });
    await recordDirectoryEvent(tx, now, 'group.created', { id: row.id, name: row.name, description: row.description });
    await ctx.hooks.emit('groupsChanged', { tx, now, groupIds: [row.id], personIds: [], actor });
    // Read back: the database gives it more than was written (the LDAP gidNumber).
    return (await findGroup(tx, row.id))!;
  });
  ctx.wakeWebhooks();
  return groupRecord(created);
}

export async function updateGroup(ctx: AppContext, id: string, patch: GroupPatch, actor: string) {
  const now = ctx.clock.now();
  const updated = await transaction(ctx.db, async (tx) => {
    const current = await findGroup(tx, id);
    if (!current) throw groupNotFound(id);
    refuseSourceGroup(current);
    await guardGroup(ctx.registries, tx, current, { kind: 'update', fields: Object.keys(patch) }, actor);
    const name = patch.name === undefined ? current.name : patch.name.trim();
    const description = patch.description === undefined ? current.description : cleanDescription(patch.description) ?? null;
    const changed = [...(name !== current.name ? ['name'] : []), ...(description !== current.description ? ['description'] : [])];
    // A PATCH that changes nothing writes nothing (no audit entry, no event), like members'.
    if (changed.length === 0) return current;
    await updateGroupRow(tx, id, { name, description, updatedAt: now });
    await recordAudit(tx, now, {
      actor, action: 'group.updated', target: id,
      details: { changed, ...(changed.includes('name') ? { name: { from: current.name, to: name } } : {}) },
    });
    await recordDirectoryEvent(tx, now, 'group.updated', { id, name, description, changed });
    await ctx.hooks.emit('groupsChanged', { tx, now, groupIds: [id], personIds: [], actor });
    return { ...current, name, description, updatedAt: now };
  });
  ctx.wakeWebhooks();
  return groupRecord(updated);
}

/**
 * Refused while an application setting names the group (references.ts). Otherwise the group goes
 * at once and its members in the purge plan's batches (a group may hold everyone).
 */
export async function deleteGroup(ctx: AppContext, id: string, actor: string): Promise<void> {
  const group = await findGroup(ctx.db, id);
  if (!group) throw groupNotFound(id);
  refuseSourceGroup(group);
  const now = ctx.clock.now();
  await beginPurge(ctx, { kind: 'group', target: id, actor }, async (tx) => {
    await guardGroup(ctx.registries, tx, group, { kind: 'delete' }, actor);
    // In the deleting transaction, so a setting saved meanwhile is seen (or waits for us).
    const uses = await groupReferences(tx, id);
    if (uses.length > 0) {
      const named = uses.map((u) => `${u.applicationName} (${u.field})`).join(', ');
      throw new Problem(409, 'group_in_use', `The group "${id}" is named by ${named}; remove it there first.`,
        uses.map((u) => ({ path: `applications.${u.applicationId}.${u.field}`, message: `names the group "${id}"` })));
    }
    // Gone meanwhile (another request deleted it): nothing to do, and no second event.
    if ((await deleteGroupRow(tx, id)) === 0) throw groupNotFound(id);
    await recordAudit(tx, now, { actor, action: 'group.deleted', target: id });
    await recordDirectoryEvent(tx, now, 'group.deleted', { id });
    await ctx.hooks.emit('groupsChanged', { tx, now, groupIds: [id], personIds: [], actor });
  }, { cascade: false });
  ctx.wakeWebhooks();
}

export async function listMembers(ctx: AppContext, groupId: string, cursor: string | undefined, limit: number) {
  if (!(await findGroup(ctx.db, groupId))) throw groupNotFound(groupId);
  const page = await listMemberRows(ctx.db, groupId, cursor, limit);
  return {
    members: page.items.map((m) => ({ id: m.personId, email: m.email, username: m.username, name: m.name, addedAt: iso(m.addedAt)! })),
    nextCursor: page.nextCursor,
  };
}


async function personOf(tx: Tx, id: string): Promise<PersonRef> {
  const person = await findPersonRef(tx, id);
  if (!person) throw personNotFound(id);
  return person;
}

const memberEventData = (groupId: string, person: PersonRef) => ({ groupId, userId: person.id, email: person.email, username: person.username });

/**
 * Puts a person in a group inside `tx` unless they are in it; true when added. Refuses past
 * MAX_GROUPS_PER_PERSON (`limit: 'refuse'`) or skips (`'skip'`: an invitation's groups).
 */
export async function addToGroup(tx: Tx, now: Date, groupId: string, person: PersonRef, actor: string, limit: 'refuse' | 'skip'): Promise<boolean> {
  if ((await countGroupsOfPerson(tx, person.id)) >= MAX_GROUPS_PER_PERSON) {
    if (limit === 'skip') return false;
    throw conflict('person_group_limit_reached', `${person.email} is already in ${MAX_GROUPS_PER_PERSON} groups, the most a person may be in; remove them from one first.`);
  }
  if (!(await insertMember(tx, groupId, person.id, now))) return false;
  await recordAudit(tx, now, { actor, action: 'group.member_added', target: groupId, details: { userId: person.id } });
  await recordPersonEvent(tx, now, person.id, 'group.member_added', memberEventData(groupId, person));
  return true;
}

/** `PUT /groups/:id/members/:personId`: idempotent (already a member: nothing written). */
export async function addMember(ctx: AppContext, groupId: string, personId: string, actor: string): Promise<void> {
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    const group = await findGroup(tx, groupId);
    if (!group) throw groupNotFound(groupId);
    refuseSourceGroup(group);
    const person = await personOf(tx, personId);
    // Already in it: 204 with nothing written, whatever the limit says.
    if (await isMember(tx, groupId, person.id)) return;
    await guardGroup(ctx.registries, tx, group, { kind: 'members', personIds: [person.id] }, actor);
    await addToGroup(tx, now, groupId, person, actor, 'refuse');
    await ctx.hooks.emit('groupsChanged', { tx, now, groupIds: [groupId], personIds: [person.id], actor });
  });
  ctx.wakeWebhooks();
}

/** `DELETE /groups/:id/members/:personId`: idempotent (not a member: nothing written). */
export async function removeMember(ctx: AppContext, groupId: string, personId: string, actor: string): Promise<void> {
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    const group = await findGroup(tx, groupId);
    if (!group) throw groupNotFound(groupId);
    refuseSourceGroup(group);
    const person = await personOf(tx, personId);
    if (!(await isMember(tx, groupId, person.id))) return;
    await guardGroup(ctx.registries, tx, group, { kind: 'members', personIds: [person.id] }, actor);
    if (!(await deleteMember(tx, groupId, person.id))) return;
    await recordAudit(tx, now, { actor, action: 'group.member_removed', target: groupId, details: { userId: person.id } });
    await recordPersonEvent(tx, now, person.id, 'group.member_removed', memberEventData(groupId, person));
    await ctx.hooks.emit('groupsChanged', { tx, now, groupIds: [groupId], personIds: [person.id], actor });
  });
  ctx.wakeWebhooks();
}
