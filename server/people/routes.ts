/**
 * `GET /api/admin/people` and `GET /api/admin/people/:id` (issue 25): everyone with an account,
 * across applications, and one person's memberships, sign-in methods and groups. Changes to
 * people are manage-routes.ts'. Not for API keys: the paths are outside every application, so
 * they get 403 `insufficient_scope`.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { adminFeature } from '../http/admin-feature.js';
import { DEFAULT_LIMIT } from '../http/pagination.js';
import { adminErrors, NoQuery, adminSecurity as security } from '../http/schemas.js';
import { getPerson, listPeople } from './queries.js';
import { peopleManagementRoutes } from './manage-routes.js';
import { PeopleListSchema, PeopleQuerySchema, PersonParams, PersonSchema } from './schemas.js';

const tags = ['people'];

const peopleRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  app.get(
    '/people',
    {
      schema: {
        tags, security, summary: 'List people across applications (q: e-mail prefix; keyset pagination)',
        querystring: PeopleQuerySchema, response: { 200: PeopleListSchema, ...adminErrors },
      },
    },
    async (request) => listPeople(ctx.db, request.query, request.query.limit ?? DEFAULT_LIMIT),
  );
  app.get(
    '/people/:id',
    {
      schema: {
        tags, security, summary: "A person, their memberships and sign-in methods",
        params: PersonParams, querystring: NoQuery, response: { 200: PersonSchema, ...adminErrors },
      },
    },
    async (request) => getPerson(ctx.db, request.params.id),
  );
};

export const peoplePlugin = adminFeature(async (app) => {
  await app.register(peopleRoutes);
  await app.register(peopleManagementRoutes);
});
