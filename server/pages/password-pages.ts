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
import { verifyEmail } from '../accounts/email-verification.js';
import { linkPerson } from '../accounts/one-time-tokens.js';
import { requireMail } from '../accounts/email-link-routes.js';
import { preparePageScope } from './page-scope.js';
import { renderPage } from './render.js';

const short = (max: number) => Type.Optional(Type.String({ maxLength: max }));
const TokenQuery = Type.Object({ token: short(200) }, { additionalProperties: false });
const ForgotForm = Type.Object({ csrf_token: short(200), email: short(254) }, { additionalProperties: false });
const VerifyForm = Type.Object({ csrf_token: short(200), token: short(200) }, { additionalProperties: false });
const ResetForm = Type.Object(
  { csrf_token: short(200), token: short(200), password: short(1000), confirm_password: short(1000) },
  { additionalProperties: false },
);

const missingToken = () => new Problem(400, 'token_invalid', 'This link is not valid. Check that you opened the whole link from the e-mail.');

async function showReset(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, token: string, error?: string) {
  const person = await linkPerson(ctx, token, 'password_reset');
  return renderPage(reply, 'reset-password', {
    title: 'Choose a new password', email: person.email, token, csrfToken: formToken(ctx.config, request, reply), error,
  });
}

const passwordPages: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  const limits = authRateLimits(ctx.config);
  await preparePageScope(app);

  app.get('/forgot-password', { schema: { hide: true, querystring: Type.Object({}, { additionalProperties: false }) } }, async (request, reply) => {
    requireMail(ctx);
    return renderPage(reply, 'forgot-password', { title: 'Reset your password', email: '', csrfToken: formToken(ctx.config, request, reply) });
  });

  app.post(
    '/forgot-password',
    { config: { rateLimit: limits.passwordReset }, schema: { hide: true, body: ForgotForm } },
    async (request, reply) => {
      requireMail(ctx);
      checkFormToken(ctx.config, request, request.body.csrf_token);
      const email = (request.body.email ?? '').trim();
      if (!/^[^\s@]+@[^\s@]+$/.test(email)) {
        return renderPage(reply.status(400), 'forgot-password', {
          title: 'Reset your password', email, error: 'Enter the e-mail address of your account.', csrfToken: formToken(ctx.config, request, reply),
        });
      }
      await requestPasswordReset(ctx, email, request.log);
      return renderPage(reply, 'message', {
        title: 'Check your e-mail',
        message: `If ${email} has an account here, we sent it a link to choose a new password. The link works once, for one hour.`,
        link: { href: '/sign-in', label: 'Back to sign-in' },
      });
    },
  );

  app.get('/reset-password', { schema: { hide: true, querystring: TokenQuery } }, async (request, reply) => {
    if (!request.query.token) throw missingToken();
    return showReset(ctx, request, reply, request.query.token);
  });

  app.post(
    '/reset-password',
    { config: { rateLimit: limits.passwordReset }, schema: { hide: true, body: ResetForm } },
    async (request, reply) => {
      checkFormToken(ctx.config, request, request.body.csrf_token);
      const { token, password = '', confirm_password: confirm = '' } = request.body;
      if (!token) throw missingToken();
      if (password !== confirm) return showReset(ctx, request, reply.status(400), token, 'The two passwords are not the same.');
      try {
        await resetPassword(ctx, token, password, 'password');
      } catch (error) {
        if (error instanceof Problem && error.code === 'validation_failed') {
          return showReset(ctx, request, reply.status(400), token, `The password ${error.errors?.[0]?.message ?? 'is not valid'}.`);
        }
        throw error;
      }
      clearSessionCookie(reply, ctx.config);
      return renderPage(reply, 'message', {
        title: 'Password changed',
        message: 'Your new password is set, and every device that was signed in to your account has been signed out.',
        link: { href: '/sign-in', label: 'Sign in' },
      });
    },
  );

  app.get('/verify-email', { schema: { hide: true, querystring: TokenQuery } }, async (request, reply) => {
    if (!request.query.token) throw missingToken();
    const person = await linkPerson(ctx, request.query.token, 'email_verification');
    return renderPage(reply, 'verify-email', {
      title: 'Confirm your e-mail address', email: person.email, token: request.query.token, csrfToken: formToken(ctx.config, request, reply),
    });
  });

  app.post(
    '/verify-email',
    { config: { rateLimit: limits.passwordReset }, schema: { hide: true, body: VerifyForm } },
    async (request, reply) => {
      checkFormToken(ctx.config, request, request.body.csrf_token);
      if (!request.body.token) throw missingToken();
      const person = await verifyEmail(ctx, request.body.token);
      return renderPage(reply, 'message', {
        title: 'E-mail address confirmed',
        message: `Thank you: ${person.email} is confirmed.`,
        link: { href: '/account', label: 'Go to your account' },
      });
    },
  );
};

/** The feature plugin: the e-mail link pages in their own hosted-page scope. */
export const passwordPagesFeature: FastifyPluginAsync<FeatureOptions> = async (app) => {
  await app.register(passwordPages);
};
