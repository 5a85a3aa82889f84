/**
 * Self-service second factors under `/api/me` (spec second-factor.md, "Self-service"), registered
 * inside the self-service scope (session cookie, JSON CSRF rule, `no-store`). Routes parse and
 * answer; service.ts decides.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Person, Session } from '../../db/schema.js';
import { NoQuery, problemRef } from '../../http/schemas.js';
import { requireRecentSignIn } from '../session.js';
import {
  CodeBody,
  PasskeyParams,
  PasskeyPatchBody,
  PasskeyRegisterBody,
  PasskeySchema,
  RecoveryCodesResponse,
  SecuritySchema,
  TotpConfirmSchema,
  TotpStartSchema,
  WebAuthnOptionsSchema,
} from './schemas.js';
import {
  addPasskey,
  checkPasskeyRoom,
  confirmTotp,
  passkeyRecord,
  regenerateRecoveryCodes,
  removePasskey,
  removeTotp,
  renameOwnPasskey,
  securityOf,
  startTotpEnrolment,
} from './service.js';
import { challengeOf, registrationOptions, verifyRegistration } from './webauthn.js';
import { rememberRegistrationChallenge, takeRegistrationChallenge } from './registration-challenges.js';

const tags = ['self-service'];
const errors = { 400: problemRef, 401: problemRef, 403: problemRef, 404: problemRef, 409: problemRef, 415: problemRef, 429: problemRef };

type Me = { session: Session; person: Person };

export function registerSecurityRoutes(app: FastifyInstance, meOf: (request: FastifyRequest) => Me, signInLimit: { max: number; timeWindow: number; groupId: string }) {
  const { ctx } = app;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get(
    '/security',
    { schema: { tags, summary: 'Your second factors: TOTP, passkeys, recovery codes left', querystring: NoQuery, response: { 200: SecuritySchema, ...errors } } },
    async (request) => securityOf(ctx, meOf(request).person.id),
  );

  r.post(
    '/totp',
    {
      schema: {
        tags, summary: 'Start setting up an authenticator app (needs a sign-in within 10 minutes)',
        querystring: NoQuery, response: { 200: TotpStartSchema, ...errors },
      },
    },
    async (request) => {
      const me = meOf(request);
      return startTotpEnrolment(ctx, me.person, me.session.id);
    },
  );

  r.post(
    '/totp/confirm',
    {
      config: { rateLimit: signInLimit },
      schema: {
        tags, summary: 'Confirm the authenticator app with a code (a first second factor returns recovery codes)',
        querystring: NoQuery, body: CodeBody, response: { 200: TotpConfirmSchema, ...errors },
      },
    },
    async (request) => {
      const me = meOf(request);
      return confirmTotp(ctx, me.person, request.body.code, `person:${me.person.id}`);
    },
  );

  r.delete(
    '/totp',
    {
      schema: {
        tags, summary: 'Remove the authenticator app (needs a sign-in within 10 minutes; ends your other sessions)',
        querystring: NoQuery, response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      const me = meOf(request);
      await removeTotp(ctx, me.person, me.session.id);
      return reply.status(204).send(null);
    },
  );

  r.post(
    '/passkeys/options',
    {
      schema: {
        tags, summary: 'WebAuthn creation options for a new passkey (needs a sign-in within 10 minutes)',
        querystring: NoQuery, response: { 200: WebAuthnOptionsSchema, ...errors },
      },
    },
    async (request) => {
      const me = meOf(request);
      await requireRecentSignIn(ctx, me.session.id);
      const options = await registrationOptions(ctx.config, me.person, await checkPasskeyRoom(ctx, me.person.id));
      await rememberRegistrationChallenge(ctx, me.session.id, options.challenge);
      return options;
    },
  );

  r.post(
    '/passkeys',
    {
      schema: {
        tags, summary: 'Register a passkey; 400 passkey_invalid says why in words',
        querystring: NoQuery, body: PasskeyRegisterBody, response: { 201: Type.Object({ ...PasskeySchema.properties, recoveryCodes: Type.Optional(Type.Array(Type.String())) }), ...errors },
      },
    },
    async (request, reply) => {
      const me = meOf(request);
      await requireRecentSignIn(ctx, me.session.id);
      const challenge = await takeRegistrationChallenge(ctx, me.session.id, challengeOf(request.body.response));
      const verified = await verifyRegistration(ctx.config, me.person.id, request.body.name, request.body.response, challenge);
      const { passkey, recoveryCodes } = await addPasskey(ctx, me.person, verified, `person:${me.person.id}`);
      return reply
        .status(201)
        .header('location', `/api/me/passkeys/${passkey.id}`)
        .send({ ...passkeyRecord(passkey), ...(recoveryCodes ? { recoveryCodes } : {}) });
    },
  );

  r.patch(
    '/passkeys/:id',
    { schema: { tags, summary: 'Rename a passkey', params: PasskeyParams, querystring: NoQuery, body: PasskeyPatchBody, response: { 200: PasskeySchema, ...errors } } },
    async (request) => passkeyRecord(await renameOwnPasskey(ctx, meOf(request).person, request.params.id, request.body.name)),
  );

  r.delete(
    '/passkeys/:id',
    {
      schema: {
        tags, summary: 'Remove a passkey (needs a sign-in within 10 minutes; ends your other sessions)',
        params: PasskeyParams, querystring: NoQuery, response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      const me = meOf(request);
      await removePasskey(ctx, me.person, me.session.id, request.params.id);
      return reply.status(204).send(null);
    },
  );

  r.post(
    '/recovery-codes',
    {
      schema: {
        tags, summary: 'A new set of recovery codes, replacing the old one (needs a sign-in within 10 minutes)',
        querystring: NoQuery, response: { 200: RecoveryCodesResponse, ...errors },
      },
    },
    async (request) => {
      const me = meOf(request);
      return { recoveryCodes: await regenerateRecoveryCodes(ctx, me.person, me.session.id) };
    },
  );
}
