/**
 * Creating a membership: the one place a person joins an application, whatever the path (open
 * sign-up, invitation, authorize under an open policy, provider sign-in). Emits
 * `membership.created` into the webhook outbox in the caller's transaction, and spends the
 * address's pending invitations to the application.
 */
import { and, eq, gt, sql } from 'drizzle-orm';
import { invitations, memberships, type MemberRole, type Membership } from '../db/schema.js';
import { recordAudit } from '../audit/record.js';
import type { Db, Tx } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { newId } from '../util/ids.js';
import { recordEvent } from '../webhooks/outbox.js';
import { countActive, dayOf } from '../activity/record.js';
import { exec, one, many } from '../db/store.js';

/** The webhook/event view of a membership. */
export function membershipEventData(m: Membership, person: { id: string; email: string; name: string | null }) {
  return {
    id: m.id,
    userId: person.id,
    email: person.email,
    name: person.name,
    status: m.status,
    role: m.role,
    profile: m.profile,
  };
}

/** Prepared once (db/prepared.ts): authorize looks the membership up on every visit. */
const membershipOf = preparedPerDb((db) =>
  db
    .select()
    .from(memberships)
    .where(and(eq(memberships.applicationId, sql.placeholder('applicationId')), eq(memberships.personId, sql.placeholder('personId'))))
    .prepare(),
);

const touch = preparedPerDb((db) =>
  db
    .update(memberships)
    .set({ lastActiveAt: sql`${sql.placeholder('nowMs')}` }) // raw SQL: bound as given, milliseconds
    .where(eq(memberships.id, sql.placeholder('id')))
    .prepare(),
);

/** `lastActiveAt` is written at most this often by token grants, so most refreshes stay 3 statements. */
export const LAST_ACTIVE_RESOLUTION_MS = 3600_000;

/**
 * Whether a token grant marks the membership active: at most hourly, and at the first grant of a
 * UTC day, so the day's active people (activity/record.ts) count everyone who got a token.
 */
export function activeMarkDue(lastActiveAt: Date, now: Date): boolean {
  return now.getTime() - lastActiveAt.getTime() >= LAST_ACTIVE_RESOLUTION_MS || dayOf(lastActiveAt) !== dayOf(now);
}

/**
 * Marks the membership active at `now` (sign-ins, token grants) and counts its person in the day's
 * active people (activity/record.ts); also inside a transaction on `db`.
 */
export async function touchMembership(db: Db, membershipId: string, now: Date): Promise<void> {
  await exec(touch(db), { id: membershipId, nowMs: now.getTime() });
  await countActive(db, now, membershipId);
}

export async function findMembership(tx: Tx, applicationId: string, personId: string): Promise<Membership | undefined> {
  return await one(membershipOf(tx), { applicationId, personId });
}

/** Joins `person` to the application with `role` (active); returns the existing one if already a member. */
export async function createMembership(
  tx: Tx,
  now: Date,
  applicationId: string,
  person: { id: string; email: string; name: string | null },
  role: MemberRole = 'member',
): Promise<Membership> {
  const existing = await findMembership(tx, applicationId, person.id);
  if (existing) return existing;
  const row = await one(tx
    .insert(memberships)
    .values({
      id: newId('mem'),
      applicationId,
      personId: person.id,
      status: 'active',
      role,
      profile: {},
      joinedAt: now,
      lastActiveAt: now,
      updatedAt: now,
    })
    .returning());
  await recordEvent(tx, now, applicationId, 'membership.created', membershipEventData(row, person));
  await countActive(tx, now, row.id);
  await spendPendingInvitations(tx, now, row, person);
  return row;
}

/**
 * Joining by any path spends the address's live pending invitations to the application (accepted,
 * with the membership in the audit entry). Left pending, one would still work after an
 * administrator removed the member, bringing them back with the invitation's role, even into
 * an application that has since become invitation-only.
 */
async function spendPendingInvitations(tx: Tx, now: Date, membership: Membership, person: { id: string; email: string }): Promise<void> {
  const spent = await many(tx
    .update(invitations)
    .set({ state: 'accepted', acceptedAt: now, acceptedBy: person.id })
    .where(and(eq(invitations.applicationId, membership.applicationId), eq(invitations.email, person.email.toLowerCase()), eq(invitations.state, 'pending'), gt(invitations.expiresAt, now)))
    .returning({ id: invitations.id, email: invitations.email, role: invitations.role }));
  for (const invitation of spent) {
    await recordAudit(tx, now, {
      actor: `person:${person.id}`,
      action: 'invitation.accepted',
      applicationId: membership.applicationId,
      target: invitation.id,
      details: { email: invitation.email, role: invitation.role, membershipId: membership.id, joinedWithout: 'the invitation link', membershipRole: membership.role },
    });
  }
}
