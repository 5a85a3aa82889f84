/**
 * People management under `/api/admin` (spec administrators-and-people.md, "People"; issue 33):
 * create, enable/disable, delete, the password-reset e-mail (or a link to hand over), the live sessions and signing out
 * everywhere. Owners and people managers (admin-policy.ts); a person whose administrator role ranks
 * above the caller's is changed, deleted and signed out only by someone at or above it
 * (admin-auth.ts `requireMayActOn`). Routes parse and answer; manage.ts decides.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorName, requireMayActOn } from '../http/admin-auth.js';
import { adminErrors, NoQuery, adminSecurity as security } from '../http/schemas.js';
import { getPerson } from './queries.js';
import { createPerson, deletePerson, makePasswordResetLink, personSessions, sendPasswordReset, signOutEverywhere } from './manage.js';
import { updatePerson } from './service.js';
import { PersonCreateSchema, PersonParams, PersonPatchSchema, PersonSchema, PersonSessionsSchema } from './schemas.js';

const tags = ['people'];

export const peopleManagementRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  app.post(
    '/people',
    {
      schema: {
        tags, security, summary: 'Create a person: an e-mail to choose a password (sendInvitation), or the password set directly under the policy',
        querystring: NoQuery, body: PersonCreateSchema, response: { 201: PersonSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const person = await createPerson(ctx, request.body, actorName(request.actor), request.log);
      ctx.wakeWebhooks();
      return reply.status(201).header('location', `/api/admin/people/${encodeURIComponent(person.id)}`).send(await getPerson(ctx.db, person.id));
    },
  );
  app.patch(
    '/people/:id',
    {
      schema: {
        tags, security,
        summary: "Change a person: status (disabling ends their sessions everywhere, with back-channel logout), username (409 username_taken), names, emailVerified",
        params: PersonParams, querystring: NoQuery, body: PersonPatchSchema, response: { 200: PersonSchema, ...adminErrors },
      },
    },
    async (request) => {
      // Only an owner (or the admin token) changes an owner (issue 49, H5).
      await requireMayActOn(ctx, request.actor, request.params.id, 'change them');
      await updatePerson(ctx, request.params.id, request.body, actorName(request.actor));
      return getPerson(ctx.db, request.params.id);
    },
  );
  app.delete(
    '/people/:id',
    {
      schema: {
        tags, security, summary: 'Delete a person everywhere (a resumable purge; webhook person.deleted; audited)',
        params: PersonParams, querystring: NoQuery, response: { 204: Type.Null(), ...adminErrors },
      },
    },
    async (request, reply) => {
      await requireMayActOn(ctx, request.actor, request.params.id, 'delete them');
      await deletePerson(ctx, request.params.id, actorName(request.actor));
      return reply.status(204).send(null);
    },
  );
  app.post(
    '/people/:id/password-reset',
    {
      schema: {
        tags, security, summary: 'Send the person the password-reset e-mail (at most one a minute)',
        params: PersonParams, querystring: NoQuery, response: { 202: Type.Object({ sent: Type.Boolean() }, { additionalProperties: false }), ...adminErrors },
      },
    },
    async (request, reply) => {
      await sendPasswordReset(ctx, request.params.id, actorName(request.actor), request.log);
      return reply.status(202).send({ sent: true });
    },
  );
  app.post(
    '/people/:id/password-reset-link',
    {
      schema: {
        tags, security,
        summary: 'Make a password-reset link to hand over yourself (no mail server, or the e-mail went missing): single use, one hour; replaces an earlier link; audited',
        params: PersonParams, querystring: NoQuery,
        response: {
          201: Type.Object(
            { url: Type.String({ description: 'the /reset-password link; shown once' }), expiresAt: Type.String({ format: 'date-time' }) },
            { additionalProperties: false },
          ),
          ...adminErrors,
        },
      },
    },
    async (request, reply) => {
      // The link sets their password: only someone at or above their administrator role makes one.
      await requireMayActOn(ctx, request.actor, request.params.id, 'make a password-reset link for them');
      const link = await makePasswordResetLink(ctx, request.params.id, actorName(request.actor));
      return reply.status(201).header('cache-control', 'no-store').send(link);
    },
  );
  app.get(
    '/people/:id/sessions',
    { schema: { tags, security, summary: "The person's live sessions, newest first", params: PersonParams, querystring: NoQuery, response: { 200: PersonSessionsSchema, ...adminErrors } } },
    async (request) => personSessions(ctx, request.params.id),
  );
  app.post(
    '/people/:id/sign-out',
    {
      schema: {
        tags, security, summary: 'End all of the person\'s sessions (back-channel logout included)',
        params: PersonParams, querystring: NoQuery, response: { 200: Type.Object({ sessionsEnded: Type.Integer() }, { additionalProperties: false }), ...adminErrors },
      },
    },
    async (request) => {
      // Ending an administrator's sessions everywhere is for those at or above their role (issue 49, H3).
      await requireMayActOn(ctx, request.actor, request.params.id, 'sign them out everywhere');
      return signOutEverywhere(ctx, request.params.id, actorName(request.actor));
    },
  );
};
