/**
 * Finishing a pending link on sign-in: a browser that signed in with another linked provider or
 * the password (and, with a second factor, the second step too) proves the external identity
 * waiting in its `gatehouse_link_pending` cookie, which is then linked. Used by the provider
 * routes directly and by the hosted second step (pages/second-factor-pages.ts) when a pending
 * sign-in was started with `finishLink`, whichever instance completes it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { providerName } from '../../applications/providers.js';
import { clientInfo } from '../routes.js';
import type { SignedIn } from '../sign-in.js';
import { clearLoginCookie, dropPendingLink, loginCookie, pendingLink } from './logins.js';
import { finishPendingLink } from './service.js';

/** After a successful proof, links the identity waiting in this browser (if it is this person's); where to go next. */
export async function finishLinkIfPending(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, signedIn: SignedIn, returnTo: string): Promise<string> {
  const secret = loginCookie(ctx.config, request, 'gatehouse_link_pending');
  const pending = await pendingLink(ctx, secret);
  if (!pending || pending.linkPersonId !== signedIn.person.id) return returnTo;
  const name = providerName(pending.provider, ctx.config.env);
  await dropPendingLink(ctx, secret!);
  clearLoginCookie(reply, ctx.config, 'gatehouse_link_pending');
  return finishPendingLink(ctx, pending, name, signedIn, clientInfo(ctx, request));
}
