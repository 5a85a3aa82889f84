/**
 * `POST /api/admin/applications/:id/test-sign-in` (spec administrators-and-people.md, "Invitations
 * and test sign-in"): the panel's Test sign-in exchanges its code here instead of at the token
 * endpoint, so it needs no client secret (shown once, long gone). The caller is an administrator
 * who may manage the application (admin-policy.ts: owner, its app manager, or the admin token);
 * the exchange is the token endpoint's own authorization-code grant for that client, limited to
 * codes issued for the panel's test callback (`<issuer>/admin/callback`) with PKCE, so this route
 * cannot redeem a code meant for the application's own redirect URIs. The answer adds the checks
 * plugins registered (plugin-api/registries.ts `testSignInChecks`: the app preset's requirements,
 * presets/requirements.ts), so the panel can say in words whether the app will get what it needs.
 *
 * `POST /api/admin/applications/:id/test-sign-in/session`, called by the panel before it opens the
 * test's window: an administrator signed in to the panel with Gatehouse already proved who they
 * are, with a second factor, in this browser's Gatehouse session (the one their panel token names,
 * `sid`). That session is marked as signed in to the application's realm, at the time it signed
 * in to the panel (so `auth_time` and `max_age` stay true), and the test's authorize request is
 * answered without a second password and code (issue 44). Nothing else is skipped: the
 * application's sign-up policy, membership, second-factor policy and consent are decided by
 * authorize as always. The admin token has no Gatehouse session: the window asks to sign in.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAdmin } from '../http/admin-auth.js';
import { badRequest } from '../http/problem.js';
import { adminErrors, IdParams, NoQuery, adminSecurity as security } from '../http/schemas.js';
import { getApplication } from '../applications/lookup.js';
import { authorizationCodeGrant } from './token/authorization-code.js';
import { OAuthError } from './errors.js';
import type { KeyRing } from './keys.js';
import { markRealm, realmAuthTime, realmOf } from '../accounts/session.js';
import { PANEL_CLIENT_ID } from '../http/schemas.js';

export const TEST_CALLBACK_PATH = '/admin/callback';

const Body = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 512 }),
    codeVerifier: Type.String({ minLength: 43, maxLength: 128, description: 'the PKCE verifier of the test flow (required)' }),
  },
  { additionalProperties: false },
);
const Answer = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.String(),
    expires_in: Type.Integer(),
    scope: Type.Optional(Type.String()),
    id_token: Type.Optional(Type.String()),
    refresh_token: Type.Optional(Type.String()),
    checks: Type.Array(
      Type.Object({ text: Type.String(), passed: Type.Boolean(), detail: Type.String() }, { additionalProperties: false }),
      { description: 'The requirements of the app preset the application came from, each checked against these tokens (empty without a preset)' },
    ),
  },
  { additionalProperties: false },
);

const SessionAnswer = Type.Object(
  {
    sessionReused: Type.Boolean({
      description: "true: the caller's Gatehouse session (their panel sign-in) now counts as signed in to the application, and the test's window signs in without asking; false: there is none to reuse (the admin token), the window asks",
    }),
  },
  { additionalProperties: false },
);

/** The realm of the panel's own sign-in: when a session last signed in to the panel. */
const PANEL_REALM = realmOf({ id: PANEL_CLIENT_ID, ssoGroupId: null });

export const testSignInRoutes: FastifyPluginAsyncTypebox<{ keys: KeyRing }> = async (app, { keys }) => {
  const { ctx } = app;
  app.addHook('onRequest', requireAdmin);
  app.post(
    '/applications/:id/test-sign-in/session',
    {
      schema: {
        tags: ['applications'], security,
        summary: "Let the panel's Test sign-in use the caller's own Gatehouse session (signed in to the panel with a second factor), without signing in again",
        params: IdParams, querystring: NoQuery, response: { 200: SessionAnswer, ...adminErrors },
      },
    },
    async (request) => {
      const client = await getApplication(ctx, request.params.id);
      const actor = request.actor;
      if (actor.type !== 'person') return { sessionReused: false };
      const signedIn = await realmAuthTime(ctx, actor.sessionId, PANEL_REALM);
      if (!signedIn) return { sessionReused: false };
      // Never moved back: a later sign-in to the application itself keeps its own time.
      const realm = realmOf(client);
      const already = await realmAuthTime(ctx, actor.sessionId, realm);
      if (!already || already < signedIn) await markRealm(ctx.db, actor.sessionId, realm, signedIn);
      return { sessionReused: true };
    },
  );
  app.post(
    '/applications/:id/test-sign-in',
    {
      schema: {
        tags: ['applications'], security,
        summary: "Exchange the panel's Test sign-in code for the application's tokens, without its client secret",
        params: IdParams, querystring: NoQuery, body: Body, response: { 200: Answer, ...adminErrors },
      },
    },
    async (request, reply) => {
      const client = await getApplication(ctx, request.params.id);
      if (!client.grantTypes.includes('authorization_code')) {
        throw badRequest('test_sign_in_failed', `${client.name} does not use sign-in with an authorization code (its grant types leave it out).`);
      }
      const redirectUri = `${ctx.config.issuer.replace(/\/$/, '')}${TEST_CALLBACK_PATH}`;
      try {
        const tokens = await authorizationCodeGrant(ctx, keys, client, {
          code: request.body.code,
          redirect_uri: redirectUri,
          code_verifier: request.body.codeVerifier,
        });
        reply.header('cache-control', 'no-store');
        // The plugins' checks, in words (the preset's own requirements: spec presets-and-operations.md, "App presets").
        return { ...tokens, checks: ctx.registries.testSignInChecks.all.flatMap((entry) => entry.checks(client, tokens)) };
      } catch (error) {
        if (error instanceof OAuthError) throw badRequest('test_sign_in_failed', `The code exchange was refused (${error.error}): ${error.description}`);
        throw error;
      }
    },
  );
};
