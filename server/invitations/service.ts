/**
 * Invitation rules (DESIGN §4.6): inviting up to 100 addresses at once (skipping members and
 * people already invited), listing by derived status, revoking, and resending with a new link.
 * Link tokens are random and stored as SHA-256; the link appears only in create/resend answers.
 * E-mails go out after the transaction commits (see `email.ts`).
 */
import { and, asc, eq, gt, inArray, lte, ne, type SQL } from 'drizzle-orm';
import { invitations, memberships, people, type Invitation } from '../db/schema.js';
import type { AppContext } from '../context.js';
import type { Tx } from '../db/client.js';
import { recordAudit } from '../audit/record.js';
import { getApplication } from '../applications/lookup.js';
import { afterCursor, toPage } from '../http/pagination.js';
import { conflict, notFound, validationFailed, type FieldError } from '../http/problem.js';
import { iso } from '../http/schemas.js';
import { randomToken, sha256 } from '../util/crypto.js';
import { newId } from '../util/ids.js';
import { recordEvent } from '../webhooks/outbox.js';
import { invitationStatus } from './accept.js';
import { sendInvitationEmails } from './email.js';
import type { InvitationCreate, InvitationListQuery } from './schemas.js';
import { isEmailAddress } from '../util/email.js';
import { existingGroupIds } from '../groups/queries.js';
import { one, many, transaction } from '../db/store.js';

export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;
const TOKEN_PREFIX = 'ghi_';
// Deliberately simple (one @, a dot in the domain, no spaces): the e-mail itself is the proof.

export function invitationRecord(inv: Invitation, now: Date) {
  return {
    id: inv.id,
    email: inv.email,
    role: inv.role,
    message: inv.message,
    status: invitationStatus(inv, now),
    createdAt: iso(inv.createdAt)!,
    expiresAt: iso(inv.expiresAt)!,
    acceptedAt: iso(inv.acceptedAt),
    revokedAt: iso(inv.revokedAt),
    emailSent: inv.emailSent,
    emailError: inv.emailError,
    groups: inv.groups,
  };
}

export function acceptUrl(ctx: AppContext, token: string): string {
  return `${ctx.config.issuer}/invite/${token}`;
}

function eventData(inv: Invitation) {
  return { id: inv.id, email: inv.email, role: inv.role, expiresAt: iso(inv.expiresAt) };
}

export async function createInvitations(ctx: AppContext, applicationId: string, input: InvitationCreate, actor: string) {
  const app = await getApplication(ctx, applicationId);
  const errors: FieldError[] = [];
  input.emails.forEach((raw, i) => {
    if (!isEmailAddress(raw.trim())) {
      errors.push({ path: `body.emails.${i}`, message: `"${raw}" is not a valid e-mail address` });
    }
  });
  if (errors.length) throw validationFailed(errors, 'Some e-mail addresses are not valid.');
  const groupIds = input.groups ?? [];
  // Case and surrounding spaces do not make a different address; repeats in one request collapse.
  const emails = [...new Set(input.emails.map((e) => e.trim().toLowerCase()))];
  const role = input.role ?? 'member';
  const message = input.message?.trim() ? input.message : null;
  const now = ctx.clock.now();

  const { created, skipped } = await transaction(ctx.db, async (tx) => {
    const known = await existingGroupIds(tx, groupIds);
    const unknown = groupIds.flatMap((id, i) => (known.has(id) ? [] : [{ path: `body.groups.${i}`, message: `there is no group "${id}"` }]));
    if (unknown.length) throw validationFailed(unknown, 'Some groups do not exist.');
    const members = await memberEmails(tx, applicationId, emails);
    const invited = await invitedEmails(tx, applicationId, emails, now);
    const skipped: { email: string; reason: 'already_member' | 'already_invited' }[] = [];
    const created: { invitation: Invitation; acceptUrl: string }[] = [];
    for (const email of emails) {
      if (members.has(email)) {
        skipped.push({ email, reason: 'already_member' });
        continue;
      }
      if (invited.has(email)) {
        skipped.push({ email, reason: 'already_invited' });
        continue;
      }
      const token = randomToken(TOKEN_PREFIX);
      const invitation = await one(tx
        .insert(invitations)
        .values({
          id: newId('inv'),
          applicationId,
          email,
          role,
          message,
          tokenHash: sha256(token),
          state: 'pending',
          invitedBy: actor,
          groups: groupIds,
          createdAt: now,
          expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
        })
        .returning());
      await recordAudit(tx, now, { actor, action: 'invitation.created', applicationId, target: invitation.id, details: { email, role, ...(groupIds.length ? { groups: groupIds } : {}) } });
      await recordEvent(tx, now, applicationId, 'invitation.created', eventData(invitation));
      created.push({ invitation, acceptUrl: acceptUrl(ctx, token) });
    }
    return { created, skipped };
  });
  ctx.wakeWebhooks();

  const outcomes = await sendInvitationEmails(ctx, app.name, created);
  return {
    invitations: created.map(({ invitation, acceptUrl }) => ({
      ...invitationRecord({ ...invitation, ...outcomes.get(invitation.id) }, now),
      acceptUrl,
    })),
    skipped,
  };
}

/** Which of `emails` already belong to members of the application. */
async function memberEmails(tx: Tx, applicationId: string, emails: string[]): Promise<Set<string>> {
  const rows = await many(tx
    .select({ email: people.email })
    .from(memberships)
    .innerJoin(people, eq(people.id, memberships.personId))
    .where(and(eq(memberships.applicationId, applicationId), inArray(people.email, emails))));
  return new Set(rows.map((r) => r.email));
}

