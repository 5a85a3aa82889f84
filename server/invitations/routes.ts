/**
 * Admin API for invitations (spec §4.2, DESIGN §4.6). Routes parse and answer; `service.ts`
 * decides. Registered under `/api/admin` behind `requireAdmin`.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { FeatureOptions } from '../context.js';
import { invitationAcceptRoutes } from './accept-routes.js';
import { invitePagePlugin } from '../pages/invite-page.js';
import { actorName, requirePeopleManager } from '../http/admin-auth.js';
import { adminFeature } from '../http/admin-feature.js';
import { DEFAULT_LIMIT } from '../http/pagination.js';
import { adminErrors, NoQuery, IdParams, adminSecurity as security } from '../http/schemas.js';
import {
  InvitationCreatedSchema,
  InvitationCreateSchema,
  InvitationListQuerySchema,
  InvitationListSchema,
  InvitationParams,
  InvitationWithLinkSchema,
} from './schemas.js';
import { createInvitations, listInvitations, resendInvitation, revokeInvitation } from './service.js';

const tags = ['invitations'];

export const invitationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;

  app.post(
    '/applications/:id/invitations',
    {
      schema: {
        tags, security, summary: 'Invite e-mail addresses (links shown once; e-mailed when SMTP is configured)',
        params: IdParams, querystring: NoQuery, body: InvitationCreateSchema,
        response: { 201: InvitationCreatedSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      // Directory groups reach beyond this application (other apps' claims): not an API key's or
      // an application manager's to give.
      if (request.body.groups?.length) requirePeopleManager(request.actor, 'put invited people in directory groups');
      const result = await createInvitations(ctx, request.params.id, request.body, actorName(request.actor));
      return reply
        .status(201)
        .header('location', `/api/admin/applications/${encodeURIComponent(request.params.id)}/invitations`)
        .send(result);
    },
  );

  app.get(
    '/applications/:id/invitations',
    {
      schema: {
        tags, security, summary: 'List invitations (status: pending, accepted, revoked, expired)',
        params: IdParams, querystring: InvitationListQuerySchema,
        response: { 200: InvitationListSchema, ...adminErrors },
      },
    },
    async (request) => listInvitations(ctx, request.params.id, request.query, request.query.limit ?? DEFAULT_LIMIT),
  );

  app.delete(
    '/applications/:id/invitations/:iid',
    { schema: { tags, security, summary: 'Revoke a pending invitation', params: InvitationParams, querystring: NoQuery, response: { 204: Type.Null(), ...adminErrors } } },
    async (request, reply) => {
      await revokeInvitation(ctx, request.params.id, request.params.iid, actorName(request.actor));
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/applications/:id/invitations/:iid/resend',
    {
      schema: {
        tags, security, summary: 'Issue a new link with a new expiry and e-mail it again',
        params: InvitationParams, querystring: NoQuery,
        response: { 200: InvitationWithLinkSchema, ...adminErrors },
      },
    },
    async (request) => resendInvitation(ctx, request.params.id, request.params.iid, actorName(request.actor)),
  );
};

const adminInvitations = adminFeature(invitationRoutes);

/** Admin invitation routes, the JSON accept endpoint and the hosted invitation page. */
export const invitationsPlugin: FastifyPluginAsync<FeatureOptions> = async (app, options) => {
  await app.register(adminInvitations, options);
  await app.register(invitationAcceptRoutes);
  await app.register(invitePagePlugin);
};
