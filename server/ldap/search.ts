/**
 * RFC 4511 §4.5: the search operation, with RFC 2696 paged results (spec ldap.md, "Operations").
 *
 * - The root DSE (empty base, scope base) may be read by anyone; every other search needs a bind
 *   (anonymous: insufficientAccessRights). A base that is not in the tree is noSuchObject with
 *   the nearest entry that is (matchedDN); a base that is not a DN is invalidDNSyntax.
 * - What a bound reader sees: its application's active members under `ou=people` and the groups
 *   its application's `groupsFilter` keeps (every group when it has none) under `ou=groups`,
 *   members shown only when they are among those people; a person's `memberOf` names only those
 *   groups too, as the `groups` claim does (docs/claims-and-scopes.md; issue 49, H8). Scopes base, one
 *   and sub walk that tree; each kind of entry is read through its plan (plan.ts) in slices of
 *   SLICE rows, each slice one indexed query, the event loop given back between slices and the
 *   socket's buffer allowed to drain, so a search of 100,000 people holds neither the loop nor
 *   more than a slice in memory.
 * - At most the client's size limit, and never more than SIZE_LIMIT entries per search or page:
 *   past it sizeLimitExceeded (with paged results, each page holds at most that many, and the
 *   client's size limit counts over all pages). At most min(time limit, TIME_LIMIT_S) seconds:
 *   then timeLimitExceeded. An abandoned search stops between two entries and answers nothing.
 * - Paged results: the cookie is where the search stands (phase, position, entries so far) with a
 *   fingerprint of the search, so it resumes without state on the server; a cookie from another
 *   search is refused (unwillingToPerform). Page size 0 ends a paged search.
 */
import { createHash } from 'node:crypto';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import type { AppContext } from '../context.js';
import { groupIdsOfPeople, groupIdsOfPerson } from '../groups/queries.js';
import type { Identity } from './bind.js';
import type { LdapConnection } from './connection.js';
import { dnKey, isWithin, parseDn, singleAva, type Dn } from './dn.js';
import { baseEntry, groupEntry, ouEntry, personEntry, rootDse, type Entry, type Tree } from './entries.js';
import { evaluate, type Filter } from './filter.js';
import { planGroups, planPeople, type GroupPlan, type PeoplePlan } from './plan.js';
import {
  OID,
  Op,
  ResultCode,
  decodePagedResults,
  entryResponse,
  pagedResultsControl,
  resultResponse,
  type Message,
  type ResultFields,
  type SearchRequest,
} from './protocol.js';
import {
  groupMembersAfter,
  groupsAfter,
  groupsBy,
  membersAfter,
  membersBy,
  viewMembersOfGroups,
  type GroupRow,
  type MemberRow,
} from './queries.js';
import { GROUPS_OU, PEOPLE_OU, SERVICES_OU, groupsDn, peopleDn, servicesDn } from './tree.js';

/** The most entries one search (or one page) returns. */
export const SIZE_LIMIT = 1_000;
/** The longest a search may run, in seconds. */
export const TIME_LIMIT_S = 60;
/** Rows read per query. */
export const SLICE = 200;

/** Where in the tree a search starts. */
type Node =
  | { kind: 'base' }
  | { kind: 'ou'; ou: typeof PEOPLE_OU | typeof GROUPS_OU | typeof SERVICES_OU }
  | { kind: 'person'; username: string }
  | { kind: 'group'; id: string }
  | { kind: 'missing'; matchedDN: string };

/** What a search walks, in order: fixed entries, then people, then groups. */
type Phase =
  | { kind: 'entry'; entry: Entry }
  | { kind: 'people'; only?: string }
  | { kind: 'groups'; only?: string };

/** Where a paged search stands: the phase, the position in it, entries returned so far. */
interface Position {
  phase: number;
  cursor: Cursor | undefined;
  sent: number;
}
type Cursor = { t: number; id: string } | { id: string } | { i: number };

export interface SearchHost {
  ctx: AppContext;
  tree: Tree;
  /** Whether StartTLS is offered (the root DSE says so). */
  startTls(): boolean;
}

