/**
 * Admin API for application users (spec §4.2, DESIGN §4.5). Routes parse and answer;
 * `service.ts` decides. Registered under `/api/admin` behind `requireAdmin`.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorName, requireActorScope, requireMayActOn } from '../http/admin-auth.js';
import { DEFAULT_LIMIT } from '../http/pagination.js';
import { adminErrors, NoQuery, IdParams, adminSecurity as security } from '../http/schemas.js';
import { adminFeature } from '../http/admin-feature.js';
import { MemberDetailSchema, MemberListQuerySchema, MemberListSchema, MemberParams, MemberPatchSchema, MemberRecordSchema } from './schemas.js';
import { deleteMember, getMember, listMembers, resetMemberSecondFactor, updateMember } from './service.js';

const tags = ['users'];

export const memberRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;

  app.get(
    '/applications/:id/users',
    {
      schema: {
        tags, security, summary: 'List application users (filters status, role, q; keyset pagination by join time)',
        params: IdParams, querystring: MemberListQuerySchema,
        response: { 200: MemberListSchema, ...adminErrors },
      },
    },
    async (request) => listMembers(ctx, request.params.id, request.query, request.query.limit ?? DEFAULT_LIMIT),
  );

  app.get(
    '/applications/:id/users/:uid',
    {
      schema: {
        tags, security, summary: 'Get an application user, with a summary of their second factors',
        params: MemberParams, querystring: NoQuery, response: { 200: MemberDetailSchema, ...adminErrors },
      },
    },
    async (request) => getMember(ctx, request.params.id, request.params.uid),
  );

  app.patch(
    '/applications/:id/users/:uid',
    {
      schema: {
        tags, security, summary: 'Change status, role or profile (suspending revokes refresh tokens)',
        params: MemberParams, querystring: NoQuery, body: MemberPatchSchema,
        response: { 200: MemberRecordSchema, ...adminErrors },
      },
    },
    async (request) => updateMember(ctx, request.params.id, request.params.uid, request.body, actorName(request.actor)),
  );

  app.delete(
    '/applications/:id/users/:uid',
    { schema: { tags, security, summary: 'Remove a user from the application (revokes refresh tokens)', params: MemberParams, querystring: NoQuery, response: { 204: Type.Null(), ...adminErrors } } },
    async (request, reply) => {
      await deleteMember(ctx, request.params.id, request.params.uid, actorName(request.actor));
      return reply.status(204).send(null);
    },
  );
};

export const memberSecondFactorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  app.delete(
    '/applications/:id/users/:uid/second-factor',
    {
      schema: {
        tags, security,
        summary: "Reset a member's second factors for a lost device: removes their TOTP, passkeys and recovery codes and ends all their sessions (audited)",
        params: MemberParams, querystring: NoQuery, response: { 204: Type.Null(), ...adminErrors },
      },
    },
    async (request, reply) => {
      // The factors are the person's, across every application: an application's API key may not remove them.
      requireActorScope(request.actor, undefined, "reset a member's second factors");
      // Owners are members of every application: an app manager (or a people manager) may not
      // reset the factors of someone whose administrator role is above theirs (issue 49, H3).
      await resetMemberSecondFactor(ctx, request.params.id, request.params.uid, actorName(request.actor), (personId) =>
        requireMayActOn(ctx, request.actor, personId, "reset their second factors"));
      return reply.status(204).send(null);
    },
  );
};

export const membersPlugin = adminFeature(async (app) => {
  await app.register(memberRoutes);
  await app.register(memberSecondFactorRoutes);
});
