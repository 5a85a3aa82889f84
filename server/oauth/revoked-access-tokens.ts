/**
 * Revoked access tokens (RFC 7009 §2.2.1). Our access tokens are self-contained JWTs, so a revoked
 * one would keep working at userinfo until it expires, while `/revoke` told the client it was
 * gone. Its `jti` is recorded here until the token's own `exp`; userinfo (and introspection) ask
 * `isAccessTokenRevoked`. Back ends that verify tokens locally cannot see this list: they rely on
 * the short lifetime (`GATEHOUSE_ACCESS_TOKEN_TTL`), which the README says.
 *
 * Access tokens are rarely revoked, and a row only matters while its token is unexpired, so the
 * check usually needs no read (issue 27: userinfo ≤ 0.1 ms): per database handle the latest
 * `expires_at` on the list is read once and raised by every `recordRevokedAccessToken` (this
 * process's /revoke is the only writer: one process serves a data directory; the sweeper only
 * deletes expired rows, which lowers nothing that matters). The callers check a token's own expiry
 * first, and a row's `expires_at` is its token's `exp`; so while that latest expiry is past, no
 * unexpired token can be on the list.
 *
 * Retention: a row is worthless once its token has expired; the sweeper deletes those by the
 * `expires_at` index (data-lifecycle/retention-rules.ts, "revoked access tokens").
 */
import { eq, max, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { revokedAccessTokens } from '../db/schema.js';

const statements = preparedPerDb((db) => {
  const t = revokedAccessTokens;
  const p = sql.placeholder;
  return {
    isRevoked: db.select({ jti: t.jti }).from(t).where(eq(t.jti, p('jti'))).prepare(),
    latestExpiry: db.select({ at: max(t.expiresAt) }).from(t).prepare(),
    insert: db
      .insert(t)
      .values({ jti: p('jti'), expiresAt: p('expiresAt'), revokedAt: p('revokedAt') })
      .onConflictDoNothing()
      .prepare(),
  };
});

/** Epoch ms until which a listed token may still be live, per database handle (see above). */
const liveUntil = new WeakMap<Db, number>();

function latestExpiry(db: Db): number {
  let until = liveUntil.get(db);
  if (until === undefined) {
    until = statements(db).latestExpiry.get()?.at?.getTime() ?? 0;
    liveUntil.set(db, until);
  }
  return until;
}

/**
 * Whether the access token with this `jti` was revoked. For a token unexpired at `now` (the
 * callers check its expiry first): a read only while some listed token may still be live.
 */
export function isAccessTokenRevoked(db: Db, jti: string, now: Date): boolean {
  if (latestExpiry(db) <= now.getTime()) return false;
  return statements(db).isRevoked.get({ jti }) !== undefined;
}

/** Records a revoked access token until `expiresAt` (its `exp`); revoking twice is harmless. */
export function recordRevokedAccessToken(db: Db, jti: string, expiresAt: Date, now: Date): void {
  statements(db).insert.run({ jti, expiresAt, revokedAt: now });
  liveUntil.set(db, Math.max(latestExpiry(db), expiresAt.getTime()));
}