export async function search(host: SearchHost, connection: LdapConnection, message: Message & { request: SearchRequest }): Promise<void> {
  const request = message.request;
  const done = (fields: ResultFields, cookie?: Buffer) =>
    connection.send(resultResponse(message.id, Op.searchResultDone, fields, cookie ? [pagedResultsControl(0, cookie)] : []));

  const control = message.controls.find((c) => c.oid === OID.pagedResults);
  let paging: { size: number; cookie: Buffer } | undefined;
  if (control) {
    try {
      paging = decodePagedResults(control.value);
    } catch {
      return void done({ code: ResultCode.protocolError, diagnostic: 'the paged-results control is malformed' });
    }
  }

  const base = parseDn(request.baseObject);
  if (!base) return void done({ code: ResultCode.invalidDNSyntax, diagnostic: `"${request.baseObject.slice(0, 200)}" is not a DN` });
  if (base.length === 0) {
    if (request.scope !== 'base') return void done({ code: ResultCode.noSuchObject, diagnostic: 'search below the root DSE with a base DN' });
    const dse = rootDse(host.tree, host.startTls());
    if (evaluate(request.filter, dse) === true) connection.send(entryResponse(message.id, '', dse.select(request.attributes, request.typesOnly)));
    return void done({ code: ResultCode.success });
  }
  const identity = connection.identity;
  if (identity.kind === 'anonymous') return void done({ code: ResultCode.insufficientAccessRights, diagnostic: 'bind first: anonymous binds may read the root DSE only' });

  const { ctx, tree } = host;
  const visible = new VisibleGroups(identity.groupsFilter);
  const node = await locate(ctx, tree, identity.applicationId, visible, base);
  if (node.kind === 'missing') return void done({ code: ResultCode.noSuchObject, matchedDN: node.matchedDN });
  const phases = phasesOf(tree, node, request.scope);

  // Paged results (RFC 2696): page size 0 ends the search; a cookie resumes it.
  const fingerprint = paging ? fingerprintOf(identity, base, request) : '';
  let position: Position = { phase: 0, cursor: undefined, sent: 0 };
  if (paging && paging.cookie.length) {
    const resumed = readCookie(paging.cookie, fingerprint);
    if (!resumed) return void done({ code: ResultCode.unwillingToPerform, diagnostic: 'the paged-results cookie does not belong to this search' });
    position = resumed;
  }
  if (paging && paging.size === 0) return void done({ code: ResultCode.success }, Buffer.alloc(0));

  const clientLimit = request.sizeLimit > 0 ? request.sizeLimit : Infinity;
  const pageLimit = paging ? Math.min(paging.size, SIZE_LIMIT) : SIZE_LIMIT;
  const deadline = Date.now() + Math.min(request.timeLimit > 0 ? request.timeLimit : TIME_LIMIT_S, TIME_LIMIT_S) * 1000;
  const plans = { people: planPeople(request.filter, tree.baseDn), groups: planGroups(request.filter, tree.baseDn) };
  const walk = new Walk(host, identity.applicationId, visible, request, plans);

  let inPage = 0;
  let outcome: 'done' | 'page' | 'size' | 'time' | 'abandoned' = 'done';
  for (let p = position.phase; p < phases.length && outcome === 'done'; p++) {
    let cursor = p === position.phase ? position.cursor : undefined;
    for await (const item of walk.run(phases[p]!, cursor)) {
      if (connection.isAbandoned(message.id)) {
        outcome = 'abandoned';
        break;
      }
      if (Date.now() > deadline) {
        outcome = 'time';
        break;
      }
      cursor = item.cursor;
      if (!item.entry) continue; // a slice boundary: the cursor moved, nothing to send
      if (position.sent >= clientLimit || (!paging && inPage >= pageLimit)) {
        outcome = 'size';
        break;
      }
      if (paging && inPage >= pageLimit) {
        // The page is full and one more entry exists: resume at it (before this entry).
        position = { phase: p, cursor: item.before, sent: position.sent };
        outcome = 'page';
        break;
      }
      connection.send(entryResponse(message.id, item.entry.dn, item.entry.select(request.attributes, request.typesOnly)));
      position.sent++;
      inPage++;
      await connection.drained();
    }
  }
  if (outcome === 'abandoned' || !connection.open) return;
  if (outcome === 'time') return void done({ code: ResultCode.timeLimitExceeded }, paging ? Buffer.alloc(0) : undefined);
  if (outcome === 'size') return void done({ code: ResultCode.sizeLimitExceeded }, paging ? Buffer.alloc(0) : undefined);
  if (outcome === 'page') return void done({ code: ResultCode.success }, writeCookie(position, fingerprint));
  done({ code: ResultCode.success }, paging ? Buffer.alloc(0) : undefined);
}

