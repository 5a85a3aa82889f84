/**
 * Admin API for applications and their auth policy (spec §4.2, DESIGN §4.3–4.4).
 * Routes parse and answer; `service.ts` decides. The bodies and the record carry the fields
 * plugins registered (applications/schemas.ts `applicationSchemas`); a create may also be given
 * in another shape a plugin registered (an app preset: `registries.applicationTemplates`).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { visibleApplications, actorName, managesOf } from '../http/admin-auth.js';
import { Problem } from '../http/problem.js';
import { requireMayDelete, requireMayPatch, requireMayPatchAuthPolicy } from './key-limits.js';
import { listQueryProperties, DEFAULT_LIMIT } from '../http/pagination.js';
import { adminErrors, NoQuery, IdParams, adminSecurity as security } from '../http/schemas.js';
import { applicationSchemas, AuthPolicyPatchBodySchema, AuthPolicySchema, type ApplicationCreate } from './schemas.js';
import { createApplication, deleteApplication, getApplication, listApplications, updateApplication, updateAuthPolicy } from './service.js';
import { applicationRecord } from './record.js';
import { authPolicyOf } from './rules.js';
import { rotateClientSecret } from './secrets.js';
import { LOGO_MAX_BYTES, LOGO_TYPES, removeLogo, setLogo, type LogoType } from './branding.js';
import { SHAPE_BY } from '../http/body-shapes.js';

const tags = ['applications'];

export const applicationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  const schemas = applicationSchemas(ctx.registries.applicationFields.all);
  const templates = ctx.registries.applicationTemplates.all;
  // Each template is told apart by its own property (an app preset's `preset`; http/body-shapes.ts).
  const createBody = templates.length
    ? Type.Union([schemas.create, ...templates.map((t) => t.schema)], { [SHAPE_BY]: templates[0]!.discriminator })
    : schemas.create;

  app.get(
    '/applications',
    {
      schema: {
        tags, security, summary: 'List applications',
        querystring: Type.Object(listQueryProperties, { additionalProperties: false }),
        response: { 200: schemas.list, ...adminErrors },
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
        body: createBody,
        response: { 201: schemas.withSecrets, ...adminErrors },
      },
    },
    async (request, reply) => {
      const actor = actorName(request.actor);
      const body = request.body as Record<string, unknown>;
      const template = templates.find((t) => t.discriminator in body);
      const created = template
        ? await template.toCreate(body).then(({ create, origin }) => createApplication(ctx, create as unknown as ApplicationCreate, actor, origin))
        : await createApplication(ctx, body as unknown as ApplicationCreate, actor);
      return reply.status(201).header('location', `/api/admin/applications/${encodeURIComponent(created.id)}`).send(created);
    },
  );

  app.get(
    '/applications/:id',
    { schema: { tags, security, summary: 'Get an application', params: IdParams, querystring: NoQuery, response: { 200: schemas.record, ...adminErrors } } },
    async (request) => applicationRecord(ctx, await getApplication(ctx, request.params.id)),
  );

  app.patch(
    '/applications/:id',
    {
      schema: {
        tags, security, summary: 'Update an application',
        params: IdParams, querystring: NoQuery, body: schemas.patch,
        response: { 200: schemas.withSecrets, ...adminErrors },
      },
    },
    async (request) => {
      const patch = request.body as never;
      requireMayPatch(ctx, request.actor, await getApplication(ctx, request.params.id), patch);
      return updateApplication(ctx, request.params.id, patch, actorName(request.actor), { manages: managesOf(request.actor) });
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
          response: { 200: schemas.record, ...adminErrors },
        },
      },
      async (request) => {
        const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() as LogoType;
        // Any other type reached the app-wide JSON parser: the body is a value, not an image.
        if (!LOGO_TYPES.includes(type) || !Buffer.isBuffer(request.body)) {
          throw new Problem(415, 'unsupported_media_type', `This endpoint accepts ${LOGO_TYPES.join(' or ')} bodies.`);
        }
        const row = await setLogo(ctx, request.params.id, type, request.body as Buffer, actorName(request.actor));
        return applicationRecord(ctx, row);
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

