/**
 * `GET /api/admin/audit-log` (issue 4): the append-only log of admin writes and security events,
 * newest first, filtered by `applicationId`, `action`, `actor` and a time range (`from`
 * inclusive, `to` exclusive), with keyset pagination over `(at, id)` descending. Each filter has
 * an index leading with it and ending in (at, id) (`audit_log_app_idx`, `_action_idx`,
 * `_actor_idx`; `audit_log_at_idx` for the range alone), so a page is one index range however
 * long the log. `references` names the people, applications, API keys and invitations the page
 * mentions (issue 25), looked up by primary key, so the panel shows names instead of ids. Admin
 * token only: it is outside every application's path, so API keys get 403 `insufficient_scope`.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { and, asc, desc, eq, gt, gte, lt, or, type SQL } from 'drizzle-orm';
import { Type, type Static } from 'typebox';
import { auditLog, type AuditLogEntry } from '../db/schema.js';
import type { AppContext } from '../context.js';
import { adminFeature } from '../http/admin-feature.js';
import { DEFAULT_LIMIT, decodeCursor, listQueryProperties, toPage } from '../http/pagination.js';
import { adminErrors, NoQuery, Timestamp, iso } from '../http/schemas.js';
import { validationFailed } from '../http/problem.js';
import { auditReferences } from './references.js';
import { many, one } from '../db/store.js';

function parseTime(value: string, field: string): Date {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw validationFailed([{ path: `querystring.${field}`, message: 'must be a date and time' }]);
  return at;
}

const AuditQuerySchema = Type.Object(
  {
    ...listQueryProperties,
    applicationId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    actor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'entries at or after this time' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'entries before this time' })),
  },
  { additionalProperties: false },
);
type AuditQuery = Static<typeof AuditQuerySchema>;

const AuditEntrySchema = Type.Object({
  id: Type.String(),
  at: Timestamp,
  actor: Type.String(),
  action: Type.String(),
  applicationId: Type.Union([Type.String(), Type.Null()]),
  target: Type.Union([Type.String(), Type.Null()]),
  details: Type.Record(Type.String(), Type.Unknown()),
  ip: Type.Union([Type.String(), Type.Null()], {
    description: 'the client address of the request that made the entry (the client a trusted proxy names under GATEHOUSE_TRUST_PROXY); null for background work and entries from before it was recorded',
  }),
});

const ReferenceSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('person'), Type.Literal('membership'), Type.Literal('application'), Type.Literal('api_key'), Type.Literal('invitation')]),
    /** E-mail (and name) of a person or member, an application's or API key's name, an invitation's address. */
    label: Type.String(),
    /** The person a person or membership is; the application a membership, key or invitation belongs to. */
    personId: Type.Optional(Type.String()),
    applicationId: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const AuditListSchema = Type.Object({
  entries: Type.Array(AuditEntrySchema),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
  references: Type.Record(Type.String(), ReferenceSchema, { description: 'names of the ids this page mentions (actors, applications, targets), by id' }),
});

function entryRecord(e: AuditLogEntry) {
  return { id: e.id, at: iso(e.at)!, actor: e.actor, action: e.action, applicationId: e.applicationId, target: e.target, details: e.details, ip: e.ip };
}

/** `(at, id) < cursor`: the newest-first counterpart of `afterCursor`. */
function beforeCursor(cursor?: string): SQL | undefined {
  if (!cursor) return undefined;
  const key = decodeCursor(cursor);
  const at = new Date(key.t);
  return or(lt(auditLog.at, at), and(eq(auditLog.at, at), lt(auditLog.id, key.id)));
}

export async function listAudit(ctx: AppContext, query: AuditQuery) {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const rows = await many(ctx.db
    .select()
    .from(auditLog)
    .where(
      and(
        query.applicationId ? eq(auditLog.applicationId, query.applicationId) : undefined,
        query.action ? eq(auditLog.action, query.action) : undefined,
        query.actor ? eq(auditLog.actor, query.actor) : undefined,
        query.from ? gte(auditLog.at, parseTime(query.from, 'from')) : undefined,
        query.to ? lt(auditLog.at, parseTime(query.to, 'to')) : undefined,
        beforeCursor(query.cursor),
      ),
    )
    .orderBy(desc(auditLog.at), desc(auditLog.id))
    .limit(limit + 1));
  const page = toPage(rows, limit, (r) => ({ t: r.at.getTime(), id: r.id }));
  return { entries: page.items.map(entryRecord), nextCursor: page.nextCursor, references: await auditReferences(ctx.db, page.items) };
}

/** Bounds the walk below; the code knows a few dozen actions. */
const MAX_ACTIONS = 500;

/**
 * The actions the log holds, in order, for the panel's "Action" list: a walk over
 * `audit_log_action_idx` that seeks to the next action each step (one index seek per distinct
 * action, however many entries each has), where `SELECT DISTINCT` would read the whole index.
 */
export async function auditActions(ctx: AppContext): Promise<string[]> {
  const actions: string[] = [];
  let after: string | undefined;
  while (actions.length < MAX_ACTIONS) {
    const row = await one(ctx.db
      .select({ action: auditLog.action })
      .from(auditLog)
      .where(after === undefined ? undefined : gt(auditLog.action, after))
      .orderBy(asc(auditLog.action))
      .limit(1));
    if (!row) break;
    actions.push(row.action);
    after = row.action;
  }
  return actions;
}

export const auditRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/audit-log/actions',
    {
      schema: {
        tags: ['audit'], security: [{ adminToken: [] }],
        summary: 'The actions the audit log holds, in alphabetical order (for a filter list)',
        querystring: NoQuery,
        response: { 200: Type.Object({ actions: Type.Array(Type.String()) }, { additionalProperties: false }), ...adminErrors },
      },
    },
    async () => ({ actions: await auditActions(app.ctx) }),
  );

  app.get(
    '/audit-log',
    {
      schema: {
        tags: ['audit'], security: [{ adminToken: [] }],
        summary: 'Audit log, newest first (filters applicationId, action, actor; cursor pagination)',
        querystring: AuditQuerySchema,
        response: { 200: AuditListSchema, ...adminErrors },
      },
    },
    async (request) => listAudit(app.ctx, request.query),
  );
};

export const auditPlugin = adminFeature(auditRoutes);
