/**
 * Settling a person's membership when they come to an application (DESIGN §4.4–4.6), in one
 * transaction: an active member passes; a suspended one is refused; a newcomer joins under an
 * `open` policy, or under `invite_only` when a pending invitation matches their *verified*
 * e-mail; `closed` admits members only.
 */
import type { AppContext } from '../context.js';
import type { Tx } from '../db/client.js';
import type { Application, Membership, Person } from '../db/schema.js';
import { createMembership, findMembership } from '../members/create.js';
import { acceptInvitation, pendingInvitationFor } from '../invitations/accept.js';
import { transaction } from '../db/store.js';

/** Why a person cannot use an application: their membership is suspended, or its sign-up policy does not admit them. */
export type RefusalReason = 'suspended' | 'invite_only' | 'closed';
export type SettleResult = { membership: Membership } | { error: 'access_denied'; reason: RefusalReason; description: string };

export async function settleMembership(ctx: AppContext, app: Application, person: Person): Promise<SettleResult> {
  // The usual visit, an active member's: one prepared read, no transaction.
  const current = await findMembership(ctx.db, app.id, person.id);
  if (current?.status === 'active') return { membership: current };
  const now = ctx.clock.now();
  return await transaction(ctx.db, async (tx): Promise<SettleResult> => {
    const existing = await findMembership(tx, app.id, person.id);
    if (existing) {
      if (existing.status === 'active') return { membership: existing };
      return { error: 'access_denied', reason: 'suspended', description: `Your access to ${app.name} is suspended.` };
    }
    return admitNewcomer(tx, now, app, person);
  });
}

/**
 * The sign-up policy for a person who is not a member yet, inside the caller's transaction:
 * `open` joins them, `invite_only` accepts a pending invitation of their verified e-mail,
 * `closed` refuses. External-provider sign-up uses it too, so both paths admit alike.
 */
export async function admitNewcomer(tx: Tx, now: Date, app: Application, person: Person): Promise<SettleResult> {
  switch (app.authPolicy.signup_policy) {
    case 'open':
      return { membership: await createMembership(tx, now, app.id, person) };
    case 'invite_only': {
      const invitation = person.emailVerified ? await pendingInvitationFor(tx, now, app.id, person.email) : undefined;
      if (invitation) return { membership: await acceptInvitation(tx, now, invitation, person) };
      return { error: 'access_denied', reason: 'invite_only', description: `${app.name} is open to invited people only.` };
    }
    case 'closed':
      return { error: 'access_denied', reason: 'closed', description: `${app.name} does not accept new members.` };
  }
}
