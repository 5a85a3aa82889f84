/**
 * A sync run (spec directory-sources.md, "Sync"): read the source's people and groups with paged
 * searches (500 a page, no referrals) and make Gatehouse's copy match, in write batches sized by
 * time (pace.ts, decision 0392).
 *
 * - Keyed by the entry's id (entryUUID / objectGUID): a renamed or moved entry is the same person.
 *   An entry whose mapped values did not change (same digest) writes nothing.
 * - An entry whose e-mail or username belongs to a person outside the source is a conflict: that
 *   person is untouched, and the entry listed until an administrator links them
 *   (`POST /api/admin/people/:id/directory-link`).
 * - People gone from a full run, disabled at the source (AD userAccountControl bit 2) or matching
 *   `disabledFilter` are disabled here (sessions, refresh tokens and back-channel logout go with
 *   them: writes.ts `disablePeople`); back at the source, they are enabled. A run that would disable
 *   more than 20 % of the source's people stops before disabling anyone, and says so.
 * - Scheduled runs read only entries changed since the last run (`modifyTimestamp` on LDAP,
 *   `uSNChanged` on Active Directory) when the last full run is less than a day old; otherwise,
 *   and for a manual run, everything.
 * - Groups are read whole every run (at most 1,000): source groups are directory groups whose
 *   members mirror the source's, nesting flattened (`member` naming another group; on Active
 *   Directory the in-chain rule does it).
 *
 * The run works in slices of about 5 ms of CPU and yields to the event loop between them; its
 * heartbeat shows it alive, and a run whose heartbeat stopped (the process died) is marked failed
 * by the next start.
 */
import type { AppContext } from '../context.js';
import type { DirectoryConflict, DirectoryRunCounts, DirectorySkipped, DirectorySource, DirectorySyncRun } from '../db/schema.js';
import { recordAudit } from '../audit/record.js';
import { engineOf, singleton, transaction } from '../db/store.js';
import { countGroups } from '../groups/queries.js';
import { MAX_GROUPS } from '../groups/service.js';
import { newId } from '../util/ids.js';
import { and, atLeast, equals, extensible } from './filter.js';
import { IN_CHAIN_RULE, KIND_DEFAULTS } from './defaults.js';
import { SourceConnection, SourceError } from './connection.js';
import { dnKey, entryKey, groupAttributes, mapGroup, mapPerson, personAttributes, type MappedGroup, type MappedPerson } from './mapping.js';
import { entryPage, findRun, findSource, groupMemberIds, groupsHolding, insertRun, latestRun, peopleHolding, sourcePeopleByIds, updateRun, updateSourceRow, type EntryRow } from './queries.js';
import { bindPasswordOf } from './sources.js';
import { countSyncRun } from './metrics.js';
import { running } from './runs.js';
import { Pacer, SLICE_MS, Slicer, statisticsKeeper, tick, walPacer, widenSqliteCache } from './pace.js';
import {
  actorOf,
  anyWebhook,
  changeMembers,
  createPeople,
  deleteGroupBatch,
  disablePeople,
  enablePeople,
  updatePeople,
  upsertGroup,
  type ChangedSourcePerson,
  type NewSourcePerson,
} from './writes.js';

/** Share of a source's people one run may disable (spec: over 20 % fails). */
export const MAX_DISABLE_SHARE = 0.2;
/** A full run at least this often, whatever the schedule (spec: full daily). */
export const FULL_RUN_EVERY_MS = 24 * 3600_000;
/** How long an operation on the source may take during a run. */
export const SYNC_TIMEOUT_MS = 30_000;
/** A running run whose heartbeat is older than this is taken for dead. */
export const HEARTBEAT_STALE_MS = 2 * 60_000;
/** Rows read per query when a run loads what it has of a source (each a couple of milliseconds). */
export const READ_PAGE = 500;
/** Most rows one write transaction takes (the spec's batches of 500); pace.ts sizes them by time below that. */
export const MAX_WRITE_BATCH = 500;
/** Conflicts and skipped entries a run keeps (the counts are complete). */
export const LISTED = 1000;

/**
 * Write batches sized by time: on SQLite (synchronous, a transaction holds the loop from BEGIN to
 * COMMIT) a few milliseconds each; on PostgreSQL, where a transaction mostly waits on the network,
 * longer ones (fewer round trips).
 */
