/**
 * Revoking refresh-token families: the one place that kills refresh tokens, used when a
 * membership is suspended or deleted, a session is signed out, a code is replayed, or a rotated
 * refresh token is reused. Access tokens are stateless and simply expire.
 */
import { and, eq, isNull, ne, or, type SQL } from 'drizzle-orm';
import { refreshTokenFamilies } from '../db/schema.js';
import type { Tx } from '../db/client.js';
import { exec } from '../db/store.js';

export type FamilyScope =
  | { familyId: string }
  | { applicationId: string; personId: string }
  | { sessionId: string }
  | { personId: string }
  /** Every family of the person except those born of one session (sign-out elsewhere, password change). */
  | { personId: string; exceptSessionId: string };

function scopeCondition(scope: FamilyScope): SQL | undefined {
  if ('familyId' in scope) return eq(refreshTokenFamilies.id, scope.familyId);
  if ('sessionId' in scope) return eq(refreshTokenFamilies.sessionId, scope.sessionId);
  if ('applicationId' in scope) {
    return and(eq(refreshTokenFamilies.applicationId, scope.applicationId), eq(refreshTokenFamilies.personId, scope.personId));
  }
  if ('exceptSessionId' in scope) {
    return and(
      eq(refreshTokenFamilies.personId, scope.personId),
      or(isNull(refreshTokenFamilies.sessionId), ne(refreshTokenFamilies.sessionId, scope.exceptSessionId)),
    );
  }
  return eq(refreshTokenFamilies.personId, scope.personId);
}

/** Marks every live family in `scope` revoked; returns how many were revoked. */
export async function revokeFamilies(tx: Tx, now: Date, scope: FamilyScope, reason: string): Promise<number> {
  const result = await exec(tx
    .update(refreshTokenFamilies)
    .set({ revokedAt: now, revokedReason: reason })
    .where(and(scopeCondition(scope), isNull(refreshTokenFamilies.revokedAt))));
  return result;
}
