/**
 * JSON twins of the e-mail link pages (issue 5 item 4), under `/api/auth`, with problem+json
 * errors and the JSON CSRF rule (DESIGN §5). Without `SMTP_URL` every one answers 404
 * `mail_not_configured`, except redeeming a link already sent.
 *
 * - `POST /password-reset` `{email}` → 202, the same whether or not the address has an account.
 * - `POST /password-reset/confirm` `{token, password}` → 204; every session of the person ends.
 * - `POST /verify-email` `{token}` → 200 `{user}`.
 * - `POST /verify-email/resend` (session cookie) → 202; 409 `email_already_verified`;
 *   429 `rate_limited` within a minute of the previous link.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext, FeatureOptions } from '../context.js';
import { conflict, notFound, tooManyRequests, unauthorized } from '../http/problem.js';
import { problemRef } from '../http/schemas.js';
import { mailerFor } from '../mail/mailer.js';
import { userRecord } from './people.js';
import { prepareJsonAuthScope } from './routes.js';
import { UserResponseSchema } from './schemas.js';
import { readSession } from './session.js';
import { requestPasswordReset, resetPassword } from './password-reset.js';
import { sendVerificationEmail, verifyEmail } from './email-verification.js';
import { RESEND_INTERVAL_MS } from './one-time-tokens.js';
import { PASSWORD_MAX_LENGTH } from './passwords.js';
import { requestLocale } from '../i18n/index.js';

const tags = ['sign-in'];
const Token = Type.String({ minLength: 1, maxLength: 200 });
const errors = { 400: problemRef, 401: problemRef, 403: problemRef, 404: problemRef, 409: problemRef, 410: problemRef, 415: problemRef, 429: problemRef };

/** 404 `mail_not_configured` unless `SMTP_URL` is set: the features that send e-mail do not exist without it. */
export function requireMail(ctx: AppContext): void {
  if (!mailerFor(ctx.config)) throw notFound('mail_not_configured', 'This server cannot send e-mail (SMTP_URL is not set).');
}

const emailLinkRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  const limits = await prepareJsonAuthScope(app);

  app.post(
    '/password-reset',
    {
      config: { rateLimit: limits.passwordReset },
      schema: {
        tags, summary: 'E-mail a password reset link (same answer whether or not the address has an account)',
        body: Type.Object({ email: Type.String({ minLength: 1, maxLength: 254 }) }, { additionalProperties: false }),
        response: { 202: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      requireMail(ctx);
      await requestPasswordReset(ctx, request.body.email, request.log, { locale: requestLocale(ctx.config, request) });
      return reply.status(202).header('cache-control', 'no-store').send();
    },
  );

  app.post(
    '/password-reset/confirm',
    {
      config: { rateLimit: limits.passwordReset },
      schema: {
        tags, summary: 'Set a new password with a reset link; ends every session of the person',
        body: Type.Object({ token: Token, password: Type.String({ maxLength: PASSWORD_MAX_LENGTH }) }, { additionalProperties: false }),
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      await resetPassword(ctx, request.body.token, request.body.password);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/verify-email',
    {
      config: { rateLimit: limits.passwordReset },
      schema: {
        tags, summary: 'Confirm an e-mail address with a verification link',
        body: Type.Object({ token: Token }, { additionalProperties: false }),
        response: { 200: UserResponseSchema, ...errors },
      },
    },
    async (request) => ({ user: userRecord(await verifyEmail(ctx, request.body.token)) }),
  );

  app.post(
    '/verify-email/resend',
    {
      config: { rateLimit: limits.passwordReset },
      schema: { tags, summary: 'E-mail a new verification link to the signed-in person', response: { 202: Type.Null(), ...errors } },
    },
    async (request, reply) => {
      const me = await readSession(ctx, request);
      if (!me) throw unauthorized('Sign in first.', 'unauthorized', 'Cookie');
      requireMail(ctx);
      const outcome = await sendVerificationEmail(ctx, me.person, request.log, requestLocale(ctx.config, request));
      if (outcome === 'already_verified') throw conflict('email_already_verified', 'Your e-mail address is already verified.');
      if (outcome === 'sent_recently') throw tooManyRequests(RESEND_INTERVAL_MS / 1000, 'A verification e-mail was sent less than a minute ago.');
      return reply.status(202).header('cache-control', 'no-store').send();
    },
  );
};

/** The feature plugin: the JSON e-mail link endpoints under `/api/auth` in their own scope. */
export const emailLinksFeature: FastifyPluginAsync<FeatureOptions> = async (app) => {
  await app.register(emailLinkRoutes, { prefix: '/api/auth' });
};