function writePacer(ctx: AppContext, max = MAX_WRITE_BATCH): Pacer {
  return engineOf(ctx.db) === 'sqlite' ? new Pacer(20, max, SLICE_MS, walPauses(ctx.db)) : new Pacer(50, max, 100);
}

/** One WAL watch per database handle: every pacer of a run (people, disabling, members) shares it. */
const walWatches = new WeakMap<object, () => Promise<void>>();
function walPauses(db: object): () => Promise<void> {
  let watch = walWatches.get(db);
  if (!watch) walWatches.set(db, (watch = walPacer(db)));
  return watch;
}

/** Stopped on purpose (the 20 % rule): the run fails with this message, the source stays `ok`. */
class RunStop extends Error {}

class RunState {
  counts: DirectoryRunCounts = { created: 0, updated: 0, disabled: 0, enabled: 0, skipped: 0, conflicts: 0 };
  conflicts: DirectoryConflict[] = [];
  skipped: DirectorySkipped[] = [];

  skip(dn: string, reason: string) {
    this.counts.skipped++;
    if (this.skipped.length < LISTED) this.skipped.push({ dn, reason });
  }

  conflict(dn: string, email: string | null, username: string | null) {
    this.counts.conflicts++;
    if (this.conflicts.length < LISTED) this.conflicts.push({ dn, email, username });
  }
}

/** Whether the source's last full run is recent enough for a changes-only run. */
export function changesOnlyPossible(source: DirectorySource, now: Date): boolean {
  return source.changeMark !== null && source.lastFullSyncAt !== null && now.getTime() - source.lastFullSyncAt.getTime() < FULL_RUN_EVERY_MS;
}

/**
 * Starts a run of `source` in the background and answers its record at once; when one is already
 * running, that one. A run left `running` by a process that died is failed first.
 */
export async function startRun(ctx: AppContext, source: DirectorySource, options: { full: boolean; trigger: 'manual' | 'scheduled' }): Promise<DirectorySyncRun> {
  const now = ctx.clock.now();
  const latest = await latestRun(ctx.db, source.id);
  if (latest?.state === 'running') {
    if (running.has(source.id) || Date.now() - latest.heartbeatAt.getTime() < HEARTBEAT_STALE_MS) return latest;
    await updateRun(ctx.db, latest.id, { state: 'failed', error: 'The run stopped without finishing (the server stopped during it).', finishedAt: now });
  }
  const full = options.full || !changesOnlyPossible(source, now);
  const id = newId('drun');
  await insertRun(ctx.db, {
    id, sourceId: source.id, state: 'running', full, trigger: options.trigger,
    counts: { created: 0, updated: 0, disabled: 0, enabled: 0, skipped: 0, conflicts: 0 }, conflicts: [], skipped: [], error: null,
    startedAt: now, finishedAt: null, heartbeatAt: new Date(),
  });
  const work = singleton(ctx.db, `directory-sync:${source.id}`, () => executeRun(ctx, source.id, id, full))
    .then(async (outcome) => {
      if (!outcome.ran) await updateRun(ctx.db, id, { state: 'failed', error: 'Another instance is running this source now.', finishedAt: ctx.clock.now() });
    })
    .catch(() => {})
    .finally(() => running.delete(source.id));
  running.set(source.id, work);
  return (await findRun(ctx.db, source.id, id))!;
}

