/**
 * Admin API for API keys (spec §4.2, DESIGN §4.7). Only the admin token reaches these routes:
 * `requireAdmin` gives API keys no scope area for `/api-keys` (a key cannot mint keys).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorName } from '../http/admin-auth.js';
import { adminFeature } from '../http/admin-feature.js';
import { DEFAULT_LIMIT } from '../http/pagination.js';
import { adminErrors, NoQuery, IdParams, adminSecurity as security } from '../http/schemas.js';
import { ApiKeyCreatedSchema, ApiKeyCreateSchema, ApiKeyListQuerySchema, ApiKeyListSchema, ApiKeyParams, ApiKeyRecordSchema } from './schemas.js';
import { createApiKey, getApiKey, listApiKeys, revokeApiKey } from './service.js';

const tags = ['api-keys'];

export const apiKeyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;

  app.post(
    '/applications/:id/api-keys',
    {
      schema: {
        tags, security, summary: 'Create an API key (the key is shown once)',
        params: IdParams, querystring: NoQuery, body: ApiKeyCreateSchema,
        response: { 201: ApiKeyCreatedSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const created = await createApiKey(ctx, request.params.id, request.body, actorName(request.actor));
      return reply
        .status(201)
        .header('location', `/api/admin/applications/${encodeURIComponent(request.params.id)}/api-keys/${created.id}`)
        .send(created);
    },
  );

  app.get(
    '/applications/:id/api-keys',
    {
      schema: {
        tags, security, summary: 'List API keys (never the key itself)',
        params: IdParams, querystring: ApiKeyListQuerySchema,
        response: { 200: ApiKeyListSchema, ...adminErrors },
      },
    },
    async (request) => listApiKeys(ctx, request.params.id, request.query.limit ?? DEFAULT_LIMIT, request.query.cursor),
  );

  app.get(
    '/applications/:id/api-keys/:kid',
    { schema: { tags, security, summary: 'Get an API key (never the key itself)', params: ApiKeyParams, querystring: NoQuery, response: { 200: ApiKeyRecordSchema, ...adminErrors } } },
    async (request) => getApiKey(ctx, request.params.id, request.params.kid),
  );

  app.delete(
    '/applications/:id/api-keys/:kid',
    { schema: { tags, security, summary: 'Revoke an API key', params: ApiKeyParams, querystring: NoQuery, response: { 204: Type.Null(), ...adminErrors } } },
    async (request, reply) => {
      await revokeApiKey(ctx, request.params.id, request.params.kid, actorName(request.actor));
      return reply.status(204).send(null);
    },
  );
};

export const apiKeysPlugin = adminFeature(apiKeyRoutes);
