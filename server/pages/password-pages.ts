/**
 * Hosted pages for the e-mail links (issue 5 item 4), shown only when `SMTP_URL` is set:
 *
 * - `GET|POST /forgot-password` — asks for an address; always answers "check your e-mail"
 *   (rate limited per IP; at most one e-mail per account a minute).
 * - `GET|POST /reset-password?token=` — the new-password form of a reset link (single use,
 *   one hour); success signs the person out everywhere and offers sign-in.
 * - `GET /verify-email?token=` — asks to confirm the address; `POST /verify-email` confirms it.
 *   The GET spends nothing: mail scanners and link previews fetch links, and must not burn them.
 *
 * Forms carry the double-submit CSRF token; errors are HTML pages.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext, FeatureOptions } from '../context.js';
import { Problem } from '../http/problem.js';
import { checkFormToken, formToken } from '../accounts/csrf.js';
import { authRateLimits } from '../accounts/rate-limits.js';
import { clearSessionCookie } from '../accounts/session.js';
import { requestPasswordReset, resetPassword } from '../accounts/password-reset.js';
import { escapeHtml } from '../util/html.js';
import { verifyEmail } from '../accounts/email-verification.js';
import { linkPerson } from '../accounts/one-time-tokens.js';
import { requireMail } from '../accounts/email-link-routes.js';
import { preparePageScope } from './page-scope.js';
import { renderPage } from './render.js';
import type { Application } from '../db/schema.js';
import { findApplication } from '../applications/lookup.js';
import { pageText } from '../i18n/index.js';
import { pageBrand } from './brand.js';
import { DEFAULT_RETURN_TO, flowQuery, safeReturnTo } from './sign-in-pages.js';

const short = (max: number) => Type.Optional(Type.String({ maxLength: max }));
/** `client_id`/`return_to`: the application and authorization request a reset interrupted (issue 25, item 13). */
const flow = { client_id: short(200), return_to: short(4000) };
const TokenQuery = Type.Object({ token: short(200), ...flow }, { additionalProperties: false });
const FlowOnly = Type.Object(flow, { additionalProperties: false });
const ForgotForm = Type.Object({ csrf_token: short(200), email: short(254), ...flow }, { additionalProperties: false });
const VerifyForm = Type.Object({ csrf_token: short(200), token: short(200) }, { additionalProperties: false });
const ResetForm = Type.Object(
  { csrf_token: short(200), token: short(200), password: short(1000), confirm_password: short(1000), ...flow },
  { additionalProperties: false },
);

const missingToken = () => new Problem(400, 'token_invalid', 'This link is not valid. Check that you opened the whole link from the e-mail.');

/** The flow a reset carries: the application (if it still exists) and the request to resume. */
interface Carried {
  app: Application | undefined;
  returnTo: string;
}

async function carried(ctx: AppContext, query: { client_id?: string | undefined; return_to?: string | undefined }): Promise<Carried> {
  const app = query.client_id ? await findApplication(ctx.db, query.client_id) : undefined;
  return { app, returnTo: safeReturnTo(ctx, query.return_to) };
}

/** The query string that carries the flow on (nothing when there is none to carry). */
const carryQuery = (flow: Carried) => (flow.app || flow.returnTo !== DEFAULT_RETURN_TO ? flowQuery(flow.app, flow.returnTo) : '');
const signInHref = (flow: Carried) => `/sign-in${carryQuery(flow) ? `?${carryQuery(flow)}` : ''}`;

async function showReset(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, token: string, flow: Carried, error?: string) {
  const person = await linkPerson(ctx, token, 'password_reset');
  const { t } = pageText(ctx.config, request);
  return renderPage(reply, 'reset-password', {
    title: t('reset.title'), email: person.email, token, csrfToken: formToken(ctx.config, request, reply), error,
    clientId: flow.app?.id, returnTo: flow.returnTo === DEFAULT_RETURN_TO ? undefined : flow.returnTo,
  }, { pageModule: true, brand: pageBrand(flow.app), here: `/reset-password?${new URLSearchParams({ token }).toString()}${carryQuery(flow) ? `&${carryQuery(flow)}` : ''}` });
}

function showForgot(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, flow: Carried, email: string, error?: string) {
  const { t } = pageText(ctx.config, request);
  return renderPage(reply, 'forgot-password', {
    title: t('forgot.title'), email, error, csrfToken: formToken(ctx.config, request, reply),
    clientId: flow.app?.id, returnTo: flow.returnTo === DEFAULT_RETURN_TO ? undefined : flow.returnTo, signInHref: signInHref(flow),
  }, { brand: pageBrand(flow.app), here: `/forgot-password${carryQuery(flow) ? `?${carryQuery(flow)}` : ''}` });
}