async function executeRun(ctx: AppContext, sourceId: string, runId: string, full: boolean): Promise<void> {
  const state = new RunState();
  const source = await findSource(ctx.db, sourceId);
  if (!source) return;
  let beat = Date.now();
  const heartbeat = async (force = false) => {
    if (!force && Date.now() - beat < 5000) return;
    beat = Date.now();
    await updateRun(ctx.db, runId, { heartbeatAt: new Date(), counts: state.counts });
  };
  try {
    const mark = await syncSource(ctx, source, state, full, heartbeat);
    const now = ctx.clock.now();
    await transaction(ctx.db, async (tx) => {
      await updateRun(tx, runId, { state: 'succeeded', counts: state.counts, conflicts: state.conflicts, skipped: state.skipped, finishedAt: now, heartbeatAt: new Date() });
      await updateSourceRow(tx, source.id, { status: 'ok', lastError: null, lastSyncAt: now, ...(full ? { lastFullSyncAt: now } : {}), changeMark: mark });
      await recordAudit(tx, now, { actor: actorOf(source), action: 'directory_source.sync_finished', target: source.id, ip: null, details: { run: runId, full, ...state.counts } });
    });
    countSyncRun(ctx, 'succeeded');
  } catch (error) {
    const now = ctx.clock.now();
    const message = error instanceof SourceError || error instanceof RunStop ? error.message : 'The run failed on an unexpected error; the server log has the details.';
    if (!(error instanceof SourceError) && !(error instanceof RunStop)) console.error('directory sync failed', error);
    await transaction(ctx.db, async (tx) => {
      await updateRun(tx, runId, { state: 'failed', error: message, counts: state.counts, conflicts: state.conflicts, skipped: state.skipped, finishedAt: now, heartbeatAt: new Date() });
      await updateSourceRow(tx, source.id, { lastError: message, ...(error instanceof SourceError && error.unreachable ? { status: 'unreachable' } : {}) });
      await recordAudit(tx, now, { actor: actorOf(source), action: 'directory_source.sync_failed', target: source.id, ip: null, details: { run: runId, full, error: message } });
    });
    countSyncRun(ctx, 'failed');
  } finally {
    ctx.wakeWebhooks();
  }
}

/** The larger change mark: generalized time compares as text, USNs as numbers. */
function laterMark(a: string | null | undefined, b: string | undefined): string | null {
  if (b === undefined) return a ?? null;
  if (a === null || a === undefined) return b;
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return BigInt(b) > BigInt(a) ? b : a;
  return b > a ? b : a;
}

/** Opens a connection and binds as the source's service account. */
export async function serviceConnection(ctx: AppContext, source: DirectorySource, timeoutMs: number): Promise<SourceConnection> {
  const connection = await SourceConnection.open(source, { timeoutMs });
  try {
    if (source.bindDn) {
      const bound = await connection.bind(source.bindDn, bindPasswordOf(ctx, source) ?? '');
      if (bound === 'invalid') throw new SourceError('bind', `${source.name} refused the service account ${source.bindDn}: check bindDn and bindPassword.`);
    }
    return connection;
  } catch (error) {
    await connection.close();
    throw error;
  }
}

