/**
 * Admin API for webhook deliveries (issue 6): list, replay, send a test event. Mounted under
 * `/api/admin` behind `requireAdmin`; API keys need `webhooks:read` / `webhooks:write`.
 *
 * Manual sends (test events and replays) are limited to 10 a minute per application (issue 22
 * review): each is a real POST to the configured target, so without a limit a key holder could use
 * the appliance to hammer a host on the LAN and fill the outbox. Counted after authentication.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { registerRateLimit } from '../accounts/rate-limits.js';
import { actorName } from '../http/admin-auth.js';
import { DEFAULT_LIMIT } from '../http/pagination.js';
import { adminErrors, NoQuery, adminSecurity as security } from '../http/schemas.js';
import { DeliveryListQuerySchema, DeliveryListSchema, DeliveryParamsSchema, DeliveryRecordSchema } from './schemas.js';
import { detailFor, listDeliveries, retryDelivery, sendTestEvent } from './service.js';

/** Only the administrator sees why an attempt failed (webhooks/service.ts). */

const IdParams = Type.Object({ id: Type.String({ maxLength: 200 }) }, { additionalProperties: false });
const tags = ['webhooks'];

/** One budget per application for every manual send, whoever asks. */
const manualSends = {
  max: 10,
  timeWindow: 60_000,
  groupId: 'webhook-manual-sends',
  keyGenerator: (request: FastifyRequest) => `app:${(request.params as { id?: string }).id ?? ''}`,
};

export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  await registerRateLimit(app, 'preHandler');

  app.get(
    '/applications/:id/webhook-deliveries',
    {
      schema: {
        tags, security, summary: 'List webhook deliveries of an application (oldest first)',
        params: IdParams, querystring: DeliveryListQuerySchema,
        response: { 200: DeliveryListSchema, ...adminErrors },
      },
    },
    async (request) =>
      listDeliveries(ctx, request.params.id, request.query.limit ?? DEFAULT_LIMIT, detailFor(request.actor), request.query.status, request.query.cursor),
  );

  app.post(
    '/applications/:id/webhook-deliveries/:did/retry',
    {
      config: { rateLimit: manualSends },
      schema: {
        tags, security, summary: 'Deliver again now, with a fresh retry schedule',
        params: DeliveryParamsSchema, querystring: NoQuery,
        response: { 202: DeliveryRecordSchema, ...adminErrors },
      },
    },
    async (request, reply) =>
      reply.status(202).send(await retryDelivery(ctx, request.params.id, request.params.did, actorName(request.actor), detailFor(request.actor))),
  );

  app.post(
    '/applications/:id/webhook-test',
    {
      config: { rateLimit: manualSends },
      schema: {
        tags, security, summary: 'Send a webhook.test event',
        params: IdParams, querystring: NoQuery,
        response: { 202: DeliveryRecordSchema, ...adminErrors },
      },
    },
    async (request, reply) => reply.status(202).send(await sendTestEvent(ctx, request.params.id, actorName(request.actor))),
  );
};
