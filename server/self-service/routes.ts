/**
 * Self-service API under `/api/me` (spec §4.3, DESIGN §4.8): the signed-in person's memberships
 * and profiles, sessions and linked accounts, plus password change, unlinking and "sign out
 * everywhere else". Authentication is the session cookie (401 `unauthorized` first, before
 * anything else is looked at); every write then passes the JSON CSRF rule (403 `csrf_failed`).
 * Routes parse and answer; `service.ts` decides.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { FeatureOptions } from '../context.js';
import { checkJsonWrite } from '../accounts/csrf.js';
import { authRateLimits, registerRateLimit } from '../accounts/rate-limits.js';
import { clearSessionCookie, readSession } from '../accounts/session.js';
import { acceptEmptyJsonBody } from '../http/empty-json.js';
import { unauthorized } from '../http/problem.js';
import { NoQuery, problemRef } from '../http/schemas.js';
import { accountPagePlugin } from '../pages/account-page.js';
import { registerSecurityRoutes } from '../accounts/second-factor/me-routes.js';
import { userRecord } from '../accounts/people.js';
import { UserResponseSchema } from '../accounts/schemas.js';
import { updatePerson } from '../people/service.js';
import {
  AppParams,
  LinkedAccountsResponse,
  MePatchBody,
  MembershipSchema,
  MembershipsResponse,
  PasswordChangeBody,
  ProfilePatchBody,
  ProviderParams,
  SessionParams,
  SessionsResponse,
  SignOutOthersResponse,
} from './schemas.js';
import {
  changePassword,
  endOwnSession,
  linkedAccountRecord,
  listLinkedAccounts,
  listMemberships,
  listSessions,
  membershipRecord,
  signOutOtherSessions,
  unlinkAccount,
  updateOwnProfile,
  type Me,
} from './service.js';

const tags = ['self-service'];
const errors = { 400: problemRef, 401: problemRef, 403: problemRef, 404: problemRef, 409: problemRef, 415: problemRef, 429: problemRef };

const signedIn = new WeakMap<FastifyRequest, Me>();

/** The caller resolved by the scope's onRequest hook. */
function meOf(request: FastifyRequest): Me {
  const me = signedIn.get(request);
  if (!me) throw unauthorized('Sign in first.', 'unauthorized', 'Cookie');
  return me;
}

/** Personal data: never cached by the browser or anything in between. */
const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

export const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  const limits = authRateLimits(ctx.config);
  await registerRateLimit(app);
  acceptEmptyJsonBody(app);

  app.addHook('onRequest', async (request, reply) => {
    const me = await readSession(ctx, request);
    if (!me) throw unauthorized('This endpoint needs a signed-in session cookie.', 'unauthorized', 'Cookie');
    signedIn.set(request, me);
    if (request.method !== 'GET' && request.method !== 'HEAD') checkJsonWrite(ctx.config, request);
    noStore(reply);
  });

  // '' (not '/'): the path is `/api/me` itself.
  app.patch(
    '',
    {
      schema: {
        tags, summary: 'Change your name, given name or family name (blank or null clears one)',
        querystring: NoQuery, body: MePatchBody, response: { 200: UserResponseSchema, ...errors },
      },
    },
    async (request) => {
      const me = meOf(request);
      return { user: userRecord(await updatePerson(ctx, me.person.id, request.body, `person:${me.person.id}`)) };
    },
  );

  app.get(
    '/memberships',
    { schema: { tags, summary: 'Your memberships (suspended ones included)', querystring: NoQuery, response: { 200: MembershipsResponse, ...errors } } },
    async (request) => ({ memberships: (await listMemberships(ctx, meOf(request))).map(membershipRecord) }),
  );

  app.patch(
    '/applications/:id/profile',
    {
      schema: {
        tags, summary: 'Edit your profile for an application (user-editable fields; null clears an optional one)',
        params: AppParams, querystring: NoQuery, body: ProfilePatchBody, response: { 200: MembershipSchema, ...errors },
      },
    },
    async (request) => membershipRecord(await updateOwnProfile(ctx, meOf(request), request.params.id, request.body.profile)),
  );

  app.get(
    '/sessions',
    {
      schema: {
        tags, summary: 'Your sessions: live ones, then those ended in the last 7 days',
        querystring: NoQuery, response: { 200: SessionsResponse, ...errors },
      },
    },
    async (request) => ({ sessions: await listSessions(ctx, meOf(request)) }),
  );

  app.post(
    '/sessions/sign-out-all',
    {
      schema: {
        tags, summary: 'Sign out every other device (this one stays signed in) and revoke their refresh tokens',
        querystring: NoQuery, response: { 200: SignOutOthersResponse, ...errors },
      },
    },
    async (request) => signOutOtherSessions(ctx, meOf(request)),
  );

  app.delete(
    '/sessions/:sid',
    {
      schema: {
        tags, summary: 'Sign out a device and revoke the refresh tokens born of its session',
        params: SessionParams, querystring: NoQuery, response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      const { wasCurrent } = await endOwnSession(ctx, meOf(request), request.params.sid);
      if (wasCurrent) clearSessionCookie(reply, ctx.config);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/linked-accounts',
    { schema: { tags, summary: 'How you can sign in (`credential` is e-mail and password)', querystring: NoQuery, response: { 200: LinkedAccountsResponse, ...errors } } },
    async (request) => ({ accounts: (await listLinkedAccounts(ctx, meOf(request))).map(linkedAccountRecord) }),
  );

  app.delete(
    '/linked-accounts/:provider',
    {
      schema: {
        tags, summary: 'Unlink a sign-in method (refused when it is the last one)',
        params: ProviderParams, querystring: NoQuery, response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      await unlinkAccount(ctx, meOf(request), request.params.provider);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/password',
    {
      config: { rateLimit: limits.signIn },
      schema: {
        tags, summary: 'Change your password (ends your other sessions)',
        querystring: NoQuery, body: PasswordChangeBody, response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      await changePassword(ctx, meOf(request), request.body);
      return reply.status(204).send(null);
    },
  );

  // Second factors: /api/me/security, /totp, /passkeys, /recovery-codes.
  registerSecurityRoutes(app, meOf, limits.signIn);
  // The plugins' routes under /api/me (app passwords: /api/me/app-passwords, spec ldap.md).
  for (const entry of ctx.registries.meRoutes.all) entry.routes(app, meOf);
};

/** The feature plugin: the JSON API under `/api/me` and the hosted account page. */
export const selfServicePlugin: FastifyPluginAsync<FeatureOptions> = async (app) => {
  await app.register(meRoutes, { prefix: '/api/me' });
  await app.register(accountPagePlugin);
};