/** The whole run; returns the change mark to keep. */
async function syncSource(ctx: AppContext, source: DirectorySource, state: RunState, full: boolean, heartbeat: (force?: boolean) => Promise<void>): Promise<string | null> {
  const defaults = KIND_DEFAULTS[source.kind];
  const changeAttribute = defaults.changeAttribute;
  const attrs = source.attributes;
  const connection = await serviceConnection(ctx, source, SYNC_TIMEOUT_MS);
  const narrow = widenSqliteCache(ctx.db);
  try {
    // People the disabled filter names: only their keys.
    const disabledKeys = new Set<string>();
    if (source.disabledFilter) {
      for await (const page of connection.search(source.peopleBase, and(source.peopleFilter, source.disabledFilter), [attrs.id])) {
        for (const entry of page) {
          const key = entryKey(entry, attrs.id);
          if (key) disabledKeys.add(key);
        }
      }
    }
    // What Gatehouse has of this source, by key: loaded once per run, in pages (100,000 people
    // must not hold the loop), so no entry costs a look-up of its own.
    const known = new Map<string, EntryRow>();
    for (let after: string | undefined; ;) {
      const page = await entryPage(ctx.db, source.id, 'person', after, READ_PAGE);
      for (const row of page.rows) known.set(row.entryKey, row);
      if (!page.full) break;
      after = page.last;
      await tick();
    }
    const before = known.size;
    const seen = new Set<string>();
    const toDisable = new Map<string, string>();
    let mark: string | null = full ? null : source.changeMark;
    const filter = full || source.changeMark === null ? source.peopleFilter : and(source.peopleFilter, atLeast(changeAttribute, source.changeMark));
    const webhooks = await anyWebhook(ctx.db);
    const disabledAt = (p: MappedPerson) => p.disabledAtSource || disabledKeys.has(p.key);
    const slicer = new Slicer();
    const pacer = writePacer(ctx);
    const statistics = statisticsKeeper(ctx.db);
    await statistics(before);
    for await (const page of connection.search(source.peopleBase, filter, personAttributes(attrs, source.kind, changeAttribute))) {
      // Mapped and compared in slices of a few milliseconds: an entry whose digest is the one kept
      // (and whose disabled state did not change) costs a hash and nothing else. Only the rest is
      // written, in transactions sized by time (pace.ts), the loop turning between them.
      await slicer.yield();
      const pending: MappedPerson[] = [];
      for (const entry of page) {
        await slicer.maybeYield();
        const mapped = mapPerson(entry, attrs, source.kind, changeAttribute);
        if (!mapped.ok) {
          state.skip(mapped.dn, mapped.reason);
          continue;
        }
        const p = mapped.value;
        if (seen.has(p.key)) {
          state.skip(p.dn, `the same ${attrs.id} as another entry`);
          continue;
        }
        seen.add(p.key);
        mark = laterMark(mark, p.changeMark);
        const row = known.get(p.key);
        if (row && row.digest === p.digest) {
          // Unchanged: its person holds this address and username already (no conflict to look for).
          if (disabledAt(p) && !row.disabled) {
            toDisable.set(row.targetId, p.disabledAtSource ? 'disabled at the source (userAccountControl)' : 'matches the disabled filter');
            continue;
          }
          if (disabledAt(p) === row.disabled) continue;
        }
        pending.push(p);
      }
      await pacer.run(pending, (batch) => applyPeople(ctx, source, batch, known, disabledKeys, state, toDisable));
      // The people the source has now, at least: the look-ups' plans stay index searches (pace.ts).
      await statistics(before + state.counts.created);
      await heartbeat();
    }
    if (full) {
      for (const [key, row] of known) if (!seen.has(key) && !row.disabled) toDisable.set(row.targetId, 'gone from the source');
    } else {
      for (const key of disabledKeys) {
        const row = known.get(key);
        if (row && !row.disabled && !seen.has(key)) toDisable.set(row.targetId, 'matches the disabled filter');
      }
    }
    const total = before + state.counts.created;
    if (toDisable.size > 0 && toDisable.size > MAX_DISABLE_SHARE * total) {
      throw new RunStop(
        `This run would disable ${toDisable.size} of the ${total} people of ${source.name} (more than ${MAX_DISABLE_SHARE * 100} %), so it stopped and disabled no one. ` +
          'Check the people base and filter; if they really left, disable them in smaller steps or narrow the filter.',
      );
    }
    const disabling = [...toDisable].map(([personId, reason]) => ({ personId, reason }));
    await writePacer(ctx, 100).run(disabling, async (batch) => {
      const now = ctx.clock.now();
      state.counts.disabled += await transaction(ctx.db, (tx) => disablePeople(ctx, tx, now, source, batch));
      await heartbeat();
    });
    if (source.groupsBase) await syncGroups(ctx, source, connection, state, full, webhooks, heartbeat);
    return mark;
  } finally {
    narrow();
    await connection.close();
  }
}

/** A batch of new, changed or re-enabled people: conflicts sorted out, then creates, updates and enables in one transaction. */
async function applyPeople(
  ctx: AppContext,
  source: DirectorySource,
  batch: MappedPerson[],
  known: Map<string, EntryRow>,
  disabledKeys: Set<string>,
  state: RunState,
  toDisable: Map<string, string>,
): Promise<void> {
  if (!batch.length) return;
  const disabledAt = (p: MappedPerson) => p.disabledAtSource || disabledKeys.has(p.key);
  await transaction(ctx.db, async (tx) => {
    const now = ctx.clock.now();
    // Who holds these addresses and usernames now.
    const holders = await peopleHolding(tx, batch.map((p) => p.email), batch.map((p) => p.username));
    const byEmail = new Map(holders.map((h) => [h.email, h]));
    const byUsername = new Map(holders.map((h) => [h.username, h]));
    const fresh: NewSourcePerson[] = [];
    const changed: ChangedSourcePerson[] = [];
    const enable: string[] = [];
    const claimedEmails = new Set<string>();
    const claimedUsernames = new Set<string>();
    for (const p of batch) {
      const row = known.get(p.key);
      const self = row?.targetId;
      const emailHolder = byEmail.get(p.email);
      const usernameHolder = byUsername.get(p.username);
      const clash = (emailHolder && emailHolder.id !== self) || (usernameHolder && usernameHolder.id !== self) || claimedEmails.has(p.email) || claimedUsernames.has(p.username);
      if (clash) {
        // Someone else has it: a local person (linked only on an administrator's word), another
        // source's, or another entry of this source with the same address.
        state.conflict(p.dn, p.email, p.username);
        continue;
      }
      claimedEmails.add(p.email);
      claimedUsernames.add(p.username);
      if (!row) {
        fresh.push({ ...p, disabled: disabledAt(p) });
        continue;
      }
      if (row.digest !== p.digest) changed.push({ ...p, personId: row.targetId });
      if (disabledAt(p) && !row.disabled) toDisable.set(row.targetId, p.disabledAtSource ? 'disabled at the source (userAccountControl)' : 'matches the disabled filter');
      else if (!disabledAt(p) && row.disabled) enable.push(row.targetId);
    }
    const created = await createPeople(tx, now, source, fresh);
    for (const p of fresh) known.set(p.key, { entryKey: p.key, targetId: created.get(p.key)!, digest: p.digest, disabled: p.disabled });
    state.counts.created += fresh.length;
    await updatePeople(tx, now, source, changed);
    for (const p of changed) known.get(p.key)!.digest = p.digest;
    state.counts.updated += changed.length;
    state.counts.enabled += await enablePeople(tx, now, source, enable);
    const enabled = new Set(enable);
    for (const p of batch) {
      const row = known.get(p.key);
      if (row && enabled.has(row.targetId)) row.disabled = false;
    }
  });
  ctx.wakeWebhooks();
}

