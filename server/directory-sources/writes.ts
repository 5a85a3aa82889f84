/**
 * What a sync run, a sign-in through a source and a link write, in batches inside the caller's
 * transaction: people created from entries (with their entries, memberships of the source's
 * applications, audit and webhooks), updated, disabled (their sessions end, refresh tokens are
 * revoked and back-channel logouts queued: accounts/session.ts `endSessions`) and enabled again,
 * and source groups with their members mirrored. Multi-row statements, so a batch of 500 people
 * is a handful of statements, not thousands (the event loop's delay stays low: bench
 * directory-sync). The actor of every audit entry is `directory_source:<id>`.
 */
import { and, eq, gt, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import {
  applications,
  auditLog,
  directoryEntries,
  groupMembers,
  groups,
  memberships,
  people,
  refreshTokenFamilies,
  sessions,
  type DirectorySource,
} from '../db/schema.js';
import { engineOf, exec, many } from '../db/store.js';
import { preparedPerDb } from '../db/prepared.js';
import { endSessions } from '../accounts/session.js';
import { recordDirectoryEvent, recordEvent, recordPersonEvent } from '../webhooks/outbox.js';
import { newId } from '../util/ids.js';
import type { MappedGroup, MappedPerson } from './mapping.js';
import type { AppContext } from '../context.js';

export const actorOf = (source: Pick<DirectorySource, 'id'>) => `directory_source:${source.id}`;

/**
 * The statements a sync writes row by row, prepared once per database handle: on SQLite a
 * prepared statement runs in microseconds, where building a multi-row insert costs drizzle tens
 * of microseconds a row (measured: 86 µs a person, 71 a membership, 52 an audit entry).
 */
const statements = preparedPerDb((db) => {
  const p = sql.placeholder;
  return {
    person: db.insert(people).values({
      id: p('id'), email: p('email'), username: p('username'), name: p('name'), givenName: p('givenName'), familyName: p('familyName'),
      emailVerified: true, passwordHash: null, status: p('status'), sourceId: p('sourceId'), sourceDn: p('sourceDn'), createdAt: p('now'), updatedAt: p('now'),
    }).prepare(),
    entry: db.insert(directoryEntries).values({
      sourceId: p('sourceId'), kind: 'person', entryKey: p('entryKey'), targetId: p('targetId'), digest: p('digest'), disabled: p('disabled'), updatedAt: p('now'),
    }).onConflictDoUpdate({
      // Over an entry whose person was deleted here meanwhile (queries.ts `entryPage` leaves those out).
      target: [directoryEntries.sourceId, directoryEntries.kind, directoryEntries.entryKey],
      set: { targetId: sql`excluded.target_id`, digest: sql`excluded.digest`, disabled: sql`excluded.disabled`, updatedAt: sql`excluded.updated_at` },
    }).prepare(),
    membership: db.insert(memberships).values({
      id: p('id'), applicationId: p('applicationId'), personId: p('personId'), status: 'active', role: 'member', profile: {}, joinedAt: p('now'), lastActiveAt: p('now'), updatedAt: p('now'),
    }).onConflictDoNothing().returning({ id: memberships.id, personId: memberships.personId }).prepare(),
    member: db.insert(groupMembers).values({ groupId: p('groupId'), personId: p('personId'), addedAt: p('now') }).onConflictDoNothing().prepare(),
    audit: db.insert(auditLog).values({ id: p('id'), at: p('at'), actor: p('actor'), action: p('action'), applicationId: null, target: p('target'), details: p('details'), ip: null }).prepare(),
  };
});

/**
 * Row by row through prepared statements on SQLite (in-process, microseconds each); on PostgreSQL,
 * where each statement is a round trip, one multi-row statement instead.
 */
const rowByRow = (tx: Tx) => engineOf(tx) === 'sqlite';

/** Audit rows (background work: no client address). */
async function auditMany(tx: Tx, at: Date, actor: string, rows: { action: string; target: string; details?: Record<string, unknown> }[]) {
  if (!rows.length) return;
  if (!rowByRow(tx)) {
    await exec(tx.insert(auditLog).values(rows.map((r) => ({ id: newId('aud'), at, actor, action: r.action, applicationId: null, target: r.target, details: r.details ?? {}, ip: null }))));
    return;
  }
  const audit = statements(tx).audit;
  for (const r of rows) await exec(audit, { id: newId('aud'), at, actor, action: r.action, target: r.target, details: r.details ?? {} });
}

/** Which of the source's applications have a webhook (events are written only for them). */
export async function applicationsWithWebhooks(tx: Tx, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  return new Set((await many(tx.select({ id: applications.id }).from(applications).where(and(inArray(applications.id, ids), isNotNull(applications.webhookUrl))))).map((r) => r.id));
}

export interface NewSourcePerson extends MappedPerson {
  disabled: boolean;
}

/** Creates people from entries, with their entries and memberships; returns key → person id. */
export async function createPeople(tx: Tx, now: Date, source: DirectorySource, batch: NewSourcePerson[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  if (!batch.length) return ids;
  const rows = batch.map((p) => {
    const id = newId('usr');
    ids.set(p.key, id);
    return {
      id, email: p.email, username: p.username, name: p.name, givenName: p.givenName, familyName: p.familyName,
      // The directory's administrators keep these addresses; Gatehouse sends nothing to prove them.
      emailVerified: true, passwordHash: null, status: p.disabled ? ('disabled' as const) : ('active' as const),
      sourceId: source.id, sourceDn: p.dn, createdAt: now, updatedAt: now,
    };
  });
  const entries = batch.map((p) => ({ sourceId: source.id, entryKey: p.key, targetId: ids.get(p.key)!, digest: p.digest, disabled: p.disabled }));
  if (rowByRow(tx)) {
    const { person, entry } = statements(tx);
    for (const r of rows) await exec(person, { ...r, now });
    for (const e of entries) await exec(entry, { ...e, now });
  } else {
    await exec(tx.insert(people).values(rows));
    await exec(tx.insert(directoryEntries).values(entries.map((e) => ({ ...e, kind: 'person' as const, updatedAt: now }))).onConflictDoUpdate({
      target: [directoryEntries.sourceId, directoryEntries.kind, directoryEntries.entryKey],
      set: { targetId: sql`excluded.target_id`, digest: sql`excluded.digest`, disabled: sql`excluded.disabled`, updatedAt: sql`excluded.updated_at` },
    }));
  }
  await joinApplications(tx, now, source, rows.map((r) => ({ id: r.id, email: r.email, name: r.name })));
  await auditMany(tx, now, actorOf(source), rows.map((r, i) => ({ action: 'person.created', target: r.id, details: { email: r.email, username: r.username, dn: batch[i]!.dn, status: r.status } })));
  return ids;
}

/** Makes people active members of the source's applications (those already members are left as they are). */
export async function joinApplications(tx: Tx, now: Date, source: DirectorySource, persons: { id: string; email: string; name: string | null }[]): Promise<void> {
  if (!persons.length || !source.applications.length) return;
  const hooked = await applicationsWithWebhooks(tx, source.applications);
  const byId = new Map(persons.map((p) => [p.id, p]));
  for (const applicationId of source.applications) {
    const joined: { id: string; personId: string }[] = [];
    if (rowByRow(tx)) {
      const { membership } = statements(tx);
      for (const p of persons) joined.push(...(await many(membership, { id: newId('mem'), applicationId, personId: p.id, now })));
    } else {
      const rows = persons.map((p) => ({ id: newId('mem'), applicationId, personId: p.id, status: 'active' as const, role: 'member' as const, profile: {}, joinedAt: now, lastActiveAt: now, updatedAt: now }));
      joined.push(...(await many(tx.insert(memberships).values(rows).onConflictDoNothing().returning({ id: memberships.id, personId: memberships.personId }))));
    }
    if (!hooked.has(applicationId)) continue;
    for (const m of joined) {
      const p = byId.get(m.personId)!;
      await recordEvent(tx, now, applicationId, 'membership.created', { id: m.id, userId: p.id, email: p.email, name: p.name, status: 'active', role: 'member', profile: {} });
    }
  }
}

export interface ChangedSourcePerson extends MappedPerson {
  personId: string;
}

/** Writes new mapped values over people (their entries' digests too); audited, `person.updated` webhooks. */
export async function updatePeople(tx: Tx, now: Date, source: DirectorySource, batch: ChangedSourcePerson[]): Promise<void> {
  if (!batch.length) return;
  const current = new Map((await many(tx.select().from(people).where(inArray(people.id, batch.map((p) => p.personId))))).map((p) => [p.id, p]));
  const audits: { action: string; target: string; details: Record<string, unknown> }[] = [];
  for (const p of batch) {
    const before = current.get(p.personId);
    if (!before) continue;
    const next = { email: p.email, username: p.username, name: p.name, givenName: p.givenName, familyName: p.familyName, sourceDn: p.dn };
    const changed = (Object.keys(next) as (keyof typeof next)[]).filter((k) => before[k] !== next[k]);
    await exec(tx.update(directoryEntries).set({ digest: p.digest, updatedAt: now }).where(and(eq(directoryEntries.sourceId, source.id), eq(directoryEntries.kind, 'person'), eq(directoryEntries.entryKey, p.key))));
    if (!changed.length) continue;
    await exec(tx.update(people).set({ ...next, updatedAt: now }).where(eq(people.id, p.personId)));
    audits.push({ action: 'person.updated', target: p.personId, details: { changed: changed.map((c) => (c === 'sourceDn' ? 'dn' : c)) } });
    const fields = changed.filter((c) => c !== 'sourceDn');
    if (fields.length) {
      await recordPersonEvent(tx, now, p.personId, 'person.updated', {
        userId: p.personId, email: p.email, username: p.username, emailVerified: before.emailVerified, name: p.name, givenName: p.givenName, familyName: p.familyName, changed: fields,
      });
    }
  }
  await auditMany(tx, now, actorOf(source), audits);
}

/**
 * Disables people the source disabled or no longer has: status `disabled`, every session ended
 * (refresh tokens revoked, back-channel logouts queued), audited, `person.disabled` webhooks.
 */
export async function disablePeople(ctx: Pick<AppContext, 'hooks'>, tx: Tx, now: Date, source: DirectorySource, list: { personId: string; reason: string }[]): Promise<number> {
  if (!list.length) return 0;
  const reasons = new Map(list.map((l) => [l.personId, l.reason]));
  const ids = [...reasons.keys()];
  const rows = await many(tx.update(people).set({ status: 'disabled', updatedAt: now }).where(and(inArray(people.id, ids), eq(people.status, 'active'))).returning());
  await exec(tx.update(directoryEntries).set({ disabled: true, updatedAt: now }).where(and(eq(directoryEntries.kind, 'person'), inArray(directoryEntries.targetId, ids))));
  // Sign-ins end only for those who have one (a live session or a live refresh-token family):
  // one indexed look-up for the batch instead of the whole ending for everyone.
  const disabled = rows.map((r) => r.id);
  const signedIn = new Set([
    ...(await many(tx.select({ id: sessions.personId }).from(sessions).where(and(inArray(sessions.personId, disabled), isNull(sessions.revokedAt), gt(sessions.expiresAt, now))))).map((r) => r.id),
    ...(await many(tx.select({ id: refreshTokenFamilies.personId }).from(refreshTokenFamilies).where(and(inArray(refreshTokenFamilies.personId, disabled), isNull(refreshTokenFamilies.revokedAt))))).map((r) => r.id),
  ]);
  const hooked = await anyWebhook(tx);
  const audits: { action: string; target: string; details: Record<string, unknown> }[] = [];
  for (const row of rows) {
    const reason = reasons.get(row.id)!;
    const ended = signedIn.has(row.id) ? (await endSessions(ctx, tx, now, { personId: row.id }, 'person_disabled')).sessionIds.length : 0;
    audits.push({ action: 'person.disabled', target: row.id, details: { email: row.email, reason, sessionsEnded: ended } });
    if (hooked) await recordPersonEvent(tx, now, row.id, 'person.disabled', { userId: row.id, email: row.email, username: row.username, reason });
    // The other plugins hear it as they hear an administrator's (plugin-api/hooks.ts).
    await ctx.hooks.emit('personStatusChanged', { tx, now, person: row, status: 'disabled', actor: actorOf(source) });
  }
  await auditMany(tx, now, actorOf(source), audits);
  return rows.length;
}

/** Enables people the source disabled before and no longer does. */
export async function enablePeople(tx: Tx, now: Date, source: DirectorySource, personIds: string[]): Promise<number> {
  if (!personIds.length) return 0;
  const rows = await many(tx.update(people).set({ status: 'active', updatedAt: now }).where(and(inArray(people.id, personIds), eq(people.status, 'disabled'))).returning({ id: people.id, email: people.email }));
  await exec(tx.update(directoryEntries).set({ disabled: false, updatedAt: now }).where(and(eq(directoryEntries.kind, 'person'), inArray(directoryEntries.targetId, personIds))));
  await auditMany(tx, now, actorOf(source), rows.map((r) => ({ action: 'person.enabled', target: r.id, details: { email: r.email } })));
  return rows.length;
}

// --- Groups ---------------------------------------------------------------------------------

/** Creates or renames a source group; returns whether it was created. */
export async function upsertGroup(tx: Tx, now: Date, source: DirectorySource, group: MappedGroup, existingId: string | undefined, digest: string): Promise<{ id: string; created: boolean; changed: boolean }> {
  if (existingId === undefined) {
    await exec(tx.insert(groups).values({ id: group.id, name: group.name, description: null, sourceId: source.id, sourceDn: group.dn, createdAt: now, updatedAt: now }));
    await exec(tx.insert(directoryEntries).values({ sourceId: source.id, kind: 'group', entryKey: group.key, targetId: group.id, digest, disabled: false, updatedAt: now })
      .onConflictDoUpdate({ target: [directoryEntries.sourceId, directoryEntries.kind, directoryEntries.entryKey], set: { targetId: group.id, digest, updatedAt: now } }));
    await auditMany(tx, now, actorOf(source), [{ action: 'group.created', target: group.id, details: { name: group.name, dn: group.dn } }]);
    await recordDirectoryEvent(tx, now, 'group.created', { id: group.id, name: group.name, description: null });
    return { id: group.id, created: true, changed: true };
  }
  const [before] = await many(tx.select({ name: groups.name, sourceDn: groups.sourceDn }).from(groups).where(eq(groups.id, existingId)));
  const changed = before !== undefined && (before.name !== group.name || before.sourceDn !== group.dn);
  if (changed) {
    await exec(tx.update(groups).set({ name: group.name, sourceDn: group.dn, updatedAt: now }).where(eq(groups.id, existingId)));
    await exec(tx.update(directoryEntries).set({ digest, updatedAt: now }).where(and(eq(directoryEntries.sourceId, source.id), eq(directoryEntries.kind, 'group'), eq(directoryEntries.entryKey, group.key))));
    await auditMany(tx, now, actorOf(source), [{ action: 'group.updated', target: existingId, details: { name: group.name, dn: group.dn } }]);
    await recordDirectoryEvent(tx, now, 'group.updated', { id: existingId, name: group.name, description: null, changed: ['name'] });
  }
  return { id: existingId, created: false, changed };
}

/** Adds and removes members of a source group (at most 5,000 a call). */
export async function changeMembers(tx: Tx, now: Date, source: DirectorySource, groupId: string, add: string[], remove: string[], webhooks: boolean): Promise<void> {
  if (add.length && rowByRow(tx)) {
    const { member } = statements(tx);
    for (const personId of add) await exec(member, { groupId, personId, now });
  } else if (add.length) {
    await exec(tx.insert(groupMembers).values(add.map((personId) => ({ groupId, personId, addedAt: now }))).onConflictDoNothing());
  }
  if (remove.length) await exec(tx.delete(groupMembers).where(and(eq(groupMembers.groupId, groupId), inArray(groupMembers.personId, remove))));
  if (add.length || remove.length) {
    await auditMany(tx, now, actorOf(source), [{ action: 'group.members_synced', target: groupId, details: { added: add.length, removed: remove.length } }]);
  }
  if (!webhooks) return;
  const ids = [...add, ...remove];
  const who = new Map((await many(tx.select({ id: people.id, email: people.email, username: people.username }).from(people).where(inArray(people.id, ids)))).map((p) => [p.id, p]));
  for (const personId of add) {
    const p = who.get(personId);
    if (p) await recordPersonEvent(tx, now, personId, 'group.member_added', { groupId, userId: personId, email: p.email, username: p.username });
  }
  for (const personId of remove) {
    const p = who.get(personId);
    if (p) await recordPersonEvent(tx, now, personId, 'group.member_removed', { groupId, userId: personId, email: p.email, username: p.username });
  }
}

/** Deletes a source group the source no longer has (its members first, in batches the caller runs). */
export async function deleteGroupBatch(tx: Tx, now: Date, source: DirectorySource, groupId: string): Promise<boolean> {
  const members = await many(tx.select({ personId: groupMembers.personId }).from(groupMembers).where(eq(groupMembers.groupId, groupId)).limit(5000));
  if (members.length) {
    await exec(tx.delete(groupMembers).where(and(eq(groupMembers.groupId, groupId), inArray(groupMembers.personId, members.map((m) => m.personId)))));
    if (members.length === 5000) return false;
  }
  await exec(tx.delete(directoryEntries).where(and(eq(directoryEntries.kind, 'group'), eq(directoryEntries.targetId, groupId))));
  await exec(tx.delete(groups).where(eq(groups.id, groupId)));
  await auditMany(tx, now, actorOf(source), [{ action: 'group.deleted', target: groupId, details: { reason: 'gone from the source' } }]);
  await recordDirectoryEvent(tx, now, 'group.deleted', { id: groupId });
  return true;
}

/** Whether any of the installation's applications has a webhook (member events are written only then). */
export async function anyWebhook(tx: Tx): Promise<boolean> {
  return (await many(tx.select({ id: applications.id }).from(applications).where(isNotNull(applications.webhookUrl)).limit(1))).length > 0;
}
