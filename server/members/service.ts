/**
 * Application users (DESIGN §4.5): listing with keyset pagination, reading, changing status,
 * role and profile, and removing. Suspending or deleting revokes the person's refresh tokens for
 * the application in the same transaction, so the next refresh fails at once. Every write is
 * audited and emits its webhook event in the same transaction.
 */
import { and, asc, eq, gt, inArray, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { memberships, people, type Application, type Membership, type Person } from '../db/schema.js';
import type { AppContext } from '../context.js';
import { recordAudit } from '../audit/record.js';
import { getApplication } from '../applications/lookup.js';
import { mergeProfile } from '../applications/profile-fields.js';
import { decodeCursor, encodeCursor, toPage, type CursorKey } from '../http/pagination.js';
import { notFound, validationFailed } from '../http/problem.js';
import { iso } from '../http/schemas.js';
import { endSessions } from '../accounts/session.js';
import type { Tx } from '../db/client.js';
import { beginPurge } from '../data-lifecycle/purge.js';
import { recordEvent } from '../webhooks/outbox.js';
import { membershipEventData } from './create.js';
import { resetSecondFactor, secondFactorSummary } from '../accounts/second-factor/service.js';
import { peopleWithSecondFactor } from '../accounts/second-factor/factors.js';
import { containsText, likePattern, searchCandidates } from './search.js';
import type { MemberListQuery, MemberPatch } from './schemas.js';
import { exec, one, many, transaction } from '../db/store.js';

type MemberRow = { m: Membership; p: Pick<Person, 'id' | 'email' | 'name'> };

export function memberRecord({ m, p }: MemberRow) {
  return {
    id: m.id,
    userId: p.id,
    email: p.email,
    name: p.name,
    status: m.status,
    role: m.role,
    profile: m.profile,
    joinedAt: iso(m.joinedAt)!,
    lastActiveAt: iso(m.lastActiveAt)!,
    updatedAt: iso(m.updatedAt)!,
  };
}

const personColumns = { id: people.id, email: people.email, name: people.name };

const placeholder = sql.placeholder;

/**
 * How a `q` search narrows the list: to the people the search index found, or by LIKE over each
 * member up to `end`, the last member of this request's window (WALK_WINDOW, below).
 */
type Search = { personIds: string[] } | { pattern: string; end: CursorKey | undefined };

/**
 * A `q` the index cannot answer (shorter than three characters, or matching more than
 * MAX_CANDIDATES people) is answered by walking the application's members in order, at most
 * this many per request: the page then holds the matches among them, possibly fewer than
 * `limit` (none, even), with `nextCursor` after the last member read. Every request stays
 * bounded whatever the application's size; following `nextCursor` finds every match.
 */
export const WALK_WINDOW = 2_000;

/**
 * The list query for one combination of filters, prepared once per database: the listing is the
 * hot admin read (100,000-member applications), and building the SQL each time costs more than
 * running it. `q` searches are rarer and are built per call (members/search.ts).
 */
function buildListQuery(db: Db, filters: { status: boolean; role: boolean; cursor: boolean }, search?: Search) {
  const conditions: (SQL | undefined)[] = [
    eq(memberships.applicationId, placeholder('app')),
    filters.status ? eq(memberships.status, placeholder('status')) : undefined,
    filters.role ? eq(memberships.role, placeholder('role')) : undefined,
    filters.cursor
      ? or(gt(memberships.joinedAt, placeholder('t')), and(eq(memberships.joinedAt, placeholder('t')), gt(memberships.id, placeholder('id'))))
      : undefined,
    // Found by the index: looked up through (application_id, person_id), sorted after.
    search && 'personIds' in search ? inArray(memberships.personId, search.personIds) : undefined,
    // E-mails are stored lower-cased; names match case-insensitively (members/search.ts).
    search && 'pattern' in search ? containsText(db, search.pattern) : undefined,
    search && 'pattern' in search && search.end ? atOrBefore(search.end) : undefined,
  ];
  return db
    .select({ m: memberships, p: personColumns })
    .from(memberships)
    .innerJoin(people, eq(people.id, memberships.personId))
    .where(and(...conditions))
    .orderBy(asc(memberships.joinedAt), asc(memberships.id))
    .limit(placeholder('limit'))
    .prepare();
}

/** `(joined_at, id) <= key`: the upper end of a walk window. */
function atOrBefore(key: CursorKey): SQL {
  const at = new Date(key.t);
  return or(lt(memberships.joinedAt, at), and(eq(memberships.joinedAt, at), lte(memberships.id, key.id)))!;
}

/**
 * The key of the WALK_WINDOW-th member from the cursor on (same filters), or undefined when fewer
 * are left: the window of a walking search. Read from the index alone.
 */
async function windowEnd(db: Db, applicationId: string, query: MemberListQuery, cursor: CursorKey | undefined): Promise<CursorKey | undefined> {
  const row = await one(db
    .select({ t: memberships.joinedAt, id: memberships.id })
    .from(memberships)
    .where(
      and(
        eq(memberships.applicationId, applicationId),
        query.status ? eq(memberships.status, query.status) : undefined,
        query.role ? eq(memberships.role, query.role) : undefined,
        cursor ? or(gt(memberships.joinedAt, new Date(cursor.t)), and(eq(memberships.joinedAt, new Date(cursor.t)), gt(memberships.id, cursor.id))) : undefined,
      ),
    )
    .orderBy(asc(memberships.joinedAt), asc(memberships.id))
    .limit(1)
    .offset(WALK_WINDOW - 1));
  return row ? { t: row.t.getTime(), id: row.id } : undefined;
}

type ListQuery = ReturnType<typeof buildListQuery>;
const preparedLists = new WeakMap<Db, Map<string, ListQuery>>();

function listQueryFor(db: Db, filters: { status: boolean; role: boolean; cursor: boolean }, search?: Search): ListQuery {
  if (search) return buildListQuery(db, filters, search);
  const key = `${filters.status}:${filters.role}:${filters.cursor}`;
  let cache = preparedLists.get(db);
  if (!cache) preparedLists.set(db, (cache = new Map()));
  let query = cache.get(key);
  if (!query) cache.set(key, (query = buildListQuery(db, filters)));
  return query;
}

export async function listMembers(ctx: AppContext, applicationId: string, query: MemberListQuery, limit: number) {
  await getApplication(ctx, applicationId);
  const cursor = query.cursor ? decodeCursor(query.cursor) : undefined;
  let search: Search | undefined;
  if (query.q !== undefined) {
    const personIds = await searchCandidates(ctx.db, query.q);
    search = personIds ? { personIds } : { pattern: likePattern(query.q), end: await windowEnd(ctx.db, applicationId, query, cursor) };
  }
  const rows = await many(listQueryFor(ctx.db, { status: Boolean(query.status), role: Boolean(query.role), cursor: Boolean(cursor) }, search), {
    app: applicationId,
    status: query.status,
    role: query.role,
    t: cursor?.t,
    id: cursor?.id,
    limit: limit + 1,
  });
  const page = toPage(rows, limit, (r) => ({ t: r.m.joinedAt.getTime(), id: r.m.id }));
  // A walk that read its whole window without filling the page goes on after the window.
  const walked = search && 'pattern' in search ? search.end : undefined;
  const nextCursor = page.nextCursor ?? (walked ? encodeCursor(walked) : null);
  const withFactor = await peopleWithSecondFactor(ctx.db, page.items.map((r) => r.p.id));
  return { users: page.items.map((r) => ({ ...memberRecord(r), hasSecondFactor: withFactor.has(r.p.id) })), nextCursor };
}

async function findMember(ctx: AppContext, applicationId: string, memberId: string): Promise<MemberRow> {
  await getApplication(ctx, applicationId);
  const row = await one(ctx.db
    .select({ m: memberships, p: personColumns })
    .from(memberships)
    .innerJoin(people, eq(people.id, memberships.personId))
    .where(and(eq(memberships.applicationId, applicationId), eq(memberships.id, memberId))));
  if (!row) throw notFound('user_not_found', `Application "${applicationId}" has no user "${memberId}".`);
  return row;
}

export async function getMember(ctx: AppContext, applicationId: string, memberId: string) {
  const row = await findMember(ctx, applicationId, memberId);
  return { ...memberRecord(row), secondFactor: await secondFactorSummary(ctx.db, row.p.id) };
}

/**
 * The administrator's reset for a lost device (spec second-factor.md, "Admin"): the member's
 * TOTP, passkeys and recovery codes go, all their sessions end, audited under this application.
 * `mayReset` may refuse for the person (the caller's role against theirs: http/admin-auth.ts).
 */
export async function resetMemberSecondFactor(
  ctx: AppContext, applicationId: string, memberId: string, actor: string, mayReset: (personId: string) => Promise<void>,
): Promise<void> {
  const row = await findMember(ctx, applicationId, memberId);
  await mayReset(row.p.id);
  const person = (await one(ctx.db.select().from(people).where(eq(people.id, row.p.id))))!;
  await resetSecondFactor(ctx, person, actor, applicationId);
}

export async function updateMember(ctx: AppContext, applicationId: string, memberId: string, patch: MemberPatch, actor: string) {
  const app = await getApplication(ctx, applicationId);
  const current = await findMember(ctx, applicationId, memberId);
  let profile = current.m.profile;
  if (patch.profile) {
    const merged = mergeProfile(app.authPolicy.profile_fields, current.m.profile, patch.profile, 'admin');
    if (merged.errors.length) throw validationFailed(merged.errors);
    profile = merged.profile!;
  }
  const now = ctx.clock.now();
  const status = patch.status ?? current.m.status;
  const role = patch.role ?? current.m.role;
  // Only fields whose value moves: a PATCH that changes nothing writes nothing, like the
  // self-service profile update (no audit entry, no webhook, `updatedAt` kept).
  const changed = [
    ...(status !== current.m.status ? ['status'] : []),
    ...(role !== current.m.role ? ['role'] : []),
    ...(JSON.stringify(profile) !== JSON.stringify(current.m.profile) ? ['profile'] : []),
  ];
  if (changed.length === 0) return memberRecord(current);

  const updated = await transaction(ctx.db, async (tx) => {
    const m = await one(tx
      .update(memberships)
      .set({ status, role, profile, updatedAt: now })
      .where(eq(memberships.id, memberId))
      .returning());
    // Suspension takes effect on the next refresh: every live family for this person and app dies
    // now, and the realm's applications hear a back-channel logout.
    const revoked = status === 'suspended' && current.m.status !== 'suspended' ? await endMemberSignIn(ctx, tx, now, app, current.p.id, 'membership_suspended') : 0;
    await recordAudit(tx, now, {
      actor,
      action: 'membership.updated',
      applicationId,
      target: memberId,
      details: {
        userId: current.p.id,
        changed,
        ...(changed.includes('status') ? { status: { from: current.m.status, to: status } } : {}),
        ...(changed.includes('role') ? { role: { from: current.m.role, to: role } } : {}),
        ...(revoked ? { refreshFamiliesRevoked: revoked } : {}),
      },
    });
    await recordEvent(tx, now, applicationId, 'membership.updated', {
      ...membershipEventData(m, current.p),
      changed,
    });
    if (changed.includes('status') || changed.includes('role')) {
      await ctx.hooks.emit('membershipChanged', { tx, now, applicationId, personId: current.p.id, status, role, actor });
    }
    return m;
  });
  ctx.wakeWebhooks();
  return memberRecord({ m: updated, p: current.p });
}

/**
 * Ends the person's sign-in to the application's realm (accounts/session.ts, `endSessions`);
 * returns how many refresh-token families of this application it revoked, for the audit entry.
 */
async function endMemberSignIn(ctx: AppContext, tx: Tx, now: Date, app: Application, personId: string, reason: 'membership_suspended' | 'membership_deleted'): Promise<number> {
  return (await endSessions(ctx, tx, now, { personId, application: app }, reason)).families;
}

/**
 * Removes the membership at once and ends the person's sign-in to the application (live refresh
 * tokens revoked, back-channel logouts queued). What still names the membership (possibly many,
 * mostly ended refresh-token families; device authorizations) is detached or removed by the
 * background purge, not by a cascade inside this request.
 */
export async function deleteMember(ctx: AppContext, applicationId: string, memberId: string, actor: string) {
  const app = await getApplication(ctx, applicationId);
  const current = await findMember(ctx, applicationId, memberId);
  const now = ctx.clock.now();
  await beginPurge(ctx, { kind: 'membership', target: memberId, actor }, async (tx) => {
    const revoked = await endMemberSignIn(ctx, tx, now, app, current.p.id, 'membership_deleted');
    await exec(tx.delete(memberships).where(eq(memberships.id, memberId)));
    await recordAudit(tx, now, {
      actor,
      action: 'membership.deleted',
      applicationId,
      target: memberId,
      details: { userId: current.p.id, email: current.p.email, refreshFamiliesRevoked: revoked },
    });
    await recordEvent(tx, now, applicationId, 'membership.deleted', membershipEventData(current.m, current.p));
    await ctx.hooks.emit('membershipChanged', { tx, now, applicationId, personId: current.p.id, status: 'deleted', role: undefined, actor });
  }, { cascade: false });
  ctx.wakeWebhooks();
}