const passwordPages: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  const limits = authRateLimits(ctx.config);
  await preparePageScope(app);

  app.get('/forgot-password', { schema: { hide: true, querystring: FlowOnly } }, async (request, reply) => {
    requireMail(ctx);
    return showForgot(ctx, request, reply, await carried(ctx, request.query), '');
  });

  app.post(
    '/forgot-password',
    { config: { rateLimit: limits.passwordReset }, schema: { hide: true, body: ForgotForm } },
    async (request, reply) => {
      requireMail(ctx);
      checkFormToken(ctx.config, request, request.body.csrf_token);
      const email = (request.body.email ?? '').trim();
      const flow = await carried(ctx, request.body);
      const { locale, t } = pageText(ctx.config, request);
      if (!/^[^\s@]+@[^\s@]+$/.test(email)) return showForgot(ctx, request, reply.status(400), flow, email, t('forgot.enterEmail'));
      // The link in the e-mail carries the flow, so the reset ends where the sign-in was going.
      await requestPasswordReset(ctx, email, request.log, { locale, carry: carryQuery(flow) });
      return renderPage(reply, 'message', {
        title: t('forgot.sentTitle'),
        message: t('forgot.sent', { email }),
        link: { href: signInHref(flow), label: t('common.backToSignIn') },
      }, { brand: pageBrand(flow.app), here: signInHref(flow) });
    },
  );

  app.get('/reset-password', { schema: { hide: true, querystring: TokenQuery } }, async (request, reply) => {
    if (!request.query.token) throw missingToken();
    return showReset(ctx, request, reply, request.query.token, await carried(ctx, request.query));
  });

  app.post(
    '/reset-password',
    { config: { rateLimit: limits.passwordReset }, schema: { hide: true, body: ResetForm } },
    async (request, reply) => {
      checkFormToken(ctx.config, request, request.body.csrf_token);
      const { token, password = '', confirm_password: confirm = '' } = request.body;
      if (!token) throw missingToken();
      const flow = await carried(ctx, request.body);
      const { t } = pageText(ctx.config, request);
      if (password !== confirm) return showReset(ctx, request, reply.status(400), token, flow, t('reset.mismatch'));
      try {
        await resetPassword(ctx, token, password, 'password');
      } catch (error) {
        if (error instanceof Problem && error.code === 'validation_failed') {
          return showReset(ctx, request, reply.status(400), token, flow, t('reset.invalid', { reason: error.errors?.[0]?.message ?? 'is not valid' }));
        }
        // The password policy's reason, in words (accounts/password-policy.ts).
        if (error instanceof Problem && error.code === 'weak_password') return showReset(ctx, request, reply.status(400), token, flow, escapeHtml(error.detail));
        throw error;
      }
      clearSessionCookie(reply, ctx.config);
      // On to the sign-in of the application the reset interrupted, which resumes its request.
      return renderPage(reply, 'message', {
        title: t('reset.doneTitle'),
        message: t('reset.done'),
        link: { href: signInHref(flow), label: flow.app ? t('reset.signInTo', { app: flow.app.name }) : t('common.signIn') },
      }, { brand: pageBrand(flow.app), here: signInHref(flow) });
    },
  );

  app.get('/verify-email', { schema: { hide: true, querystring: TokenQuery } }, async (request, reply) => {
    if (!request.query.token) throw missingToken();
    const person = await linkPerson(ctx, request.query.token, 'email_verification');
    const { t } = pageText(ctx.config, request);
    return renderPage(reply, 'verify-email', {
      title: t('verify.title'), email: person.email, token: request.query.token, csrfToken: formToken(ctx.config, request, reply),
    });
  });

  app.post(
    '/verify-email',
    { config: { rateLimit: limits.passwordReset }, schema: { hide: true, body: VerifyForm } },
    async (request, reply) => {
      checkFormToken(ctx.config, request, request.body.csrf_token);
      if (!request.body.token) throw missingToken();
      const person = await verifyEmail(ctx, request.body.token);
      const { t } = pageText(ctx.config, request);
      return renderPage(reply, 'message', {
        title: t('verify.doneTitle'),
        message: t('verify.done', { email: person.email }),
        link: { href: '/account', label: t('common.goToAccount') },
      }, { here: '/account' });
    },
  );
};

/** The feature plugin: the e-mail link pages in their own hosted-page scope. */
export const passwordPagesFeature: FastifyPluginAsync<FeatureOptions> = async (app) => {
  await app.register(passwordPages);
};
