/**
 * Network certificates on the wire (spec radius.md, "EAP-TLS"):
 * - `/api/me/network-certificates`: list yours, issue one (`{ applicationId, name, ssid? }` → 201
 *   with the PKCS#12, its one-time password and the Apple profile, shown once; after a sign-in
 *   within 10 minutes), revoke one (204). Inside the self-service scope (session cookie, the JSON
 *   CSRF rule, `no-store`).
 * - `/api/admin/people/:id/network-certificates`: the same for an administrator who may manage
 *   people (the admin guard's table, plugin.ts).
 * Routes parse and answer; certificates.ts decides.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireRecentSignIn } from '../accounts/session.js';
import { actorName } from '../http/admin-auth.js';
import { notFound } from '../http/problem.js';
import { adminErrors, adminSecurity as security, iso, NoQuery, problemRef } from '../http/schemas.js';
import type { AppContext } from '../context.js';
import type { SignedInPerson } from '../plugin-api/registries.js';
import { findPersonRow } from '../people/queries.js';
import { issueCertificate, listCertificates, revokeNetworkCertificate } from './certificates.js';
import { sessionsOf } from './queries.js';
import { RADIUS_KEEP_MS } from '../data-lifecycle/retention-rules.js';

const CertificateSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    applicationId: Type.String(),
    applicationName: Type.String(),
    serial: Type.String({ description: 'hex serial number' }),
    fingerprint: Type.String({ description: 'SHA-256 of the certificate, hex' }),
    notAfter: Type.String({ format: 'date-time' }),
    createdAt: Type.String({ format: 'date-time' }),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { additionalProperties: false },
);
const IssuedSchema = Type.Object(
  {
    ...CertificateSchema.properties,
    password: Type.String({ description: 'the PKCS#12 file\'s one-time password, shown only in this answer' }),
    pkcs12: Type.String({ description: 'the key, the certificate and the CA as PKCS#12 (base64), only in this answer' }),
    mobileconfig: Type.String({ description: 'an Apple configuration profile with the CA, the PKCS#12 and the Wi-Fi network (base64), only in this answer' }),
  },
  { additionalProperties: false },
);
const ListSchema = Type.Object({ networkCertificates: Type.Array(CertificateSchema) }, { additionalProperties: false });
export const IssueBody = Type.Object(
  {
    applicationId: Type.String({ minLength: 1, maxLength: 128 }),
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]+$', description: 'which device it is for' }),
    ssid: Type.Optional(Type.String({ minLength: 1, maxLength: 32, pattern: '^[^\\u0000-\\u001f\\u007f]+$', description: 'the Wi-Fi network in the Apple profile (default: the application\'s name)' })),
  },
  { additionalProperties: false },
);
const SessionSchema = Type.Object(
  {
    id: Type.String(),
    applicationId: Type.String(),
    applicationName: Type.String(),
    client: Type.String({ description: 'the RADIUS client (network gear) that reported it' }),
    callingStationId: Type.Union([Type.String(), Type.Null()], { description: 'the device (its MAC address on Wi-Fi)' }),
    startedAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time', description: 'its last accounting report' }),
    stoppedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    inputOctets: Type.Integer(),
    outputOctets: Type.Integer(),
    sessionSeconds: Type.Integer(),
  },
  { additionalProperties: false },
);
const SessionsSchema = Type.Object({ radiusSessions: Type.Array(SessionSchema) }, { additionalProperties: false });

const CertParams = Type.Object({ id: Type.String({ maxLength: 200 }) }, { additionalProperties: false });
const PersonCertParams = Type.Object({ id: Type.String({ maxLength: 200 }), certificateId: Type.String({ maxLength: 200 }) }, { additionalProperties: false });

const tags = ['self-service'];
const errors = { 400: problemRef, 401: problemRef, 403: problemRef, 404: problemRef, 409: problemRef, 415: problemRef, 429: problemRef };

export function registerMeRoutes(app: FastifyInstance, meOf: (request: FastifyRequest) => SignedInPerson) {
  const { ctx } = app;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.get(
    '/network-certificates',
    { schema: { tags, summary: 'Your network certificates (EAP-TLS for Wi-Fi and VPN), revoked ones included', querystring: NoQuery, response: { 200: ListSchema, ...errors } } },
    async (request) => ({ networkCertificates: await listCertificates(ctx, meOf(request).person.id) }),
  );
  r.post(
    '/network-certificates',
    {
      schema: {
        tags, summary: 'Issue a network certificate for an application with RADIUS (needs a sign-in within 10 minutes); the PKCS#12, its password and the Apple profile are shown only in this answer',
        querystring: NoQuery, body: IssueBody, response: { 201: IssuedSchema, ...errors },
      },
    },
    async (request, reply) => {
      const me = meOf(request);
      await requireRecentSignIn(ctx, me.session.id);
      const issued = await issueCertificate(ctx, me.person, request.body, `person:${me.person.id}`);
      return reply.status(201).header('location', `/api/me/network-certificates/${issued.id}`).send(issued);
    },
  );
  r.delete(
    '/network-certificates/:id',
    { schema: { tags, summary: 'Revoke a network certificate (refused from the next authentication on)', params: CertParams, querystring: NoQuery, response: { 204: Type.Null(), ...errors } } },
    async (request, reply) => {
      const me = meOf(request);
      await revokeNetworkCertificate(ctx, me.person.id, request.params.id, `person:${me.person.id}`);
      return reply.status(204).send(null);
    },
  );
}

async function personOr404(app: FastifyInstance, id: string) {
  const person = await findPersonRow(app.ctx.db, id);
  if (!person) throw notFound('person_not_found', `No person "${id}".`);
  return person;
}

export const adminCertificateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const admin = { tags: ['people'], security };
  app.get(
    '/people/:id/network-certificates',
    { schema: { ...admin, summary: 'A person\'s network certificates (EAP-TLS)', params: CertParams, querystring: NoQuery, response: { 200: ListSchema, ...adminErrors } } },
    async (request) => {
      const person = await personOr404(app, request.params.id);
      return { networkCertificates: await listCertificates(app.ctx, person.id) };
    },
  );
  app.get(
    '/people/:id/radius-sessions',
    { schema: { ...admin, summary: 'A person\'s RADIUS sessions (Wi-Fi, VPN) of the last 30 days, newest first (at most 100)', params: CertParams, querystring: NoQuery, response: { 200: SessionsSchema, ...adminErrors } } },
    async (request) => {
      const person = await personOr404(app, request.params.id);
      return { radiusSessions: await listSessions(app.ctx, person.id) };
    },
  );
  app.post(
    '/people/:id/network-certificates',
    {
      schema: {
        ...admin, summary: 'Issue a network certificate for a person (the PKCS#12, its password and the Apple profile are shown only in this answer)',
        params: CertParams, querystring: NoQuery, body: IssueBody, response: { 201: IssuedSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const person = await personOr404(app, request.params.id);
      const issued = await issueCertificate(app.ctx, person, request.body, actorName(request.actor));
      return reply.status(201).send(issued);
    },
  );
  app.delete(
    '/people/:id/network-certificates/:certificateId',
    { schema: { ...admin, summary: 'Revoke a person\'s network certificate', params: PersonCertParams, querystring: NoQuery, response: { 204: Type.Null(), ...adminErrors } } },
    async (request, reply) => {
      await revokeNetworkCertificate(app.ctx, request.params.id, request.params.certificateId, actorName(request.actor));
      return reply.status(204).send(null);
    },
  );
};

/** A person's sessions of the last 30 days (the retention rule removes older ones), newest first. */
async function listSessions(ctx: AppContext, personId: string) {
  const since = new Date(ctx.clock.now().getTime() - RADIUS_KEEP_MS);
  return (await sessionsOf(ctx.db, personId, since, 100)).map(({ session, applicationName }) => ({
    id: session.id,
    applicationId: session.applicationId,
    applicationName,
    client: session.clientName,
    callingStationId: session.callingStationId,
    startedAt: iso(session.startedAt)!,
    updatedAt: iso(session.updatedAt)!,
    stoppedAt: iso(session.stoppedAt),
    inputOctets: session.inputOctets,
    outputOctets: session.outputOctets,
    sessionSeconds: session.sessionSeconds,
  }));
}
