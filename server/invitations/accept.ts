/**
 * Invitation look-ups and acceptance (DESIGN §4.6), shared by the invite page, sign-up with an
 * `invitationToken`, and authorize's automatic acceptance for a verified e-mail.
 * Accepting an invitation that was e-mailed proves the address, so the person's e-mail is marked
 * verified; one whose link was only shown to the administrator proves nothing about the mailbox
 * (decision 0102). Accepting also puts the person in the invitation's directory groups.
 */
import { and, asc, eq, gt } from 'drizzle-orm';
import { invitations, people, type Invitation, type Membership } from '../db/schema.js';
import type { Tx } from '../db/client.js';
import { recordAudit } from '../audit/record.js';
import { sha256 } from '../util/crypto.js';
import { recordEvent } from '../webhooks/outbox.js';
import { createMembership } from '../members/create.js';
import { existingGroupIds, findPersonRef } from '../groups/queries.js';
import { addToGroup } from '../groups/service.js';
import { exec, one } from '../db/store.js';

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

/** `expired` is derived: a pending invitation past its `expiresAt`. */
export function invitationStatus(inv: Invitation, now: Date): InvitationStatus {
  if (inv.state === 'pending' && inv.expiresAt.getTime() <= now.getTime()) return 'expired';
  return inv.state;
}

/** The invitation a link token points at (any status), or undefined. */
export async function invitationByToken(tx: Tx, token: string): Promise<Invitation | undefined> {
  return await one(tx.select().from(invitations).where(eq(invitations.tokenHash, sha256(token))));
}

/** The oldest pending, unexpired invitation of `email` to the application. */
export async function pendingInvitationFor(tx: Tx, now: Date, applicationId: string, email: string): Promise<Invitation | undefined> {
  return await one(tx
    .select()
    .from(invitations)
    .where(
      and(
        eq(invitations.applicationId, applicationId),
        eq(invitations.email, email.toLowerCase()),
        eq(invitations.state, 'pending'),
        gt(invitations.expiresAt, now),
      ),
    )
    .orderBy(asc(invitations.createdAt)));
}

/**
 * Accepts a pending invitation for `person` inside the caller's transaction: marks it accepted,
 * marks the e-mail verified when the invitation was e-mailed, creates the membership with the
 * invitation's role, adds the person to the invitation's groups (those still there, within the
 * 200-per-person limit), and records the audit entry and `invitation.accepted` event. The caller
 * checks status and e-mail match first.
 */
export async function acceptInvitation(
  tx: Tx,
  now: Date,
  invitation: Invitation,
  person: { id: string; email: string; name: string | null },
): Promise<Membership> {
  await exec(tx.update(invitations)
    .set({ state: 'accepted', acceptedAt: now, acceptedBy: person.id })
    .where(eq(invitations.id, invitation.id)));
  if (invitation.emailSent) await exec(tx.update(people).set({ emailVerified: true, updatedAt: now }).where(eq(people.id, person.id)));
  const membership = await createMembership(tx, now, invitation.applicationId, person, invitation.role);
  const joined = await joinInvitedGroups(tx, now, invitation, person.id);
  await recordAudit(tx, now, {
    actor: `person:${person.id}`,
    action: 'invitation.accepted',
    applicationId: invitation.applicationId,
    target: invitation.id,
    details: { email: invitation.email, role: invitation.role, membershipId: membership.id, ...(joined.length ? { groups: joined } : {}) },
  });
  await recordEvent(tx, now, invitation.applicationId, 'invitation.accepted', {
    id: invitation.id,
    email: invitation.email,
    role: invitation.role,
    userId: person.id,
    membershipId: membership.id,
  });
  return membership;
}

/** Puts the person in the invitation's groups that still exist; returns the ids they joined. */
async function joinInvitedGroups(tx: Tx, now: Date, invitation: Invitation, personId: string): Promise<string[]> {
  if (invitation.groups.length === 0) return [];
  const person = (await findPersonRef(tx, personId))!;
  const existing = await existingGroupIds(tx, invitation.groups);
  const joined: string[] = [];
  for (const groupId of invitation.groups) {
    if (existing.has(groupId) && (await addToGroup(tx, now, groupId, person, `person:${personId}`, 'skip'))) joined.push(groupId);
  }
  return joined;
}