/** The groups a reader may see: its application's `groupsFilter`, or every group when it is null. */
class VisibleGroups {
  private readonly only: ReadonlySet<string> | undefined;

  constructor(filter: readonly string[] | null) {
    this.only = filter === null ? undefined : new Set(filter);
  }

  has(groupId: string): boolean {
    return this.only === undefined || this.only.has(groupId);
  }

  /** `ids` (or rows with an id) kept to the visible ones, in their order. */
  keep<T extends string | { id: string }>(items: readonly T[]): T[] {
    if (this.only === undefined) return [...items];
    return items.filter((item) => this.has(typeof item === 'string' ? item : item.id));
  }
}

/** Finds the base in the tree, as the reader sees it. */
async function locate(ctx: AppContext, tree: Tree, applicationId: string, visible: VisibleGroups, base: Dn): Promise<Node> {
  if (!isWithin(base, tree.baseDn)) return { kind: 'missing', matchedDN: '' };
  const depth = base.length - tree.baseDn.length;
  if (depth === 0) return { kind: 'base' };
  const ou = singleAva(base[depth - 1]);
  type OuName = typeof PEOPLE_OU | typeof GROUPS_OU | typeof SERVICES_OU;
  const ouName = ou?.type === 'ou' && ([PEOPLE_OU, GROUPS_OU, SERVICES_OU] as string[]).includes(ou.value) ? (ou.value as OuName) : undefined;
  if (!ouName) return { kind: 'missing', matchedDN: tree.base };
  const ouDn = ouName === PEOPLE_OU ? peopleDn(tree.base) : ouName === GROUPS_OU ? groupsDn(tree.base) : servicesDn(tree.base);
  if (depth === 1) return { kind: 'ou', ou: ouName };
  const leaf = singleAva(base[depth - 2]);
  if (depth === 2 && leaf && ouName === PEOPLE_OU && leaf.type === 'uid') {
    const found = await membersBy(ctx.db, applicationId, 'username', [leaf.value]);
    if (found.length) return { kind: 'person', username: leaf.value };
  }
  if (depth === 2 && leaf && ouName === GROUPS_OU && leaf.type === 'cn') {
    const found = visible.keep(await groupsBy(ctx.db, 'id', [leaf.value]));
    if (found.length) return { kind: 'group', id: leaf.value };
  }
  // Below an entry, or an entry the reader does not see: the nearest one that exists.
  return { kind: 'missing', matchedDN: ouDn };
}

function phasesOf(tree: Tree, node: Exclude<Node, { kind: 'missing' }>, scope: SearchRequest['scope']): Phase[] {
  const ou = (name: typeof PEOPLE_OU | typeof GROUPS_OU | typeof SERVICES_OU): Phase => ({ kind: 'entry', entry: ouEntry(tree, name) });
  switch (node.kind) {
    case 'base':
      if (scope === 'base') return [{ kind: 'entry', entry: baseEntry(tree) }];
      if (scope === 'one') return [ou(PEOPLE_OU), ou(GROUPS_OU), ou(SERVICES_OU)];
      return [{ kind: 'entry', entry: baseEntry(tree) }, ou(PEOPLE_OU), { kind: 'people' }, ou(GROUPS_OU), { kind: 'groups' }, ou(SERVICES_OU)];
    case 'ou': {
      const children: Phase[] = node.ou === PEOPLE_OU ? [{ kind: 'people' }] : node.ou === GROUPS_OU ? [{ kind: 'groups' }] : [];
      if (scope === 'base') return [ou(node.ou)];
      if (scope === 'one') return children;
      return [ou(node.ou), ...children];
    }
    case 'person':
      return scope === 'one' ? [] : [{ kind: 'people', only: node.username }];
    case 'group':
      return scope === 'one' ? [] : [{ kind: 'groups', only: node.id }];
  }
}

