/**
 * The back-channel logout delivery log under `/api/admin` (admin token, or an API key of the
 * application with `webhooks:read`: logout deliveries are outgoing notifications like webhooks).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAdmin } from '../../http/admin-auth.js';
import { DEFAULT_LIMIT } from '../../http/pagination.js';
import { adminErrors, adminSecurity as security } from '../../http/schemas.js';
import { listLogouts, LogoutListQuerySchema, LogoutListSchema } from './log.js';
import { detailFor } from '../../webhooks/service.js';

const IdParams = Type.Object({ id: Type.String({ maxLength: 200 }) }, { additionalProperties: false });

export const backchannelLogRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  app.addHook('onRequest', requireAdmin);
  app.get(
    '/applications/:id/backchannel-logouts',
    {
      schema: {
        tags: ['back-channel logout'], security,
        summary: 'List the back-channel logout deliveries of an application (newest first)',
        params: IdParams, querystring: LogoutListQuerySchema,
        response: { 200: LogoutListSchema, ...adminErrors },
      },
    },
    async (request) =>
      listLogouts(ctx, request.params.id, request.query.limit ?? DEFAULT_LIMIT, detailFor(request.actor), request.query.status, request.query.cursor),
  );
};
