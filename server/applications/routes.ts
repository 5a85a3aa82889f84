/**
 * Admin API for applications and their auth policy (spec §4.2, DESIGN §4.3–4.4).
 * Routes parse and answer; `service.ts` decides.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { visibleApplications, actorName } from '../http/admin-auth.js';
import { Problem } from '../http/problem.js';
import { requireMayDelete, requireMayPatch, requireMayPatchAuthPolicy, requireMayRotateLdapPassword } from './key-limits.js';
import { listQueryProperties, DEFAULT_LIMIT } from '../http/pagination.js';
import { adminErrors, NoQuery, IdParams, adminSecurity as security } from '../http/schemas.js';
import {
  ApplicationCreateSchema,
  ApplicationListSchema,
  ApplicationPatchSchema,
  ApplicationRecordSchema,
  ApplicationWithSecretsSchema,
  AuthPolicyPatchBodySchema,
  AuthPolicySchema,
  LdapPasswordSchema,
} from './schemas.js';
import {
  applicationRecord,
  authPolicyOf,
  createApplication,
  deleteApplication,
  getApplication,
  listApplications,
  rotateClientSecret,
  rotateLdapPassword,
  updateApplication,
  updateAuthPolicy,
} from './service.js';

import { LOGO_MAX_BYTES, LOGO_TYPES, removeLogo, setLogo, type LogoType } from './branding.js';
import { PresetCreateSchema } from '../presets/schemas.js';
import { SHAPE_BY } from '../http/body-shapes.js';
import { applicationFromPreset } from '../presets/apply.js';

const tags = ['applications'];

export const applicationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;

  app.get(
    '/applications',
    {
      schema: {
        tags, security, summary: 'List applications',
        querystring: Type.Object(listQueryProperties, { additionalProperties: false }),
        response: { 200: ApplicationListSchema, ...adminErrors },
      },
    },
    async (request) => listApplications(ctx, request.query.limit ?? DEFAULT_LIMIT, request.query.cursor, visibleApplications(request.actor)),
  );

  app.post(
    '/applications',
    {
      schema: {
        tags, security,
        summary: 'Create an application (client secret and generated webhook secret shown once), from its settings or from an app preset',
        querystring: NoQuery,
        // A body with `preset` is a preset's; a refusal names the fields of the shape it picked (http/body-shapes.ts).
        body: Type.Union([ApplicationCreateSchema, PresetCreateSchema], { [SHAPE_BY]: 'preset' }),
        response: { 201: ApplicationWithSecretsSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const actor = actorName(request.actor);
      const created = 'preset' in request.body
        ? await applicationFromPreset(ctx, request.body).then(({ create, origin }) => createApplication(ctx, create, actor, origin))
        : await createApplication(ctx, request.body, actor);
      return reply.status(201).header('location', `/api/admin/applications/${encodeURIComponent(created.id)}`).send(created);
    },
  );

  app.get(
    '/applications/:id',
    { schema: { tags, security, summary: 'Get an application', params: IdParams, querystring: NoQuery, response: { 200: ApplicationRecordSchema, ...adminErrors } } },
    async (request) => applicationRecord(await getApplication(ctx, request.params.id), ctx.config),
  );

  app.patch(
    '/applications/:id',
    {
      schema: {
        tags, security, summary: 'Update an application',
        params: IdParams, querystring: NoQuery, body: ApplicationPatchSchema,
        response: { 200: ApplicationWithSecretsSchema, ...adminErrors },
      },
    },
    async (request) => {
      requireMayPatch(request.actor, await getApplication(ctx, request.params.id), request.body);
      return updateApplication(ctx, request.params.id, request.body, actorName(request.actor));
    },
  );

  app.delete(
    '/applications/:id',
    { schema: { tags, security, summary: 'Delete an application and everything that belongs to it', params: IdParams, querystring: NoQuery, response: { 204: Type.Null(), ...adminErrors } } },
    async (request, reply) => {
      requireMayDelete(request.actor);
      await deleteApplication(ctx, request.params.id, actorName(request.actor));
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/applications/:id/client-secret',
    {
      schema: {
        tags, security, summary: 'Rotate the client secret of a web application (shown once)',
        params: IdParams, querystring: NoQuery,
        response: { 200: Type.Object({ clientSecret: Type.String() }, { additionalProperties: false }), ...adminErrors },
      },
    },
    async (request) => rotateClientSecret(ctx, request.params.id, actorName(request.actor)),
  );

  app.post(
    '/applications/:id/ldap/password',
    {
      schema: {
        tags, security, summary: 'New password for the application\'s LDAP service account (shown once; the old one stops binding)',
        params: IdParams, querystring: NoQuery,
        response: { 200: LdapPasswordSchema, ...adminErrors },
      },
    },
    async (request) => {
      requireMayRotateLdapPassword(request.actor);
      return rotateLdapPassword(ctx, request.params.id, actorName(request.actor));
    },
  );

  app.get(
    '/applications/:id/auth-policy',
    { schema: { tags, security, summary: 'Get the auth policy', params: IdParams, querystring: NoQuery, response: { 200: AuthPolicySchema, ...adminErrors } } },
    async (request) => authPolicyOf(await getApplication(ctx, request.params.id)),
  );

  app.patch(
    '/applications/:id/auth-policy',
    {
      schema: {
        tags, security, summary: 'Update the auth policy (profile_fields replaces the list when given)',
        params: IdParams, querystring: NoQuery, body: AuthPolicyPatchBodySchema,
        response: { 200: AuthPolicySchema, ...adminErrors },
      },
    },
    async (request) => {
      requireMayPatchAuthPolicy(request.actor, await getApplication(ctx, request.params.id), request.body);
      return updateAuthPolicy(ctx, request.params.id, request.body, actorName(request.actor));
    },
  );

  // The logo is the request body itself (PNG or SVG, at most 100 KB): its own scope, so these
  // content types are parsed here and nowhere else.
  const logoRoutes: FastifyPluginAsyncTypebox = async (logo) => {
    logo.addContentTypeParser(LOGO_TYPES as unknown as string[], { parseAs: 'buffer', bodyLimit: LOGO_MAX_BYTES }, (_request, body, done) => done(null, body));
    logo.put(
      '/applications/:id/logo',
      {
        bodyLimit: LOGO_MAX_BYTES,
        schema: {
          tags, security,
          summary: 'Upload the logo shown on the application\'s hosted pages (the body: a PNG or SVG image of at most 100 KB)',
          consumes: [...LOGO_TYPES],
          // Described for the OpenAPI document only: no `type`, so the bytes pass through (setLogo checks them).
          body: { content: Object.fromEntries(LOGO_TYPES.map((type) => [type, { schema: { description: `The image itself (${type}, at most 100 KB)` } }])) },
          params: IdParams, querystring: NoQuery,
          response: { 200: ApplicationRecordSchema, ...adminErrors },
        },
      },
      async (request) => {
        const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() as LogoType;
        // Any other type reached the app-wide JSON parser: the body is a value, not an image.
        if (!LOGO_TYPES.includes(type) || !Buffer.isBuffer(request.body)) {
          throw new Problem(415, 'unsupported_media_type', `This endpoint accepts ${LOGO_TYPES.join(' or ')} bodies.`);
        }
        const row = await setLogo(ctx, request.params.id, type, request.body as Buffer, actorName(request.actor));
        return applicationRecord(row, ctx.config);
      },
    );
    logo.delete(
      '/applications/:id/logo',
      { schema: { tags, security, summary: 'Remove the application\'s logo', params: IdParams, querystring: NoQuery, response: { 204: Type.Null(), ...adminErrors } } },
      async (request, reply) => {
        await removeLogo(ctx, request.params.id, actorName(request.actor));
        return reply.status(204).send(null);
      },
    );
  };
  await app.register(logoRoutes);
};