/** Which of `emails` have a live pending invitation to the application (other than `exceptId`). */
async function invitedEmails(tx: Tx, applicationId: string, emails: string[], now: Date, exceptId?: string): Promise<Set<string>> {
  const rows = await many(tx
    .select({ email: invitations.email })
    .from(invitations)
    .where(
      and(
        eq(invitations.applicationId, applicationId),
        inArray(invitations.email, emails),
        eq(invitations.state, 'pending'),
        gt(invitations.expiresAt, now),
        exceptId === undefined ? undefined : ne(invitations.id, exceptId),
      ),
    ));
  return new Set(rows.map((r) => r.email));
}

function statusCondition(status: InvitationListQuery['status'], now: Date): SQL | undefined {
  switch (status) {
    case undefined:
      return undefined;
    case 'pending':
      return and(eq(invitations.state, 'pending'), gt(invitations.expiresAt, now));
    case 'expired':
      return and(eq(invitations.state, 'pending'), lte(invitations.expiresAt, now));
    default:
      return eq(invitations.state, status);
  }
}

export async function listInvitations(ctx: AppContext, applicationId: string, query: InvitationListQuery, limit: number) {
  await getApplication(ctx, applicationId);
  const now = ctx.clock.now();
  const rows = await many(ctx.db
    .select()
    .from(invitations)
    .where(
      and(
        eq(invitations.applicationId, applicationId),
        statusCondition(query.status, now),
        afterCursor(invitations.createdAt, invitations.id, query.cursor),
      ),
    )
    .orderBy(asc(invitations.createdAt), asc(invitations.id))
    .limit(limit + 1));
  const page = toPage(rows, limit, (r) => ({ t: r.createdAt.getTime(), id: r.id }));
  return { invitations: page.items.map((r) => invitationRecord(r, now)), nextCursor: page.nextCursor };
}

async function findInvitation(ctx: AppContext, applicationId: string, invitationId: string): Promise<Invitation> {
  await getApplication(ctx, applicationId);
  const row = await one(ctx.db
    .select()
    .from(invitations)
    .where(and(eq(invitations.applicationId, applicationId), eq(invitations.id, invitationId))));
  if (!row) throw notFound('invitation_not_found', `Application "${applicationId}" has no invitation "${invitationId}".`);
  return row;
}

/** Revokes a pending invitation; anything else (accepted, revoked, expired) is 409. */
export async function revokeInvitation(ctx: AppContext, applicationId: string, invitationId: string, actor: string) {
  const inv = await findInvitation(ctx, applicationId, invitationId);
  const now = ctx.clock.now();
  const status = invitationStatus(inv, now);
  if (status !== 'pending') throw conflict('invitation_not_pending', `The invitation is ${status}, not pending.`);
  await transaction(ctx.db, async (tx) => {
    const row = await one(tx
      .update(invitations)
      .set({ state: 'revoked', revokedAt: now })
      .where(and(eq(invitations.id, inv.id), eq(invitations.state, 'pending')))
      .returning());
    if (!row) throw conflict('invitation_not_pending', 'The invitation is no longer pending.');
    await recordAudit(tx, now, { actor, action: 'invitation.revoked', applicationId, target: inv.id, details: { email: inv.email } });
    await recordEvent(tx, now, applicationId, 'invitation.revoked', eventData(row));
  });
  ctx.wakeWebhooks();
}

/**
 * Issues a new link with a fresh 7-day expiry for a pending or expired invitation (the old link
 * stops working) and e-mails it again. Accepted or revoked invitations are 409, and so is one
 * whose address has become a member or holds another live invitation since.
 */
export async function resendInvitation(ctx: AppContext, applicationId: string, invitationId: string, actor: string) {
  const app = await getApplication(ctx, applicationId);
  const inv = await findInvitation(ctx, applicationId, invitationId);
  const now = ctx.clock.now();
  const status = invitationStatus(inv, now);
  if (status !== 'pending' && status !== 'expired') {
    throw conflict('invitation_not_pending', `The invitation is ${status}; only pending or expired invitations can be resent.`);
  }
  const token = randomToken(TOKEN_PREFIX);
  const updated = await transaction(ctx.db, async (tx) => {
    // What create refuses, resend refuses too: the person joined since, or was invited again.
    if ((await memberEmails(tx, applicationId, [inv.email])).size) {
      throw conflict('already_member', `${inv.email} is already a member of this application.`);
    }
    if ((await invitedEmails(tx, applicationId, [inv.email], now, inv.id)).size) {
      throw conflict('already_invited', `${inv.email} has a newer pending invitation to this application.`);
    }
    const row = await one(tx
      .update(invitations)
      .set({ tokenHash: sha256(token), expiresAt: new Date(now.getTime() + INVITATION_TTL_MS), emailSent: false, emailError: null })
      .where(and(eq(invitations.id, inv.id), eq(invitations.state, 'pending')))
      .returning());
    if (!row) throw conflict('invitation_not_pending', 'The invitation is no longer pending.');
    await recordAudit(tx, now, { actor, action: 'invitation.resent', applicationId, target: inv.id, details: { email: inv.email } });
    return row;
  });
  const link = acceptUrl(ctx, token);
  const outcomes = await sendInvitationEmails(ctx, app.name, [{ invitation: updated, acceptUrl: link }]);
  return { ...invitationRecord({ ...updated, ...outcomes.get(updated.id) }, now), acceptUrl: link };
}
