/**
 * `GET /api/admin/activity` (the installation) and `GET /api/admin/applications/:id/activity`:
 * sign-ins, failed sign-ins and active people per UTC day, oldest first, from the daily counters
 * (activity/record.ts). Their retention is the sweeper's (data-lifecycle/retention-rules.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { FeatureOptions } from '../context.js';
import { adminFeature } from '../http/admin-feature.js';
import { adminErrors, IdParams, adminSecurity as security } from '../http/schemas.js';
import { getApplication } from '../applications/lookup.js';
import { activitySeries, INSTALLATION } from './record.js';

const tags = ['activity'];

const ActivityQuery = Type.Object(
  { days: Type.Optional(Type.Integer({ minimum: 1, maximum: 366, default: 30, description: 'how many days, ending today (UTC)' })) },
  { additionalProperties: false },
);

const ActivitySchema = Type.Object(
  {
    days: Type.Array(
      Type.Object(
        {
          date: Type.String({ description: 'YYYY-MM-DD, UTC' }),
          signIns: Type.Integer(),
          failedSignIns: Type.Integer(),
          activePeople: Type.Integer({ description: 'distinct people active that day' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const activityRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  app.get(
    '/activity',
    {
      schema: {
        tags, security, summary: 'Sign-ins, failed sign-ins and active people per day, whole installation',
        querystring: ActivityQuery, response: { 200: ActivitySchema, ...adminErrors },
      },
    },
    async (request) => ({ days: await activitySeries(ctx.db, INSTALLATION, ctx.clock.now(), request.query.days ?? 30) }),
  );
  app.get(
    '/applications/:id/activity',
    {
      schema: {
        tags, security, summary: 'Sign-ins, failed sign-ins and active people per day for one application',
        params: IdParams, querystring: ActivityQuery, response: { 200: ActivitySchema, ...adminErrors },
      },
    },
    async (request) => {
      const application = await getApplication(ctx, request.params.id);
      return { days: await activitySeries(ctx.db, application.id, ctx.clock.now(), request.query.days ?? 30) };
    },
  );
};

export const activityPlugin: FastifyPluginAsync<FeatureOptions> = async (app, options) => {
  await app.register(adminFeature(activityRoutes), options);
};
