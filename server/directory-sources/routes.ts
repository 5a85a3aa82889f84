/**
 * The admin API of directory sources (spec directory-sources.md): `/api/admin/directory-sources`
 * and its test, sync and run endpoints, and `POST /api/admin/people/:id/directory-link`. Owner or
 * admin token (admin-policy.ts: unlisted routes are the owner's). Routes parse and answer;
 * service.ts, sync.ts, test-source.ts and link.ts decide.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorName } from '../http/admin-auth.js';
import { DEFAULT_LIMIT, decodeCursor, encodeCursor, listQueryProperties } from '../http/pagination.js';
import { adminErrors, NoQuery, adminSecurity as security } from '../http/schemas.js';
import { notFound } from '../http/problem.js';
import { getPerson } from '../people/queries.js';
import { PersonParams, PersonSchema } from '../people/schemas.js';
import {
  LinkBodySchema,
  RunListSchema,
  RunParams,
  RunSchema,
  SourceCreateSchema,
  SourceListSchema,
  SourceParams,
  SourcePatchSchema,
  SourceSchema,
  SyncAnswerSchema,
  SyncBodySchema,
  TestBodySchema,
  TestResultSchema,
} from './schemas.js';
import { createSource, deleteSource, listSources, sourceRecord, updateSource } from './service.js';
import { sourceOrNotFound } from './sources.js';
import { runRecord } from './runs.js';
import { findRun, listRunRows } from './queries.js';

/** The sync engine, the source test and the link (engine.ts), loaded on first use (issue 45, decision 0369). */
const engine = () => import('./engine.js');

const tags = ['directory sources'];
const ListQuery = Type.Object(listQueryProperties, { additionalProperties: false });

export const directorySourceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;

  app.get(
    '/directory-sources',
    { schema: { tags, security, summary: 'List directory sources (LDAP and Active Directory)', querystring: ListQuery, response: { 200: SourceListSchema, ...adminErrors } } },
    async (request) => listSources(ctx, request.query.cursor, request.query.limit ?? DEFAULT_LIMIT),
  );
  app.post(
    '/directory-sources',
    {
      schema: {
        tags, security, summary: 'Connect a directory source (at most ten); the bind password is sealed and never answered',
        querystring: NoQuery, body: SourceCreateSchema, response: { 201: SourceSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const source = await createSource(ctx, request.body, actorName(request.actor));
      return reply.status(201).header('location', `/api/admin/directory-sources/${encodeURIComponent(source.id)}`).send(await sourceRecord(ctx, source));
    },
  );
  app.get(
    '/directory-sources/:id',
    { schema: { tags, security, summary: 'A directory source, its status and last run', params: SourceParams, querystring: NoQuery, response: { 200: SourceSchema, ...adminErrors } } },
    async (request) => sourceRecord(ctx, await sourceOrNotFound(ctx, request.params.id)),
  );
  app.patch(
    '/directory-sources/:id',
    {
      schema: {
        tags, security, summary: 'Change a directory source (bindPassword: a new one, or null for none)',
        params: SourceParams, querystring: NoQuery, body: SourcePatchSchema, response: { 200: SourceSchema, ...adminErrors },
      },
    },
    async (request) => sourceRecord(ctx, await updateSource(ctx, request.params.id, request.body, actorName(request.actor))),
  );
  app.delete(
    '/directory-sources/:id',
    {
      schema: {
        tags, security, summary: 'Delete a directory source: its people are disabled (sessions ended) and kept as Gatehouse\'s own, its groups too',
        params: SourceParams, querystring: NoQuery, response: { 204: Type.Null(), ...adminErrors },
      },
    },
    async (request, reply) => {
      await deleteSource(ctx, request.params.id, actorName(request.actor));
      return reply.status(204).send(null);
    },
  );
  app.post(
    '/directory-sources/:id/test',
    {
      schema: {
        tags, security, summary: 'Test a source step by step: connect, TLS, bind, counts, mapped samples, and what a username finds (never a 5xx)',
        params: SourceParams, querystring: NoQuery, body: Type.Optional(TestBodySchema), response: { 200: TestResultSchema, ...adminErrors },
      },
    },
    async (request) => {
      const source = await sourceOrNotFound(ctx, request.params.id);
      return (await engine()).testSource(ctx, source, request.body?.username, actorName(request.actor));
    },
  );
  app.post(
    '/directory-sources/:id/sync',
    {
      schema: {
        tags, security, summary: 'Start a sync run (or answer the one running); full by default',
        params: SourceParams, querystring: NoQuery, body: Type.Optional(SyncBodySchema), response: { 202: SyncAnswerSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const source = await sourceOrNotFound(ctx, request.params.id);
      const run = await (await engine()).startRun(ctx, source, { full: request.body?.full ?? true, trigger: 'manual' });
      return reply.status(202).header('location', `/api/admin/directory-sources/${encodeURIComponent(source.id)}/runs/${run.id}`).send({ run: runRecord(run) });
    },
  );
  app.get(
    '/directory-sources/:id/runs',
    { schema: { tags, security, summary: "A source's sync runs, newest first", params: SourceParams, querystring: ListQuery, response: { 200: RunListSchema, ...adminErrors } } },
    async (request) => {
      await sourceOrNotFound(ctx, request.params.id);
      const limit = request.query.limit ?? DEFAULT_LIMIT;
      const rows = await listRunRows(ctx.db, request.params.id, request.query.cursor ? decodeCursor(request.query.cursor) : undefined, limit);
      const items = rows.slice(0, limit);
      const last = items[items.length - 1];
      return { runs: items.map(runRecord), nextCursor: rows.length > limit && last ? encodeCursor({ t: last.startedAt.getTime(), id: last.id }) : null };
    },
  );
  app.get(
    '/directory-sources/:id/runs/:runId',
    { schema: { tags, security, summary: 'One sync run: state, counts, conflicts and skipped entries', params: RunParams, querystring: NoQuery, response: { 200: RunSchema, ...adminErrors } } },
    async (request) => {
      await sourceOrNotFound(ctx, request.params.id);
      const run = await findRun(ctx.db, request.params.id, request.params.runId);
      if (!run) throw notFound('run_not_found', `There is no run "${request.params.runId}" of this source.`);
      return runRecord(run);
    },
  );
  app.post(
    '/people/:id/directory-link',
    {
      schema: {
        tags, security, summary: 'Link a person to the source entry with their e-mail or username (their own password is deleted)',
        params: PersonParams, querystring: NoQuery, body: LinkBodySchema, response: { 200: PersonSchema, ...adminErrors },
      },
    },
    async (request) => {
      await (await engine()).linkPerson(ctx, request.params.id, request.body.sourceId, actorName(request.actor));
      return getPerson(ctx.db, request.params.id);
    },
  );
};
