/**
 * `GET /healthz` and `GET /readyz` for load balancers and supervisors (issue 26).
 *
 * - `/healthz`: the process answers and its database answers a trivial query (SQLite file or
 *   PostgreSQL pool) within HEALTH_TIMEOUT_MS; 503 with `database: "unreachable"` otherwise.
 * - `/readyz`: whether this instance should get traffic: 503 `not_ready` while the database is
 *   unreachable. While the server is stopping, Fastify itself answers 503 to every request
 *   (`return503OnClosing`), so a load balancer drains it before its connections close.
 */
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { sqlRows } from '../db/store.js';

/**
 * A database that has not answered in this long counts as unreachable: a load balancer's check
 * must not hang for the client's connect timeout (PostgreSQL behind a dead network path).
 */
export const HEALTH_TIMEOUT_MS = 2_000;

async function databaseReachable(app: FastifyInstance): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS);
  });
  const check = sqlRows(app.ctx.db, sql`SELECT 1`).then(() => true, () => false);
  try {
    return await Promise.race([check, late]);
  } finally {
    clearTimeout(timer);
  }
}

export function registerHealthRoutes(app: FastifyInstance): void {
  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
    if (await databaseReachable(app)) return { status: 'ok', database: 'reachable' };
    return reply.status(503).send({ status: 'unavailable', database: 'unreachable' });
  });

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    if (await databaseReachable(app)) return { status: 'ready' };
    return reply.status(503).header('cache-control', 'no-store').send({ status: 'not_ready', reason: 'database_unreachable' });
  });
}
