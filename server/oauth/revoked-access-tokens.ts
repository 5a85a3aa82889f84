/**
 * Revoked access tokens (RFC 7009 §2.2.1). Our access tokens are self-contained JWTs, so a revoked
 * one would keep working at userinfo until it expires, while `/revoke` told the client it was
 * gone. Its `jti` is recorded here until the token's own `exp`; userinfo (and introspection) ask
 * `isAccessTokenRevoked`. Back ends that verify tokens locally cannot see this list: they rely on
 * the short lifetime (`GATEHOUSE_ACCESS_TOKEN_TTL`), which the README says.
 *
 * Retention: a row is worthless once its token has expired; the sweeper deletes those by the
 * `expires_at` index (data-lifecycle/retention-rules.ts, "revoked access tokens").
 */
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { revokedAccessTokens } from '../db/schema.js';
import { exec, one } from '../db/store.js';

const statements = preparedPerDb((db) => {
  const t = revokedAccessTokens;
  const p = sql.placeholder;
  return {
    // Placeholders in `where` are bound as given: `nowMs` is epoch milliseconds, as stored.
    isRevoked: db.select({ jti: t.jti }).from(t).where(eq(t.jti, p('jti'))).prepare(),
    insert: db
      .insert(t)
      .values({ jti: p('jti'), expiresAt: p('expiresAt'), revokedAt: p('revokedAt') })
      .onConflictDoNothing()
      .prepare(),
  };
});

/** Whether the access token with this `jti` was revoked (and has not expired since). */
export async function isAccessTokenRevoked(db: Db, jti: string): Promise<boolean> {
  return await one(statements(db).isRevoked, { jti }) !== undefined;
}

/** Records a revoked access token until `expiresAt` (its `exp`); revoking twice is harmless. */
export async function recordRevokedAccessToken(db: Db, jti: string, expiresAt: Date, now: Date): Promise<void> {
  await exec(statements(db).insert, { jti, expiresAt, revokedAt: now });
}

