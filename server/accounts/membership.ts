/**
 * Settling a person's membership when they come to an application (DESIGN §4.4–4.6), in one
 * transaction: an active member passes; a suspended one is refused; a newcomer joins under an
 * `open` policy, or under `invite_only` when a pending invitation matches their *verified*
 * e-mail, or when they are in one of its allowed groups; `closed` admits members only. Over all of
 * them, the application's group rule (applications/group-rule.ts, decision 0450): whoever is in none of its
 * `allowedGroups` is refused, members too, and the refusal names the rule (`group_missing`).
 */
import type { AppContext } from '../context.js';
import type { Tx } from '../db/client.js';
import type { Application, Membership, Person } from '../db/schema.js';
import { createMembership, findMembership } from '../members/create.js';
import { acceptInvitation, pendingInvitationFor } from '../invitations/accept.js';
import { transaction } from '../db/store.js';
import { personPassesGroupRule } from '../applications/group-rule.js';

/**
 * Why a person cannot use an application: their membership is suspended, its sign-up policy does
 * not admit them, or they are in none of its allowed groups (the group rule).
 */
export type RefusalReason = 'suspended' | 'invite_only' | 'closed' | 'group_missing';
export type SettleResult = { membership: Membership } | { error: 'access_denied'; reason: RefusalReason; description: string };

/** The hosted pages' sentence for each refusal (`refused.*` in i18n/messages), which names the rule that refused. */
export const REFUSAL_MESSAGE_KEY: Record<RefusalReason, string> = {
  suspended: 'refused.suspended',
  invite_only: 'refused.inviteOnly',
  closed: 'refused.closed',
  group_missing: 'refused.groupMissing',
};

/** The refusal of the group rule, in words for problem details and logs (the pages word it in the reader's language). */
export function groupRuleRefusal(app: Pick<Application, 'name'>): Extract<SettleResult, { error: string }> {
  return { error: 'access_denied', reason: 'group_missing', description: `${app.name} is open only to members of certain groups (its group rule).` };
}

export async function settleMembership(ctx: AppContext, app: Application, person: Person): Promise<SettleResult> {
  // The usual visit, an active member's: one prepared read, no transaction (and no read at all for
  // the group rule when the application has none).
  const current = await findMembership(ctx.db, app.id, person.id);
  let inGroup = personPassesGroupRule(ctx.db, app, person.id);
  if (inGroup instanceof Promise) inGroup = await inGroup;
  if (current?.status === 'active') return inGroup ? { membership: current } : groupRuleRefusal(app);
  const passes = inGroup;
  const now = ctx.clock.now();
  return await transaction(ctx.db, async (tx): Promise<SettleResult> => {
    const existing = await findMembership(tx, app.id, person.id);
    if (existing) {
      if (existing.status !== 'active') return { error: 'access_denied', reason: 'suspended', description: `Your access to ${app.name} is suspended.` };
      return passes ? { membership: existing } : groupRuleRefusal(app);
    }
    return admitNewcomer(tx, now, app, person, passes);
  });
}

/**
 * The sign-up policy for a person who is not a member yet, inside the caller's transaction, with
 * `inAllowedGroup` (whether they pass the group rule now: `passesGroupRule`, read before the
 * transaction; true when the application has no rule):
 * - `open` joins them if they pass the rule;
 * - `invite_only` accepts a pending invitation of their verified e-mail (then they pass if they are
 *   in an allowed group, the invitation's groups counted); without one, a person in an allowed
 *   group joins all the same (that is what the rule is for), anyone else is refused;
 * - `closed` refuses.
 * External-provider sign-up uses it too, so both paths admit alike.
 */
export async function admitNewcomer(tx: Tx, now: Date, app: Application, person: Person, inAllowedGroup: boolean): Promise<SettleResult> {
  const ruled = app.allowedGroups !== null;
  switch (app.authPolicy.signup_policy) {
    case 'open':
      if (!inAllowedGroup) return groupRuleRefusal(app);
      return { membership: await createMembership(tx, now, app.id, person) };
    case 'invite_only': {
      const invitation = person.emailVerified ? await pendingInvitationFor(tx, now, app.id, person.email) : undefined;
      if (invitation) {
        // Accepted as on the invitation page: the membership is the administrator's wish; the rule decides access.
        const membership = await acceptInvitation(tx, now, invitation, person);
        const joinsAllowed = invitation.groups.some((group) => app.allowedGroups?.includes(group));
        return inAllowedGroup || joinsAllowed ? { membership } : groupRuleRefusal(app);
      }
      if (ruled && inAllowedGroup) return { membership: await createMembership(tx, now, app.id, person) };
      if (ruled) return groupRuleRefusal(app);
      return { error: 'access_denied', reason: 'invite_only', description: `${app.name} is open to invited people only.` };
    }
    case 'closed':
      return { error: 'access_denied', reason: 'closed', description: `${app.name} does not accept new members.` };
  }
}
