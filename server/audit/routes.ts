/**
 * `GET /api/admin/audit-log` (issue 4): the append-only log of admin writes and security events,
 * newest first, filtered by `applicationId`, `action` and `actor`, with keyset pagination over
 * `(at, id)` descending. Admin token only: it is outside every application's path, so API keys
 * get 403 `insufficient_scope`.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { and, desc, eq, lt, or, type SQL } from 'drizzle-orm';
import { Type, type Static } from 'typebox';
import { auditLog, type AuditLogEntry } from '../db/schema.js';
import type { AppContext } from '../context.js';
import { adminFeature } from '../http/admin-feature.js';
import { DEFAULT_LIMIT, decodeCursor, listQueryProperties, toPage } from '../http/pagination.js';
import { adminErrors, Timestamp, iso } from '../http/schemas.js';

const AuditQuerySchema = Type.Object(
  {
    ...listQueryProperties,
    applicationId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    actor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
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
});

const AuditListSchema = Type.Object({
  entries: Type.Array(AuditEntrySchema),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

function entryRecord(e: AuditLogEntry) {
  return { id: e.id, at: iso(e.at)!, actor: e.actor, action: e.action, applicationId: e.applicationId, target: e.target, details: e.details };
}

/** `(at, id) < cursor`: the newest-first counterpart of `afterCursor`. */
function beforeCursor(cursor?: string): SQL | undefined {
  if (!cursor) return undefined;
  const key = decodeCursor(cursor);
  const at = new Date(key.t);
  return or(lt(auditLog.at, at), and(eq(auditLog.at, at), lt(auditLog.id, key.id)));
}

export function listAudit(ctx: AppContext, query: AuditQuery) {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const rows = ctx.db
    .select()
    .from(auditLog)
    .where(
      and(
        query.applicationId ? eq(auditLog.applicationId, query.applicationId) : undefined,
        query.action ? eq(auditLog.action, query.action) : undefined,
        query.actor ? eq(auditLog.actor, query.actor) : undefined,
        beforeCursor(query.cursor),
      ),
    )
    .orderBy(desc(auditLog.at), desc(auditLog.id))
    .limit(limit + 1)
    .all();
  const page = toPage(rows, limit, (r) => ({ t: r.at.getTime(), id: r.id }));
  return { entries: page.items.map(entryRecord), nextCursor: page.nextCursor };
}

export const auditRoutes: FastifyPluginAsyncTypebox = async (app) => {
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
