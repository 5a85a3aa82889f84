/**
 * Sign-in endpoints under `/api/auth` (DESIGN §4.8): JSON in, problem+json errors out, the
 * session cookie on success. Every write here passes the JSON CSRF rule first, then the per-IP
 * rate limit.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext, FeatureOptions } from '../context.js';
import { problemRef } from '../http/schemas.js';
import { acceptEmptyJsonBody } from '../http/empty-json.js';
import { checkJsonWrite } from './csrf.js';
import { deviceCookieOf, sendDeviceCookie } from './device-cookie.js';
import { userRecord, type ClientInfo } from './people.js';
import { authRateLimits, registerRateLimit } from './rate-limits.js';
import { SignInBodySchema, SignInResponseSchema, SignUpBodySchema, UserResponseSchema, UsernameSignInBodySchema } from './schemas.js';
import { clearSessionCookie, endSession, readSession, sessionToken, setSessionCookie } from './session.js';
import { needsSecondFactor, signInWithEmail, signInWithPassword, type SignedIn } from './sign-in.js';
import { setMfaCookie } from './second-factor/pending.js';
import { signUpWithEmail } from './sign-up.js';
import { sendVerificationEmail } from './email-verification.js';
import { requestLocale } from '../i18n/index.js';
import { transaction } from '../db/store.js';

const tags = ['sign-in'];
const errors = { 400: problemRef, 401: problemRef, 403: problemRef, 404: problemRef, 409: problemRef, 415: problemRef, 429: problemRef };

export function clientInfo(ctx: AppContext, request: FastifyRequest): ClientInfo {
  const ua = request.headers['user-agent'];
  return {
    userAgent: typeof ua === 'string' ? ua : undefined,
    ip: request.ip,
    currentToken: sessionToken(ctx.config, request),
    deviceCookie: deviceCookieOf(ctx.config, request),
    log: request.log,
  };
}

/**
 * Sets the cookie for a new session (the browser keeps its cookie when the session was reused),
 * and a fresh device cookie: this browser has now proved itself for the address (device-cookie.ts).
 */
export async function sendSessionCookie(ctx: AppContext, reply: FastifyReply, signedIn: SignedIn): Promise<void> {
  if (signedIn.token) setSessionCookie(reply, ctx.config, signedIn.token);
  await sendDeviceCookie(ctx.db, ctx.config, reply.request, reply, signedIn.person.email);
  reply.header('cache-control', 'no-store');
}

/**
 * What every JSON scope under `/api/auth` needs: the per-IP limiter, the JSON CSRF rule on every
 * request, and an empty `application/json` body accepted (sign-out, resend carry none).
 */
export async function prepareJsonAuthScope(app: FastifyInstance) {
  await registerRateLimit(app);
  acceptEmptyJsonBody(app);
  app.addHook('onRequest', async (request) => checkJsonWrite(app.ctx.config, request));
  return authRateLimits(app.ctx.config);
}

export const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  const limits = await prepareJsonAuthScope(app);

  app.post(
    '/sign-up/email',
    {
      config: { rateLimit: limits.signUp },
      schema: { tags, summary: 'Create an account with e-mail and password', body: SignUpBodySchema, response: { 201: UserResponseSchema, ...errors } },
    },
    async (request, reply) => {
      const signedUp = await signUpWithEmail(ctx, request.body, clientInfo(ctx, request));
      await sendVerificationEmail(ctx, signedUp.person, request.log, requestLocale(ctx.config, request));
      await sendSessionCookie(ctx, reply, signedUp);
      return reply.status(201).send({ user: userRecord(signedUp.person) });
    },
  );

  app.post(
    '/sign-in/email',
    {
      config: { rateLimit: limits.signIn },
      schema: {
        tags,
        summary: 'Sign in with e-mail and password',
        description:
          'For a person with a second factor, or for an application whose policy requires one, a right password answers `{secondFactor: {methods}}` with a short-lived `gatehouse_mfa` cookie and no session cookie: continue at `/api/auth/second-factor/*`.',
        body: SignInBodySchema,
        response: { 200: SignInResponseSchema, ...errors, 503: problemRef },
      },
    },
    async (request, reply) => {
      const outcome = await signInWithEmail(ctx, request.body, clientInfo(ctx, request), request);
      if (needsSecondFactor(outcome)) {
        setMfaCookie(reply, ctx.config, outcome.pendingToken);
        reply.header('cache-control', 'no-store');
        return { secondFactor: outcome.secondFactor };
      }
      await sendSessionCookie(ctx, reply, outcome);
      return { user: userRecord(outcome.person) };
    },
  );

  app.post(
    '/sign-in/username',
    {
      config: { rateLimit: limits.signIn },
      schema: {
        tags,
        summary: 'Sign in with username and password',
        description:
          'As `/sign-in/email`, by username. People a directory source keeps are checked by that source (503 `directory_unavailable` when it cannot be reached, not counted as a failed attempt); a username new to the source is looked up there and signed in.',
        body: UsernameSignInBodySchema,
        response: { 200: SignInResponseSchema, ...errors, 503: problemRef },
      },
    },
    async (request, reply) => {
      const { username, password, applicationId } = request.body;
      const outcome = await signInWithPassword(ctx, { login: username, password, applicationId }, 'username', clientInfo(ctx, request), request);
      if (needsSecondFactor(outcome)) {
        setMfaCookie(reply, ctx.config, outcome.pendingToken);
        reply.header('cache-control', 'no-store');
        return { secondFactor: outcome.secondFactor };
      }
      await sendSessionCookie(ctx, reply, outcome);
      return { user: userRecord(outcome.person) };
    },
  );

  app.post(
    '/sign-out',
    { schema: { tags, summary: 'End this browser session', response: { 204: Type.Null(), 403: problemRef } } },
    async (request, reply) => {
      await signOut(ctx, request, reply);
      return reply.status(204).send(null);
    },
  );
};

/** Ends the request's session (if any) and clears its cookie; returns the id of the session it ended. */
export async function signOut(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<string | undefined> {
  const current = await readSession(ctx, request);
  if (current) {
    const now = ctx.clock.now();
    await transaction(ctx.db, async (tx) => endSession(ctx, tx, now, current.session.id, 'sign_out'));
  }
  clearSessionCookie(reply, ctx.config);
  return current?.session.id;
}

/** The feature plugin: sign-in endpoints under `/api/auth` in their own scope. */
export const accountsFeature: FastifyPluginAsync<FeatureOptions> = async (app) => {
  await app.register(accountRoutes, { prefix: '/api/auth' });
};
