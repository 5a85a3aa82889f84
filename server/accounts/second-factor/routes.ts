/**
 * The second-factor endpoints under `/api/auth` (spec second-factor.md, "Sign-in"): the second
 * step after a password (`second-factor/*`, with the `gatehouse_mfa` cookie), enrolment there
 * when an application requires a factor the person lacks (`second-factor/enrol/*`), and
 * passkey-first sign-in (`passkey/*`). JSON in, problem+json out, the JSON CSRF rule and a per-IP
 * budget on every route; success sets the session cookie like any sign-in.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { FeatureOptions } from '../../context.js';
import { problemRef } from '../../http/schemas.js';
import { clientInfo, prepareJsonAuthScope, sendSessionCookie } from '../routes.js';
import { userRecord } from '../people.js';
import { UserResponseSchema } from '../schemas.js';
import {
  enrolPasskey,
  enrolPasskeyOptions,
  enrolTotpConfirm,
  enrolTotpStart,
  passkeyFirstOptions,
  passkeyFirstSignIn,
  passkeyStep,
  passkeyStepOptions,
  recoveryCodeStep,
  totpStep,
  type Completed,
} from './flow.js';
import {
  AssertionBody,
  CodeBody,
  EnrolPasskeyBody,
  PasskeySignInBody,
  TotpStartSchema,
  UserWithCodesSchema,
  WebAuthnOptionsSchema,
} from './schemas.js';

const tags = ['sign-in'];
const errors = { 400: problemRef, 401: problemRef, 403: problemRef, 404: problemRef, 409: problemRef, 415: problemRef, 429: problemRef };

/** One per-IP budget for every second-step route, on top of the per-pending and per-person limits. */
const secondStepLimit = (max: number) => ({ max, timeWindow: 60_000, groupId: 'second-factor' });

export const secondFactorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  const limits = await prepareJsonAuthScope(app);
  const rateLimit = secondStepLimit(limits.signIn.max);

  const answer = (reply: Parameters<typeof sendSessionCookie>[1], done: Completed) => {
    sendSessionCookie(ctx, reply, done.signedIn);
    return { user: userRecord(done.signedIn.person), ...(done.recoveryCodes ? { recoveryCodes: done.recoveryCodes } : {}) };
  };

  app.post(
    '/second-factor/totp',
    { config: { rateLimit }, schema: { tags, summary: 'Second step: a TOTP code', body: CodeBody, response: { 200: UserResponseSchema, ...errors } } },
    async (request, reply) => answer(reply, totpStep(ctx, request, reply, request.body.code, clientInfo(ctx, request))),
  );

  app.post(
    '/second-factor/recovery-code',
    { config: { rateLimit }, schema: { tags, summary: 'Second step: a recovery code (used up)', body: CodeBody, response: { 200: UserResponseSchema, ...errors } } },
    async (request, reply) => answer(reply, recoveryCodeStep(ctx, request, reply, request.body.code, clientInfo(ctx, request))),
  );

  app.post(
    '/second-factor/passkey/options',
    { config: { rateLimit }, schema: { tags, summary: "Second step: WebAuthn request options (the person's passkeys)", response: { 200: WebAuthnOptionsSchema, ...errors } } },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return passkeyStepOptions(ctx, request);
    },
  );

  app.post(
    '/second-factor/passkey',
    { config: { rateLimit }, schema: { tags, summary: 'Second step: a passkey assertion', body: AssertionBody, response: { 200: UserResponseSchema, ...errors } } },
    async (request, reply) => answer(reply, await passkeyStep(ctx, request, reply, request.body.response, clientInfo(ctx, request))),
  );

  app.post(
    '/second-factor/enrol/totp',
    { config: { rateLimit }, schema: { tags, summary: 'Enrolment at sign-in: a new TOTP secret', response: { 200: TotpStartSchema, ...errors } } },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return enrolTotpStart(ctx, _request);
    },
  );

  app.post(
    '/second-factor/enrol/totp/confirm',
    {
      config: { rateLimit },
      schema: { tags, summary: 'Enrolment at sign-in: confirm the TOTP secret with a code (finishes the sign-in)', body: CodeBody, response: { 200: UserWithCodesSchema, ...errors } },
    },
    async (request, reply) => answer(reply, enrolTotpConfirm(ctx, request, reply, request.body.code, clientInfo(ctx, request))),
  );

  app.post(
    '/second-factor/enrol/passkey/options',
    { config: { rateLimit }, schema: { tags, summary: 'Enrolment at sign-in: WebAuthn creation options', response: { 200: WebAuthnOptionsSchema, ...errors } } },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return enrolPasskeyOptions(ctx, request);
    },
  );

  app.post(
    '/second-factor/enrol/passkey',
    {
      config: { rateLimit },
      schema: { tags, summary: 'Enrolment at sign-in: register a passkey (finishes the sign-in)', body: EnrolPasskeyBody, response: { 200: UserWithCodesSchema, ...errors } },
    },
    async (request, reply) =>
      answer(reply, await enrolPasskey(ctx, request, reply, request.body.name ?? 'Passkey', request.body.response, clientInfo(ctx, request))),
  );

  app.post(
    '/passkey/options',
    { config: { rateLimit }, schema: { tags, summary: 'Passkey-first sign-in: WebAuthn request options (no allowCredentials)', response: { 200: WebAuthnOptionsSchema, ...errors } } },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return passkeyFirstOptions(ctx);
    },
  );

  app.post(
    '/passkey',
    {
      config: { rateLimit },
      schema: { tags, summary: 'Passkey-first sign-in: a passkey assertion (a multi-factor sign-in on its own)', body: PasskeySignInBody, response: { 200: UserResponseSchema, ...errors } },
    },
    async (request, reply) => {
      const signedIn = await passkeyFirstSignIn(ctx, request.body.response, request.body.applicationId, clientInfo(ctx, request));
      sendSessionCookie(ctx, reply, signedIn);
      return { user: userRecord(signedIn.person) };
    },
  );
};

export const secondFactorFeature: FastifyPluginAsync<FeatureOptions> = async (app) => {
  await app.register(secondFactorRoutes, { prefix: '/api/auth' });
};
