/**
 * `GET /api/admin/administrators`, `PUT|DELETE /api/admin/administrators/:personId` (owner or the
 * admin token: admin-policy.ts leaves them at its `owner` default) and `GET /api/admin/me` (any
 * administrator: who is calling and what their role covers).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { passwordPolicyRoutes } from './password-policy-routes.js';
import { Type } from 'typebox';
import { actorName, routeTable } from '../http/admin-auth.js';
import { capabilitiesOf } from '../http/admin-policy.js';
import { adminErrors, NoQuery, adminSecurity as security } from '../http/schemas.js';
import { findPersonRow } from '../people/queries.js';
import { AdminMeSchema, AdministratorListSchema, AdministratorParams, AdministratorPutSchema, AdministratorSchema } from './schemas.js';
import { deleteAdministrator, listAdministratorRecords, putAdministrator } from './service.js';

const tags = ['administrators'];

const administratorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  app.get(
    '/administrators',
    { schema: { tags, security, summary: 'List administrators and their roles (owner only)', querystring: NoQuery, response: { 200: AdministratorListSchema, ...adminErrors } } },
    async () => listAdministratorRecords(ctx),
  );
  app.put(
    '/administrators/:personId',
    {
      schema: {
        tags, security, summary: 'Make a person an administrator, or change their role (owner only; audited)',
        params: AdministratorParams, querystring: NoQuery, body: AdministratorPutSchema, response: { 200: AdministratorSchema, ...adminErrors },
      },
    },
    async (request) => putAdministrator(ctx, request.params.personId, request.body, actorName(request.actor)),
  );
  app.delete(
    '/administrators/:personId',
    {
      schema: {
        tags, security, summary: 'Remove an administrator role (owner only; 409 last_owner for the last owner)',
        params: AdministratorParams, querystring: NoQuery, response: { 204: Type.Null(), ...adminErrors },
      },
    },
    async (request, reply) => {
      await deleteAdministrator(ctx, request.params.personId, actorName(request.actor));
      return reply.status(204).send(null);
    },
  );
  app.get(
    '/me',
    { schema: { tags, security, summary: 'Who is calling: the administrator, their role and applications', querystring: NoQuery, response: { 200: AdminMeSchema, ...adminErrors } } },
    async (request) => {
      const actor = request.actor;
      // What the caller may call, from the same route table the guard decides by (plugins' routes included).
      const table = routeTable(ctx.registries.adminRoutes.all);
      if (actor.type === 'admin') {
        return { via: 'admin_token' as const, personId: null, email: null, name: null, role: 'owner' as const, applications: [], capabilities: capabilitiesOf({ role: 'owner' }, table) };
      }
      if (actor.type === 'api_key') {
        return { via: 'api_key' as const, personId: null, email: null, name: null, role: null, applications: [actor.applicationId], capabilities: capabilitiesOf({ scopes: actor.scopes }, table) };
      }
      const person = await findPersonRow(ctx.db, actor.personId);
      return {
        via: 'panel' as const, personId: actor.personId, email: person?.email ?? null, name: person?.name ?? null, role: actor.role,
        applications: [...actor.applications], capabilities: capabilitiesOf(actor, table),
      };
    },
  );
};

/** The administrators' admin routes: the administrators themselves and the password policy (administrators/plugin.ts registers them). */
export const administratorAdminRoutes: FastifyPluginAsync = async (app) => {
  await app.register(administratorRoutes);
  await app.register(passwordPolicyRoutes);
};