/** Groups: read them all, resolve members (nesting flattened), create, rename, mirror members, delete the gone. */
async function syncGroups(
  ctx: AppContext,
  source: DirectorySource,
  connection: SourceConnection,
  state: RunState,
  full: boolean,
  webhooks: boolean,
  heartbeat: (force?: boolean) => Promise<void>,
): Promise<void> {
  const attrs = source.attributes;
  const changeAttribute = KIND_DEFAULTS[source.kind].changeAttribute;
  const mapped: MappedGroup[] = [];
  const seenKeys = new Set<string>();
  const slicer = new Slicer();
  for await (const page of connection.search(source.groupsBase!, source.groupsFilter, groupAttributes(attrs, changeAttribute))) {
    await slicer.yield();
    for (const entry of page) {
      await slicer.maybeYield();
      const group = mapGroup(entry, attrs, changeAttribute);
      if (!group.ok) state.skip(group.dn, group.reason);
      else if (seenKeys.has(group.value.key)) state.skip(group.value.dn, `the same ${attrs.id} as another entry`);
      else if (mapped.length >= MAX_GROUPS) state.skip(group.value.dn, `more than ${MAX_GROUPS} groups`);
      else {
        seenKeys.add(group.value.key);
        mapped.push(group.value);
      }
    }
    await tick();
  }
  // The source's people as Gatehouse has them now (one pass over its entries): DN, username and
  // (Active Directory) entry key to person id.
  const byDn = new Map<string, string>();
  const byUsername = new Map<string, string>();
  const keyToPerson = new Map<string, string>();
  for (let after: string | undefined; ;) {
    const page = await entryPage(ctx.db, source.id, 'person', after, READ_PAGE);
    const keyOf = new Map(page.rows.map((r) => [r.targetId, r.entryKey]));
    // A turn of the loop between the two reads (each a few milliseconds at 100,000 people).
    await tick();
    for (const row of await sourcePeopleByIds(ctx.db, source.id, [...keyOf.keys()])) {
      if (row.dn) byDn.set(dnKey(row.dn), row.id);
      byUsername.set(row.username, row.id);
      if (attrs.nestedMembers) keyToPerson.set(keyOf.get(row.id)!, row.id);
    }
    if (!page.full) break;
    after = page.last;
    await tick();
  }
  // Members, nesting flattened: a member DN that is one of these groups brings in its members.
  const groupByDn = new Map(mapped.map((g) => [dnKey(g.dn), g]));
  const resolved = new Map<string, Set<string>>();
  const membersOf = (group: MappedGroup, path: Set<string>): Set<string> => {
    const done = resolved.get(group.key);
    if (done) return done;
    const out = new Set<string>();
    for (const uid of group.memberUids) {
      const id = byUsername.get(uid);
      if (id) out.add(id);
    }
    for (const dn of group.memberDns) {
      const k = dnKey(dn);
      const person = byDn.get(k);
      if (person) out.add(person);
      const nested = groupByDn.get(k);
      if (nested && !path.has(nested.key)) {
        path.add(nested.key);
        for (const id of membersOf(nested, path)) out.add(id);
        path.delete(nested.key);
      }
    }
    resolved.set(group.key, out);
    return out;
  };
  const known = new Map<string, EntryRow>();
  for (let after: string | undefined; ;) {
    const page = await entryPage(ctx.db, source.id, 'group', after, READ_PAGE);
    for (const row of page.rows) known.set(row.entryKey, row);
    if (!page.full) break;
    after = page.last;
    await tick();
  }
  const holders = new Map((await groupsHolding(ctx.db, mapped.map((g) => g.id))).map((g) => [g.id, g]));
  const ownIds = new Set([...known.values()].map((r) => r.targetId));
  let groupCount = await countGroups(ctx.db);
  const memberPacer = writePacer(ctx, 5000);
  const claimed = new Set<string>();
  for (const group of mapped) {
    const row = known.get(group.key);
    const holder = holders.get(group.id);
    if (!row && ((holder && !ownIds.has(holder.id)) || claimed.has(group.id))) {
      // A local group (or another source's) has this id: listed, left alone.
      state.conflict(group.dn, null, group.id);
      continue;
    }
    if (!row && groupCount >= MAX_GROUPS) {
      state.skip(group.dn, `there are already ${MAX_GROUPS} groups`);
      continue;
    }
    claimed.add(group.id);
    let members: Set<string>;
    if (attrs.nestedMembers) {
      members = new Set();
      // Active Directory: the domain controller walks the nesting (MS-ADTS 3.1.1.3.4.4.3).
      for await (const page of connection.search(source.peopleBase, and(source.peopleFilter, extensible('memberOf', IN_CHAIN_RULE, group.dn)), [attrs.id])) {
        for (const entry of page) {
          const id = keyToPerson.get(entryKey(entry, attrs.id) ?? '');
          if (id) members.add(id);
        }
      }
    } else {
      members = membersOf(group, new Set([group.key]));
      await slicer.maybeYield();
    }
    const now = ctx.clock.now();
    const { id } = await transaction(ctx.db, async (tx) => {
      const result = await upsertGroup(tx, now, source, group, row?.targetId, group.key);
      if (result.created) groupCount++;
      return result;
    });
    // Members diffed as sets: only who joined or left is written, in batches sized by time.
    const current = new Set(await groupMemberIds(ctx.db, id));
    const changes: { personId: string; add: boolean }[] = [];
    for (const p of members) if (!current.has(p)) changes.push({ personId: p, add: true });
    for (const p of current) if (!members.has(p)) changes.push({ personId: p, add: false });
    await memberPacer.run(changes, (batch) =>
      transaction(ctx.db, (tx) => changeMembers(tx, ctx.clock.now(), source, id, batch.filter((c) => c.add).map((c) => c.personId), batch.filter((c) => !c.add).map((c) => c.personId), webhooks)));
    await heartbeat();
    await slicer.yield();
  }
  if (full) {
    for (const [key, row] of known) {
      if (seenKeys.has(key)) continue;
      while (!(await transaction(ctx.db, (tx) => deleteGroupBatch(tx, ctx.clock.now(), source, row.targetId)))) await tick();
    }
  }
  ctx.wakeWebhooks();
}

/** For a sign-in: the one entry whose username (or e-mail) is `login`, mapped; undefined when none or several. */
export async function findEntry(connection: SourceConnection, source: DirectorySource, login: string): Promise<{ mapped: MappedPerson | undefined; skipped: string | undefined; dn: string } | undefined> {
  const attrs = source.attributes;
  const attribute = login.includes('@') ? attrs.email : attrs.username;
  const found = [];
  for await (const page of connection.search(source.peopleBase, and(source.peopleFilter, equals(attribute, login)), personAttributes(attrs, source.kind, KIND_DEFAULTS[source.kind].changeAttribute), { sizeLimit: 2 })) {
    found.push(...page);
  }
  if (found.length !== 1) return undefined;
  const mapped = mapPerson(found[0]!, attrs, source.kind, KIND_DEFAULTS[source.kind].changeAttribute);
  return mapped.ok ? { mapped: mapped.value, skipped: undefined, dn: mapped.value.dn } : { mapped: undefined, skipped: mapped.reason, dn: mapped.dn };
}
