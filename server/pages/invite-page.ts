/**
 * The invitation page `{issuer}/invite/{token}` (DESIGN §4.6): shows the application's name and
 * the inviter's message, lets the invitee create an account (e-mail fixed to the invited one) or
 * sign in, then accepts and sends them on to the application's first redirect URI's origin (or
 * the account page). A signed-in person with the invited e-mail just confirms; a different
 * account, an expired, revoked, accepted or unknown link each get a page saying so.
 * Forms carry the double-submit CSRF token; errors render as HTML in this scope.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import type { Application, Invitation } from '../db/schema.js';
import { Problem } from '../http/problem.js';
import { checkFormToken, formToken } from '../accounts/csrf.js';
import { findPersonByEmail } from '../accounts/people.js';
import { authRateLimits } from '../accounts/rate-limits.js';
import { clientInfo, sendSessionCookie } from '../accounts/routes.js';
import { readSession } from '../accounts/session.js';
import { needsSecondFactor, signInWithEmail } from '../accounts/sign-in.js';
import { redirectToSecondStep } from '../accounts/second-factor/pending.js';
import { signUpWithEmail } from '../accounts/sign-up.js';
import { invitationStatus } from '../invitations/accept.js';
import { invitationForLink, landingUrl, redeemInvitation } from '../invitations/redeem.js';
import { findApplication } from '../applications/lookup.js';
import { findMembership } from '../members/create.js';
import { renderError, renderPage } from './render.js';
import { preparePageScope } from './page-scope.js';
import { redirectSources, resumeAfterJoining } from './sign-in-pages.js';
import { pageText } from '../i18n/index.js';
import { problemText } from './text.js';
import { pageBrand } from './brand.js';

const Params = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
const JoinedParams = Type.Object({ appId: Type.String({ minLength: 1, maxLength: 100 }) });
/** The "You have joined" page of an application. */
export const joinedPath = (appId: string) => `/invite/joined/${encodeURIComponent(appId)}`;
const short = (max: number) => Type.Optional(Type.String({ maxLength: max }));
/** `return_to`: an authorization request of the invitation's application to finish after joining (issue 25). */
const Form = Type.Object(
  { csrf_token: short(200), name: short(200), email: short(254), password: short(1000), return_to: short(4000) },
  { additionalProperties: false },
);
const Query = Type.Object({ return_to: short(4000) }, { additionalProperties: false });

function notFoundPage(reply: FastifyReply) {
  const { t } = pageText(reply.server.ctx.config, reply.request);
  return renderError(reply, 404, t('invite.notFoundTitle'), t('invite.notFound'));
}

/** The invitation behind the link when it is still pending; otherwise the page that says why. */
async function pendingOrPage(ctx: AppContext, token: string, reply: FastifyReply): Promise<{ invitation: Invitation; app: Application } | FastifyReply> {
  const found = await invitationForLink(ctx, token);
  if (!found) return notFoundPage(reply);
  const status = invitationStatus(found.invitation, ctx.clock.now());
  if (status !== 'pending') {
    const { t } = pageText(reply.server.ctx.config, reply.request);
    return renderError(reply, 410, t(`invite.${status}Title`), t(`invite.${status}`), { brand: pageBrand(found.app) });
  }
  return found;
}

async function showInvite(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  found: { invitation: Invitation; app: Application },
  extra: { error?: string; name?: string; returnTo?: string | undefined } = {},
) {
  const { invitation, app } = found;
  const current = await readSession(ctx, request);
  const { t } = pageText(ctx.config, request);
  if (current && current.person.email !== invitation.email) {
    return renderError(
      reply.status(403),
      403,
      t('invite.otherAccountTitle'),
      t('invite.otherAccount', { invited: invitation.email, current: current.person.email }),
      { brand: pageBrand(app) },
    );
  }
  const returnTo = resumeAfterJoining(ctx, request, app, extra.returnTo);
  return renderPage(
    reply,
    'invite',
    {
      title: t('invite.title', { app: app.name }),
      appName: app.name,
      returnTo,
      role: t(`roles.${invitation.role}`),
      email: invitation.email,
      message: invitation.message,
      action: `/invite/${encodeURIComponent(token)}`,
      csrfToken: formToken(ctx.config, request, reply),
      signedInAs: current?.person.email,
      hasAccount: Boolean(await findPersonByEmail(ctx.db, invitation.email)),
      error: extra.error,
      name: extra.name ?? '',
    },
    { formActionSources: redirectSources(ctx, app), pageModule: !current, brand: pageBrand(app), here: `/invite/${encodeURIComponent(token)}` },
  );
}

function problemMessage(error: unknown): Problem {
  if (!(error instanceof Problem)) throw error;
  return error;
}

const inviteRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  const limits = authRateLimits(ctx.config);
  await preparePageScope(app);

  app.get('/invite/:token', { schema: { hide: true, params: Params, querystring: Query } }, async (request, reply) => {
    const found = await pendingOrPage(ctx, request.params.token, reply);
    if (!('invitation' in found)) return found;
    return showInvite(ctx, request, reply, request.params.token, found, { returnTo: request.query.return_to });
  });

  /**
   * Accepts for the signed-in person and sends them on: back into the application's authorization
   * request when there is one (it completes at once: the realm is signed in), else to the application.
   */
  const acceptAndGo = async (request: FastifyRequest, reply: FastifyReply, token: string, person: { id: string; email: string; name: string | null }, given: string | undefined) => {
    const { app: joined } = await redeemInvitation(ctx, token, person);
    return reply.header('cache-control', 'no-store').redirect(resumeAfterJoining(ctx, request, joined, given) ?? joinedPath(joined.id), 303);
  };

  /**
   * "You have joined <app>" (issue 33): where an invitation ends when no sign-in of the application
   * waits to be resumed, with a button to the application (its first redirect URI's origin)
   * instead of sending the browser to an address that may not be running. Only for a signed-in
   * member of that application; anyone else goes to the account page.
   */
  app.get('/invite/joined/:appId', { schema: { hide: true, params: JoinedParams } }, async (request, reply) => {
    const signedIn = await readSession(ctx, request);
    const joined = signedIn ? await findApplication(ctx.db, request.params.appId) : undefined;
    const member = joined && signedIn ? await findMembership(ctx.db, joined.id, signedIn.person.id) : undefined;
    if (!joined || member?.status !== 'active') return reply.header('cache-control', 'no-store').redirect('/account', 303);
    const { t } = pageText(ctx.config, request);
    return renderPage(reply, 'message', {
      title: t('invite.joinedTitle', { app: joined.name }),
      message: t('invite.joined', { app: joined.name }),
      link: { href: landingUrl(ctx, joined), label: t('invite.open', { app: joined.name }) },
    }, { brand: pageBrand(joined) });
  });

  app.post('/invite/:token/accept', { schema: { hide: true, params: Params, body: Form } }, async (request, reply) => {
    checkFormToken(ctx.config, request, request.body.csrf_token);
    const found = await pendingOrPage(ctx, request.params.token, reply);
    if (!('invitation' in found)) return found;
    const current = await readSession(ctx, request);
    const { t } = pageText(ctx.config, request);
    if (!current) return showInvite(ctx, request, reply.status(401), request.params.token, found, { error: t('invite.sessionEnded'), returnTo: request.body.return_to });
    return acceptAndGo(request, reply, request.params.token, current.person, request.body.return_to);
  });

  app.post(
    '/invite/:token/sign-up',
    { config: { rateLimit: limits.signUp }, schema: { hide: true, params: Params, body: Form } },
    async (request, reply) => {
      const form = request.body;
      checkFormToken(ctx.config, request, form.csrf_token);
      const found = await pendingOrPage(ctx, request.params.token, reply);
      if (!('invitation' in found)) return found;
      try {
        // The e-mail is the invited one whatever the form says: the field is read-only on the page.
        const signedUp = await signUpWithEmail(
          ctx,
          { email: found.invitation.email, password: form.password ?? '', name: form.name || undefined, invitationToken: request.params.token },
          clientInfo(ctx, request),
        );
        await sendSessionCookie(ctx, reply, signedUp);
        return reply.redirect(resumeAfterJoining(ctx, request, found.app, form.return_to) ?? joinedPath(found.app.id), 303);
      } catch (error) {
        const problem = problemMessage(error);
        const { locale, t } = pageText(ctx.config, request);
        const labels = new Map([['password', t('common.password')], ['name', t('common.name')], ['email', t('common.email')]]);
        return showInvite(ctx, request, reply.status(problem.status), request.params.token, found, {
          error: problemText(t, locale, problem, labels), name: form.name ?? '', returnTo: form.return_to,
        });
      }
    },
  );

  app.post(
    '/invite/:token/sign-in',
    { config: { rateLimit: limits.signIn }, schema: { hide: true, params: Params, body: Form } },
    async (request, reply) => {
      const form = request.body;
      checkFormToken(ctx.config, request, form.csrf_token);
      const found = await pendingOrPage(ctx, request.params.token, reply);
      if (!('invitation' in found)) return found;
      let signedIn;
      try {
        signedIn = await signInWithEmail(
          ctx,
          { email: found.invitation.email, password: form.password ?? '', applicationId: found.app.id },
          clientInfo(ctx, request),
          request,
          // After the second step the invitation page shows "Join" for the signed-in person.
          { next: `/invite/${encodeURIComponent(request.params.token)}` },
        );
      } catch (error) {
        const problem = problemMessage(error);
        for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
        const { locale, t } = pageText(ctx.config, request);
        return showInvite(ctx, request, reply.status(problem.status), request.params.token, found, { error: problemText(t, locale, problem), returnTo: form.return_to });
      }
      if (needsSecondFactor(signedIn)) return redirectToSecondStep(reply, ctx.config, signedIn);
      await sendSessionCookie(ctx, reply, signedIn);
      return acceptAndGo(request, reply, request.params.token, signedIn.person, form.return_to);
    },
  );
};

/** The invitation page in its own scope (form bodies, HTML errors). */
export const invitePagePlugin: FastifyPluginAsync = async (app) => {
  await app.register(inviteRoutes);
};
