/**
 * Redeeming an invitation link for a signed-in person (DESIGN §4.6): used by the invite page and
 * `POST /api/auth/invitations/accept`. The link must be pending and addressed to the person's
 * e-mail (a different account is refused); accepting joins them with the invitation's role and
 * tells where to send them next: the origin of the application's first redirect URI, or the
 * account page when that is not a web origin (custom schemes of native apps).
 */
import type { Application, Invitation, Membership, Person } from '../db/schema.js';
import type { AppContext } from '../context.js';
import { conflict, forbidden, notFound } from '../http/problem.js';
import { acceptInvitation, invitationByToken, invitationStatus } from './accept.js';
import { transaction } from '../db/store.js';
import { findApplication } from '../applications/lookup.js';

export const invitationNotFound = () => notFound('invitation_not_found', 'This invitation link is not valid.');

/** Where to send someone who just joined `app`. */
export function landingUrl(ctx: AppContext, app: Pick<Application, 'redirectUris'>): string {
  const first = app.redirectUris[0];
  if (first) {
    try {
      const url = new URL(first);
      if (url.protocol === 'https:' || url.protocol === 'http:') return `${url.origin}/`;
    } catch {
      // fall through to the account page
    }
  }
  return `${ctx.config.issuer}/account`;
}

/** The invitation behind a link and its application, for showing the page (any status). */
export async function invitationForLink(ctx: AppContext, token: string): Promise<{ invitation: Invitation; app: Application } | undefined> {
  const invitation = await invitationByToken(ctx.db, token);
  if (!invitation) return undefined;
  const app = await findApplication(ctx.db, invitation.applicationId);
  return app ? { invitation, app } : undefined;
}

export async function redeemInvitation(
  ctx: AppContext,
  token: string,
  person: Pick<Person, 'id' | 'email' | 'name'>,
): Promise<{ membership: Membership; app: Application; redirectTo: string }> {
  const now = ctx.clock.now();
  const result = await transaction(ctx.db, async (tx) => {
    const invitation = await invitationByToken(tx, token);
    if (!invitation) throw invitationNotFound();
    const status = invitationStatus(invitation, now);
    if (status !== 'pending') throw conflict('invitation_not_pending', `This invitation is ${status}.`);
    if (invitation.email !== person.email.toLowerCase()) {
      throw forbidden('invitation_wrong_account', `This invitation is for another e-mail address; you are signed in as ${person.email}.`);
    }
    const app = await findApplication(tx, invitation.applicationId);
    if (!app) throw invitationNotFound();
    // `closed` means no new members (DESIGN §4.4), invited or not; the invitation stays pending.
    if (app.authPolicy.signup_policy === 'closed') throw forbidden('signup_not_allowed', `${app.name} does not accept new members.`);
    return { membership: await acceptInvitation(tx, now, invitation, person), app };
  });
  ctx.wakeWebhooks();
  return { ...result, redirectTo: landingUrl(ctx, result.app) };
}
