/**
 * Prepared statements for the refresh grant, the hottest path of the server: built once per
 * database handle (db/prepared.ts).
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import { memberships, refreshTokenFamilies, refreshTokens } from '../../db/schema.js';
import { touchMembership } from '../../members/create.js';
import type { Db } from '../../db/client.js';
import { preparedPerDb } from '../../db/prepared.js';
import { one, sqliteTransaction, transaction } from '../../db/store.js';

export interface Rotation {
  hash: string;
  successorHash: string;
  familyId: string;
  now: Date;
  expiresAt: Date;
  /** Membership to mark active, when its `lastActiveAt` is stale. */
  touchMembershipId: string | undefined;
}

function build(db: Db) {
  const statements = {
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
  /**
   * Marks the presented token rotated (only if it still is not: the race guard) and stores its
   * successor, in one native transaction built once. False when someone rotated it first.
   */
  const rotate = sqliteTransaction(db, (r: Rotation): boolean => {
    const result = statements.rotate.run({ hash: r.hash, nowMs: r.now.getTime() }) as unknown as { changes: number };
    if (result.changes !== 1) return false;
    statements.insert.run({ hash: r.successorHash, familyId: r.familyId, now: r.now, expiresAt: r.expiresAt });
    return true;
  });
  return {
    token: (hash: string) => one(statements.token, { hash }),
    /** The membership's hourly activity mark (rare) joins the rotation's transaction. */
    rotateToken: (r: Rotation): Promise<boolean> =>
      r.touchMembershipId === undefined
        ? rotate(r)
        : transaction(db, async () => (await rotate(r)) && (await touchMembership(db, r.touchMembershipId!, r.now), true)),
  };
}

export const refreshQueries = preparedPerDb(build);
