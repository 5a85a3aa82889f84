/**
 * First run (spec administrators-and-people.md, "First run"): while no owner exists, `/admin/`
 * offers creating one, and so does `gatehouse setup`.
 *
 * - `GET /api/setup` (no credentials): `{ ownerExists, passwordHint, panelSignIn }`, so the panel
 *   knows which screen to show and how its sign-in reaches the built-in client.
 * - `POST /api/admin/setup/owner` `{ email, name, password }`: creates the person (password under
 *   the policy), makes them the owner and, for a browser, signs them in (the panel then goes on to
 *   its own sign-in, where the second factor is enrolled). 409 `owner_exists` once there is one.
 *
 * Creating the owner needs the admin token (it is an admin route, and no named administrator
 * exists yet): whoever can read `<data>/admin-token` or run `gatehouse admin-token` runs this
 * machine. A first-run screen open to anyone would hand the installation to whoever reaches it
 * first (docs/decisions/0122-first-run-needs-the-admin-token.md).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { FeatureOptions } from '../context.js';
import { adminFeature } from '../http/admin-feature.js';
import { actorName } from '../http/admin-auth.js';
import { conflict, validationFailed } from '../http/problem.js';
import { adminErrors, DisplayName, NoQuery, adminSecurity as security } from '../http/schemas.js';
import { transaction } from '../db/store.js';
import { checkNewPassword, passwordPolicy, policyHint } from '../accounts/password-policy.js';
import { checkPasswordLength, hashPassword } from '../accounts/passwords.js';
import { clientInfo, sendSessionCookie } from '../accounts/routes.js';
import { startSession, userRecord } from '../accounts/people.js';
import { isEmailAddress } from '../util/email.js';
import { recordAudit } from '../audit/record.js';
import { findApplication } from '../applications/lookup.js';
import { insertPerson } from '../people/create.js';
import { countOwners } from './queries.js';
import { grantRole } from './service.js';
import { PANEL_AUDIENCE, PANEL_CALLBACK_PATH, PANEL_CLIENT_ID } from './panel-client.js';

const SetupStatusSchema = Type.Object(
  {
    ownerExists: Type.Boolean(),
    /** The password policy in words, for the first-run form's hint. */
    passwordHint: Type.String(),
    /** What the panel's "Sign in with Gatehouse" uses: the built-in client (administrators/panel-client.ts). */
    panelSignIn: Type.Object(
      { issuer: Type.String(), clientId: Type.String(), redirectUri: Type.String(), audience: Type.String(), scope: Type.String() },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
const OwnerBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    name: DisplayName({ minLength: 1, maxLength: 200 }),
    password: Type.String({ minLength: 1, maxLength: 1000 }),
  },
  { additionalProperties: false },
);
const OwnerCreated = Type.Object(
  {
    user: Type.Object(
      { id: Type.String(), email: Type.String(), emailVerified: Type.Boolean(), name: Type.Union([Type.String(), Type.Null()]), createdAt: Type.String() },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const ownerExists = () => conflict('owner_exists', 'An owner exists already: sign in with Gatehouse, or have an owner name more administrators.');

const ownerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  app.post(
    '/setup/owner',
    {
      schema: {
        tags: ['administrators'], security, summary: 'First run: create the owner (admin token; only while no owner exists)',
        querystring: NoQuery, body: OwnerBody, response: { 201: OwnerCreated, ...adminErrors },
      },
    },
    async (request, reply) => {
      const email = request.body.email.trim().toLowerCase();
      if (!isEmailAddress(email)) throw validationFailed([{ path: 'body.email', message: 'must be an e-mail address' }], 'The e-mail address is not valid.');
      if ((await countOwners(ctx.db)) > 0) throw ownerExists();
      checkPasswordLength(request.body.password);
      await checkNewPassword(ctx.db, request.body.password, { userInputs: [email, request.body.name] });
      const passwordHash = await hashPassword(request.body.password);
      const now = ctx.clock.now();
      const actor = actorName(request.actor);
      const signedIn = await transaction(ctx.db, async (tx) => {
        // Checked again inside: two set-ups at once make one owner.
        if ((await countOwners(tx)) > 0) throw ownerExists();
        const person = await insertPerson(tx, now, { email, name: request.body.name, passwordHash, emailVerified: true });
        await recordAudit(tx, now, { actor, action: 'person.created', target: person.id, details: { email, via: 'setup' } });
        await grantRole(tx, ctx, now, person, { role: 'owner', applications: [] }, actor);
        // Signed in on this browser, for the panel: its sign-in then asks only for the second factor.
        const panel = await findApplication(tx, PANEL_CLIENT_ID);
        const started = await startSession(ctx, now, person, panel, clientInfo(ctx, request), ['pwd']);
        return { person, ...started };
      });
      await sendSessionCookie(ctx, reply, signedIn);
      return reply.status(201).send({ user: userRecord(signedIn.person) });
    },
  );
};

const statusRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/setup',
    { schema: { tags: ['administrators'], summary: 'First run: whether an owner exists (no credentials needed)', querystring: NoQuery, response: { 200: SetupStatusSchema } } },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      const issuer = app.ctx.config.issuer.replace(/\/$/, '');
      return {
        ownerExists: (await countOwners(app.ctx.db)) > 0,
        passwordHint: policyHint(await passwordPolicy(app.ctx.db)),
        panelSignIn: { issuer, clientId: PANEL_CLIENT_ID, redirectUri: `${issuer}${PANEL_CALLBACK_PATH}`, audience: PANEL_AUDIENCE, scope: 'openid offline_access' },
      };
    },
  );
};

const owner = adminFeature(ownerRoutes);

export const setupPlugin: FastifyPluginAsync<FeatureOptions> = async (app, options) => {
  await app.register(statusRoutes);
  await app.register(owner, options);
};
