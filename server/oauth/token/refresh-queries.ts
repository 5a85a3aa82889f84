/**
 * Prepared statements for the refresh grant, the hottest path of the server: building a drizzle
 * query costs more than running it, so each is built once per database handle and reused.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import { applications, memberships, refreshTokenFamilies, refreshTokens } from '../../db/schema.js';
import type { Db } from '../../db/client.js';

function build(db: Db) {
  return {
    client: db.select().from(applications).where(eq(applications.id, sql.placeholder('id'))).prepare(),
    token: db
      .select({
        rotatedAt: refreshTokens.rotatedAt,
        expiresAt: refreshTokens.expiresAt,
        family: refreshTokenFamilies,
        membership: { id: memberships.id, status: memberships.status, role: memberships.role, lastActiveAt: memberships.lastActiveAt },
      })
      .from(refreshTokens)
      .innerJoin(refreshTokenFamilies, eq(refreshTokenFamilies.id, refreshTokens.familyId))
      .leftJoin(memberships, eq(memberships.id, refreshTokenFamilies.membershipId))
      .where(eq(refreshTokens.tokenHash, sql.placeholder('hash')))
      .prepare(),
    rotate: db
      .update(refreshTokens)
      .set({ rotatedAt: sql`${sql.placeholder('nowMs')}` }) // raw SQL: pass milliseconds
      .where(and(eq(refreshTokens.tokenHash, sql.placeholder('hash')), isNull(refreshTokens.rotatedAt)))
      .prepare(),
    touchMember: db
      .update(memberships)
      .set({ lastActiveAt: sql`${sql.placeholder('nowMs')}` }) // raw SQL: pass milliseconds
      .where(eq(memberships.id, sql.placeholder('id')))
      .prepare(),
    insert: db
      .insert(refreshTokens)
      .values({
        tokenHash: sql.placeholder('hash'),
        familyId: sql.placeholder('familyId'),
        createdAt: sql.placeholder('now'),
        expiresAt: sql.placeholder('expiresAt'),
      })
      .prepare(),
  };
}

/** `lastActiveAt` is written at most this often by token grants, so most refreshes stay 3 statements. */
export const LAST_ACTIVE_RESOLUTION_MS = 3600_000;

const cache = new WeakMap<Db, ReturnType<typeof build>>();

export function refreshQueries(db: Db): ReturnType<typeof build> {
  let queries = cache.get(db);
  if (!queries) {
    queries = build(db);
    cache.set(db, queries);
  }
  return queries;
}
