/** `GET /api/admin/auth/providers` (spec §4.2): which sign-in providers are configured. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { adminErrors, NoQuery } from '../http/schemas.js';
import { providerStatus } from './providers.js';

const ProviderStatus = Type.Object({
  id: Type.String(),
  name: Type.String(),
  configured: Type.Boolean(),
  env_vars: Type.Array(Type.String()),
}, { additionalProperties: false });

export const providerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/auth/providers',
    {
      schema: {
        tags: ['providers'],
        summary: 'Sign-in providers and whether each is configured',
        security: [{ adminToken: [] }],
        querystring: NoQuery,
        response: { 200: Type.Object({ providers: Type.Array(ProviderStatus) }, { additionalProperties: false }), ...adminErrors },
      },
    },
    async () => ({ providers: providerStatus(app.ctx.config.env) }),
  );
};
