/**
 * The admin Groups API (spec claims-and-groups.md, "Groups"): directory groups and who is in them.
 * Admin token only: the paths are outside every application, so API keys get 403
 * `insufficient_scope`. Routes parse and answer; service.ts decides.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorName } from '../http/admin-auth.js';
import { adminFeature } from '../http/admin-feature.js';
import { DEFAULT_LIMIT } from '../http/pagination.js';
import { adminErrors, NoQuery, adminSecurity as security } from '../http/schemas.js';
import {
  GroupCreateBody,
  GroupListQuery,
  GroupListSchema,
  GroupMemberParams,
  GroupMembersQuery,
  GroupMembersSchema,
  GroupParams,
  GroupPatchBody,
  GroupSchema,
} from './schemas.js';
import { addMember, createGroup, deleteGroup, getGroup, listGroups, listMembers, removeMember, updateGroup } from './service.js';

const tags = ['groups'];

const groupRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;

  app.get(
    '/groups',
    {
      schema: {
        tags, security, summary: 'List directory groups (q: id prefix; keyset pagination)',
        querystring: GroupListQuery, response: { 200: GroupListSchema, ...adminErrors },
      },
    },
    async (request) => listGroups(ctx, request.query, request.query.limit ?? DEFAULT_LIMIT),
  );

  app.post(
    '/groups',
    {
      schema: {
        tags, security, summary: 'Create a directory group (at most 1,000)',
        querystring: NoQuery, body: GroupCreateBody, response: { 201: GroupSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const group = await createGroup(ctx, request.body, actorName(request.actor));
      return reply.status(201).header('location', `/api/admin/groups/${encodeURIComponent(group.id)}`).send(group);
    },
  );

  app.get(
    '/groups/:id',
    { schema: { tags, security, summary: 'Get a directory group', params: GroupParams, querystring: NoQuery, response: { 200: GroupSchema, ...adminErrors } } },
    async (request) => getGroup(ctx, request.params.id),
  );

  app.patch(
    '/groups/:id',
    {
      schema: {
        tags, security, summary: "Rename a directory group or change its description (its id stays)",
        params: GroupParams, querystring: NoQuery, body: GroupPatchBody, response: { 200: GroupSchema, ...adminErrors },
      },
    },
    async (request) => updateGroup(ctx, request.params.id, request.body, actorName(request.actor)),
  );

  app.delete(
    '/groups/:id',
    {
      schema: {
        tags, security, summary: 'Delete a directory group (409 group_in_use while an application setting names it)',
        params: GroupParams, querystring: NoQuery, response: { 204: Type.Null(), ...adminErrors },
      },
    },
    async (request, reply) => {
      await deleteGroup(ctx, request.params.id, actorName(request.actor));
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/groups/:id/members',
    {
      schema: {
        tags, security, summary: "A group's members (keyset pagination)",
        params: GroupParams, querystring: GroupMembersQuery, response: { 200: GroupMembersSchema, ...adminErrors },
      },
    },
    async (request) => listMembers(ctx, request.params.id, request.query.cursor, request.query.limit ?? DEFAULT_LIMIT),
  );

  app.put(
    '/groups/:id/members/:personId',
    {
      schema: {
        tags, security, summary: 'Put a person in a group (idempotent; a person is in at most 200 groups)',
        params: GroupMemberParams, querystring: NoQuery, response: { 204: Type.Null(), ...adminErrors },
      },
    },
    async (request, reply) => {
      await addMember(ctx, request.params.id, request.params.personId, actorName(request.actor));
      return reply.status(204).send(null);
    },
  );

  app.delete(
    '/groups/:id/members/:personId',
    {
      schema: {
        tags, security, summary: 'Take a person out of a group (idempotent)',
        params: GroupMemberParams, querystring: NoQuery, response: { 204: Type.Null(), ...adminErrors },
      },
    },
    async (request, reply) => {
      await removeMember(ctx, request.params.id, request.params.personId, actorName(request.actor));
      return reply.status(204).send(null);
    },
  );
};

export const groupsPlugin = adminFeature(groupRoutes);
