/** Admin API for SSO groups (spec §4.2 plus DESIGN §4.8's list, get, rename, delete, remove). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorName } from '../http/admin-auth.js';
import { DEFAULT_LIMIT, listQueryProperties } from '../http/pagination.js';
import { adminErrors, DisplayName, NoQuery, Slug, Timestamp, IdParams, adminSecurity as security } from '../http/schemas.js';
import { addApplication, createGroup, deleteGroup, getGroup, listGroups, removeApplication, renameGroup } from './sso-groups.js';

const GroupSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  applicationIds: Type.Array(Type.String()),
  createdAt: Timestamp,
}, { additionalProperties: false });
const Name = DisplayName({ minLength: 1, maxLength: 200 });
/** What creates an SSO group (and a configuration file's `ssoGroups` entry: config-as-code). */
export const SsoGroupCreateBody = Type.Object({ id: Slug, name: Name }, { additionalProperties: false });
const tags = ['sso-groups'];

export const ssoGroupRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;

  app.get(
    '/sso-groups',
    {
      schema: {
        tags, security, summary: 'List SSO groups',
        querystring: Type.Object(listQueryProperties, { additionalProperties: false }),
        response: { 200: Type.Object({ ssoGroups: Type.Array(GroupSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false }), ...adminErrors },
      },
    },
    async (request) => listGroups(ctx, request.query.limit ?? DEFAULT_LIMIT, request.query.cursor),
  );

  app.post(
    '/sso-groups',
    {
      schema: {
        tags, security, summary: 'Create an SSO group',
        querystring: NoQuery, body: SsoGroupCreateBody,
        response: { 201: GroupSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const group = await createGroup(ctx, request.body, actorName(request.actor));
      return reply.status(201).header('location', `/api/admin/sso-groups/${group.id}`).send(group);
    },
  );

  app.get(
    '/sso-groups/:id',
    { schema: { tags, security, summary: 'Get an SSO group', params: IdParams, querystring: NoQuery, response: { 200: GroupSchema, ...adminErrors } } },
    async (request) => getGroup(ctx, request.params.id),
  );

  app.patch(
    '/sso-groups/:id',
    {
      schema: {
        tags, security, summary: 'Rename an SSO group', params: IdParams, querystring: NoQuery,
        body: Type.Object({ name: Name }, { additionalProperties: false }),
        response: { 200: GroupSchema, ...adminErrors },
      },
    },
    async (request) => renameGroup(ctx, request.params.id, request.body.name, actorName(request.actor)),
  );

  app.delete(
    '/sso-groups/:id',
    { schema: { tags, security, summary: 'Delete an SSO group (its applications stay)', params: IdParams, querystring: NoQuery, response: { 204: Type.Null(), ...adminErrors } } },
    async (request, reply) => {
      await deleteGroup(ctx, request.params.id, actorName(request.actor));
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/sso-groups/:id/apps',
    {
      schema: {
        tags, security, summary: 'Add an application to the group (moves it from any other group)', params: IdParams, querystring: NoQuery,
        body: Type.Object({ appId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
        response: { 200: GroupSchema, ...adminErrors },
      },
    },
    async (request) => addApplication(ctx, request.params.id, request.body.appId, actorName(request.actor)),
  );

  app.delete(
    '/sso-groups/:id/apps/:appId',
    {
      schema: {
        tags, security, summary: 'Remove an application from the group',
        params: Type.Object({ id: Type.String({ maxLength: 200 }), appId: Type.String({ maxLength: 200 }) }), querystring: NoQuery,
        response: { 204: Type.Null(), ...adminErrors },
      },
    },
    async (request, reply) => {
      await removeApplication(ctx, request.params.id, request.params.appId, actorName(request.actor));
      return reply.status(204).send(null);
    },
  );
};