/** One entry to consider, and the cursors just before and just after it. */
interface Item {
  entry: Entry | undefined;
  before: Cursor | undefined;
  cursor: Cursor | undefined;
}

/** Walks phases slice by slice, yielding candidate entries that match the filter. */
class Walk {
  constructor(
    private readonly host: SearchHost,
    private readonly applicationId: string,
    private readonly visible: VisibleGroups,
    private readonly request: SearchRequest,
    private readonly plans: { people: PeoplePlan; groups: GroupPlan },
  ) {}

  async *run(phase: Phase, cursor: Cursor | undefined): AsyncGenerator<Item> {
    if (phase.kind === 'entry') {
      if (cursor === undefined && evaluate(this.request.filter, phase.entry) === true) yield { entry: phase.entry, before: undefined, cursor: { i: 1 } };
      return;
    }
    if (phase.kind === 'people') yield* this.people(phase.only, cursor);
    else yield* this.groups(phase.only, cursor);
  }

  private matches(entry: Entry) {
    return evaluate(this.request.filter, entry) === true;
  }

  /** People: a look-up's rows by position, or a walk's slices by keyset. */
  private async *people(only: string | undefined, cursor: Cursor | undefined): AsyncGenerator<Item> {
    const { ctx } = this.host;
    const plan: PeoplePlan = only === undefined ? this.plans.people : { kind: 'lookup', key: 'username', values: [only] };
    if (plan.kind === 'none') return;
    // `(memberOf=<a group the reader does not see>)`: no entry shows it.
    if (plan.kind === 'inGroup' && !this.visible.has(plan.groupId)) return;
    if (plan.kind === 'lookup') {
      const rows = await membersBy(ctx.db, this.applicationId, plan.key, plan.values);
      yield* this.emitPeople(rows, (i) => ({ i }), cursor && 'i' in cursor ? cursor.i : 0);
      return;
    }
    let after = cursor;
    for (;;) {
      const rows = plan.kind === 'inGroup'
        ? await groupMembersAfter(ctx.db, this.applicationId, plan.groupId, after && 'id' in after ? after.id : undefined, SLICE)
        : await membersAfter(ctx.db, this.applicationId, after && 't' in after ? after : undefined, SLICE);
      const keyOf = (row: MemberRow): Cursor => (plan.kind === 'inGroup' ? { id: row.person.id } : { t: row.joinedAt.getTime(), id: row.membershipId });
      const start = after;
      yield* this.emitPeople(rows, (i) => (i === 0 ? start : keyOf(rows[i - 1]!)) as Cursor, 0, keyOf);
      if (rows.length < SLICE) return;
      after = keyOf(rows[rows.length - 1]!);
      yield { entry: undefined, before: after, cursor: after };
      await yieldLoop();
    }
  }

  /** Builds the entries of `rows` (from `from` on) and yields those that match. */
  private async *emitPeople(rows: MemberRow[], cursorBefore: (i: number) => Cursor | undefined, from: number, keyOf?: (row: MemberRow) => Cursor): AsyncGenerator<Item> {
    const slice = rows.slice(from);
    if (slice.length === 0) return;
    const db = this.host.ctx.db;
    // One person (a look-up by uid, the common case): the prepared single-person read.
    const groups = slice.length === 1
      ? new Map([[slice[0]!.person.id, await groupIdsOfPerson(db, slice[0]!.person.id)]])
      : await groupIdsOfPeople(db, slice.map((r) => r.person.id));
    for (let k = 0; k < slice.length; k++) {
      const i = from + k;
      const row = slice[k]!;
      const entry = personEntry(this.host.tree, row, this.visible.keep(groups.get(row.person.id) ?? []));
      const after = keyOf ? keyOf(row) : ({ i: i + 1 } as Cursor);
      yield { entry: this.matches(entry) ? entry : undefined, before: cursorBefore(i), cursor: after };
    }
  }

