/**
 * Application users (DESIGN §4.5): listing with keyset pagination, reading, changing status,
 * role and profile, and removing. Suspending or deleting revokes the person's refresh tokens for
 * the application in the same transaction, so the next refresh fails at once. Every write is
 * audited and emits its webhook event in the same transaction.
 */
import { and, asc, eq, or, sql, type SQL } from 'drizzle-orm';
import { memberships, people, type Membership, type Person } from '../db/schema.js';
import type { AppContext } from '../context.js';
import { recordAudit } from '../audit/record.js';
import { getApplication } from '../applications/service.js';
import { mergeProfile } from '../applications/profile-fields.js';
import { afterCursor, toPage } from '../http/pagination.js';
import { notFound, validationFailed } from '../http/problem.js';
import { iso } from '../http/schemas.js';
import { revokeFamilies } from '../oauth/revoke-families.js';
import { recordEvent } from '../webhooks/outbox.js';
import { membershipEventData } from './create.js';
import type { MemberListQuery, MemberPatch } from './schemas.js';

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

/** `%`, `_` and `\` are literal in a `q` search, not LIKE wildcards. */
function likePattern(q: string): string {
  return `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export function listMembers(ctx: AppContext, applicationId: string, query: MemberListQuery, limit: number) {
  getApplication(ctx, applicationId);
  const conditions: (SQL | undefined)[] = [
    eq(memberships.applicationId, applicationId),
    query.status ? eq(memberships.status, query.status) : undefined,
    query.role ? eq(memberships.role, query.role) : undefined,
    afterCursor(memberships.joinedAt, memberships.id, query.cursor),
  ];
  if (query.q) {
    const pattern = likePattern(query.q);
    // E-mails are stored lower-cased; names are matched case-insensitively (SQLite LIKE is ASCII case-insensitive).
    conditions.push(
      or(sql`${people.email} LIKE ${pattern} ESCAPE '\\'`, sql`${people.name} LIKE ${pattern} ESCAPE '\\'`),
    );
  }
  const rows = ctx.db
    .select({ m: memberships, p: personColumns })
    .from(memberships)
    .innerJoin(people, eq(people.id, memberships.personId))
    .where(and(...conditions))
    .orderBy(asc(memberships.joinedAt), asc(memberships.id))
    .limit(limit + 1)
    .all();
  const page = toPage(rows, limit, (r) => ({ t: r.m.joinedAt.getTime(), id: r.m.id }));
  return { users: page.items.map(memberRecord), nextCursor: page.nextCursor };
}

function findMember(ctx: AppContext, applicationId: string, memberId: string): MemberRow {
  getApplication(ctx, applicationId);
  const row = ctx.db
    .select({ m: memberships, p: personColumns })
    .from(memberships)
    .innerJoin(people, eq(people.id, memberships.personId))
    .where(and(eq(memberships.applicationId, applicationId), eq(memberships.id, memberId)))
    .get();
  if (!row) throw notFound('user_not_found', `Application "${applicationId}" has no user "${memberId}".`);
  return row;
}

export function getMember(ctx: AppContext, applicationId: string, memberId: string) {
  return memberRecord(findMember(ctx, applicationId, memberId));
}

export function updateMember(ctx: AppContext, applicationId: string, memberId: string, patch: MemberPatch, actor: string) {
  const app = getApplication(ctx, applicationId);
  const current = findMember(ctx, applicationId, memberId);
  let profile = current.m.profile;
  if (patch.profile) {
    const merged = mergeProfile(app.authPolicy.profile_fields, current.m.profile, patch.profile, 'admin');
    if (merged.errors.length) throw validationFailed(merged.errors);
    profile = merged.profile!;
  }
  const now = ctx.clock.now();
  const status = patch.status ?? current.m.status;
  const role = patch.role ?? current.m.role;
  const changed = Object.keys(patch).filter((k) => k !== 'profile' || JSON.stringify(profile) !== JSON.stringify(current.m.profile));

  const updated = ctx.db.transaction((tx) => {
    const m = tx
      .update(memberships)
      .set({ status, role, profile, updatedAt: now })
      .where(eq(memberships.id, memberId))
      .returning()
      .get();
    // Suspension takes effect on the next refresh: every live family for this person and app dies now.
    const revoked =
      status === 'suspended'
        ? revokeFamilies(tx, now, { applicationId, personId: current.p.id }, 'membership_suspended')
        : 0;
    recordAudit(tx, now, {
      actor,
      action: 'membership.updated',
      applicationId,
      target: memberId,
      details: {
        userId: current.p.id,
        changed,
        ...(patch.status ? { status: { from: current.m.status, to: status } } : {}),
        ...(patch.role ? { role: { from: current.m.role, to: role } } : {}),
        ...(revoked ? { refreshFamiliesRevoked: revoked } : {}),
      },
    });
    recordEvent(tx, now, applicationId, 'membership.updated', {
      ...membershipEventData(m, current.p),
      changed,
    });
    return m;
  });
  ctx.wakeWebhooks();
  return memberRecord({ m: updated, p: current.p });
}

export function deleteMember(ctx: AppContext, applicationId: string, memberId: string, actor: string) {
  const current = findMember(ctx, applicationId, memberId);
  const now = ctx.clock.now();
  ctx.db.transaction((tx) => {
    const revoked = revokeFamilies(tx, now, { applicationId, personId: current.p.id }, 'membership_deleted');
    tx.delete(memberships).where(eq(memberships.id, memberId)).run();
    recordAudit(tx, now, {
      actor,
      action: 'membership.deleted',
      applicationId,
      target: memberId,
      details: { userId: current.p.id, email: current.p.email, refreshFamiliesRevoked: revoked },
    });
    recordEvent(tx, now, applicationId, 'membership.deleted', membershipEventData(current.m, current.p));
  });
  ctx.wakeWebhooks();
}
