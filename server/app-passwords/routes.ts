/**
 * `/api/me/app-passwords` (spec ldap.md): list, make (shown once) and revoke your app passwords.
 * Registered inside the self-service scope (plugin-api/registries.ts `meRoutes`; self-service/routes.ts:
 * session cookie, the JSON CSRF rule, `no-store`). Routes parse and answer; service.ts decides.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { NoQuery, problemRef } from '../http/schemas.js';
import type { SignedInPerson } from '../plugin-api/registries.js';
import { AppPasswordCreateBody, AppPasswordCreatedSchema, AppPasswordParams, AppPasswordsResponse } from './schemas.js';
import { createAppPassword, listAppPasswords, revokeAppPassword } from './service.js';

const tags = ['self-service'];
const errors = { 400: problemRef, 401: problemRef, 403: problemRef, 404: problemRef, 409: problemRef, 415: problemRef, 429: problemRef };

export function registerAppPasswordRoutes(app: FastifyInstance, meOf: (request: FastifyRequest) => SignedInPerson) {
  const { ctx } = app;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get(
    '/app-passwords',
    { schema: { tags, summary: 'Your app passwords (for LDAP and HTTP Basic sign-ins), with when each was last used', querystring: NoQuery, response: { 200: AppPasswordsResponse, ...errors } } },
    async (request) => ({ appPasswords: await listAppPasswords(ctx, meOf(request)) }),
  );

  r.post(
    '/app-passwords',
    {
      schema: {
        tags,
        summary: 'Make an app password for an application with LDAP on, or HTTP Basic on its protected hosts (needs a sign-in within 10 minutes); the password is shown only in this answer',
        querystring: NoQuery, body: AppPasswordCreateBody, response: { 201: AppPasswordCreatedSchema, ...errors },
      },
    },
    async (request, reply) => {
      const created = await createAppPassword(ctx, meOf(request), request.body);
      return reply.status(201).header('location', `/api/me/app-passwords/${created.id}`).send(created);
    },
  );

  r.delete(
    '/app-passwords/:id',
    { schema: { tags, summary: 'Revoke an app password (it stops working at once)', params: AppPasswordParams, querystring: NoQuery, response: { 204: Type.Null(), ...errors } } },
    async (request, reply) => {
      await revokeAppPassword(ctx, meOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