  private async *groups(only: string | undefined, cursor: Cursor | undefined): AsyncGenerator<Item> {
    const { ctx } = this.host;
    const plan: GroupPlan = only === undefined ? this.plans.groups : { kind: 'lookup', key: 'id', values: [only] };
    if (plan.kind === 'none') return;
    if (plan.kind === 'lookup' || plan.kind === 'ofMembers') {
      let rows: GroupRow[];
      if (plan.kind === 'lookup') rows = await groupsBy(ctx.db, plan.key, plan.values);
      else {
        const people = await membersBy(ctx.db, this.applicationId, 'username', plan.usernames);
        const ids = [...new Set([...(await groupIdsOfPeople(ctx.db, people.map((p) => p.person.id))).values()].flat())].sort();
        rows = await groupsBy(ctx.db, 'id', this.visible.keep(ids));
      }
      rows = this.visible.keep(rows);
      const from = cursor && 'i' in cursor ? cursor.i : 0;
      yield* this.emitGroups(rows.slice(from), (k) => ({ i: from + k }), (k) => ({ i: from + k + 1 }));
      return;
    }
    let after = cursor && 'id' in cursor ? cursor.id : undefined;
    for (;;) {
      const slice = await groupsAfter(ctx.db, after, GROUP_SLICE);
      // Those the reader sees; the slice's own length says whether more groups follow.
      const rows = this.visible.keep(slice);
      const start = after;
      yield* this.emitGroups(rows, (k) => (k === 0 ? (start === undefined ? undefined : { id: start }) : { id: rows[k - 1]!.id }), (k) => ({ id: rows[k]!.id }));
      if (slice.length < GROUP_SLICE) return;
      after = slice[slice.length - 1]!.id;
      yield { entry: undefined, before: { id: after }, cursor: { id: after } };
      await yieldLoop();
    }
  }

  private async *emitGroups(rows: GroupRow[], before: (k: number) => Cursor | undefined, after: (k: number) => Cursor): AsyncGenerator<Item> {
    if (rows.length === 0) return;
    const members = await viewMembersOfGroups(this.host.ctx.db, this.applicationId, rows.map((g) => g.id));
    for (let k = 0; k < rows.length; k++) {
      const entry = groupEntry(this.host.tree, rows[k]!, members.get(rows[k]!.id) ?? []);
      yield { entry: this.matches(entry) ? entry : undefined, before: before(k), cursor: after(k) };
    }
  }
}

/** Groups read per query: their members come along, so fewer at a time than people. */
const GROUP_SLICE = 20;

// --- Paged-results cookies -------------------------------------------------------------------

/** What makes two requests "the same search" for a cookie (RFC 2696 §3). */
function fingerprintOf(identity: Exclude<Identity, { kind: 'anonymous' }>, base: Dn, request: SearchRequest): string {
  return createHash('sha256')
    .update(JSON.stringify([identity.dn, dnKey(base), request.scope, request.filter satisfies Filter]))
    .digest('base64url')
    .slice(0, 16);
}

function writeCookie(position: Position, fingerprint: string): Buffer {
  return Buffer.from(JSON.stringify({ f: fingerprint, p: position.phase, c: position.cursor ?? null, n: position.sent }), 'utf8');
}

function readCookie(cookie: Buffer, fingerprint: string): Position | undefined {
  if (cookie.length > 1024) return undefined;
  try {
    const value = JSON.parse(cookie.toString('utf8')) as { f?: unknown; p?: unknown; c?: unknown; n?: unknown };
    if (value.f !== fingerprint || !Number.isInteger(value.p) || !Number.isInteger(value.n)) return undefined;
    const c = value.c as Record<string, unknown> | null;
    const cursor = c === null ? undefined : validCursor(c);
    if (c !== null && !cursor) return undefined;
    return { phase: value.p as number, cursor, sent: value.n as number };
  } catch {
    return undefined;
  }
}

function validCursor(c: Record<string, unknown>): Cursor | undefined {
  if (typeof c !== 'object' || c === null) return undefined;
  if (typeof c.i === 'number' && Number.isInteger(c.i) && c.i >= 0) return { i: c.i };
  if (typeof c.t === 'number' && typeof c.id === 'string') return { t: c.t, id: c.id };
  if (typeof c.id === 'string' && c.t === undefined) return { id: c.id };
  return undefined;
}
