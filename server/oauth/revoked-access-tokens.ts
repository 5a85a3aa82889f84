/**
 * Revoked access tokens (RFC 7009 §2.2.1). Our access tokens are self-contained JWTs, so a revoked
 * one would keep working at userinfo until it expires, while `/revoke` told the client it was
 * gone. Its `jti` is recorded here until the token's own `exp`; userinfo (and introspection) ask
 * `isAccessTokenRevoked`. Back ends that verify tokens locally cannot see this list: they rely on
 * the short lifetime (`GATEHOUSE_ACCESS_TOKEN_TTL`), which docs/oauth.md and docs/configuration.md say.
 *
 * Access tokens are rarely revoked, and a row only matters while its token is unexpired, so the
 * check usually needs no read (issue 27: userinfo ≤ 0.1 ms): per database handle the latest
 * `expires_at` on the list is read once and raised by every `recordRevokedAccessToken` (this
 * process's /revoke is the only writer: one process serves a data directory; the sweeper only
 * deletes expired rows, which lowers nothing that matters). The callers check a token's own expiry
 * first, and a row's `expires_at` is its token's `exp`; so while that latest expiry is past, no
 * unexpired token can be on the list.
 *
 * PostgreSQL: other instances revoke too, so the latest expiry is read again once it is a second
 * old (wall clock): a revocation on any instance is refused by every other within about a second,
 * and by this one at once.
 *
 * Retention: a row is worthless once its token has expired; the sweeper deletes those by the
 * `expires_at` index (data-lifecycle/retention-rules.ts, "revoked access tokens").
 */
import { eq, max, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { revokedAccessTokens } from '../db/schema.js';
import { engineOf, exec, one } from '../db/store.js';

/** PostgreSQL: how long a read of the latest expiry is trusted (other instances write the list too). */
const PG_RECHECK_MS = 1_000;

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

/** Epoch ms until which a listed token may still be live, per database handle (see above), and when that was read. */
const liveUntil = new WeakMap<Db, { until: number; readAt: number }>();

async function latestExpiry(db: Db): Promise<number> {
  const known = liveUntil.get(db);
  if (known !== undefined && (known.readAt === Infinity || Date.now() - known.readAt < PG_RECHECK_MS)) return known.until;
  const until = (await one(statements(db).latestExpiry))?.at?.getTime() ?? 0;
  // SQLite: this process is the only writer, so the value read is kept for good.
  liveUntil.set(db, { until, readAt: engineOf(db) === 'postgres' ? Date.now() : Infinity });
  return until;
}

/**
 * Whether the access token with this `jti` was revoked. For a token unexpired at `now` (the
 * callers check its expiry first): a read only while some listed token may still be live.
 */
export async function isAccessTokenRevoked(db: Db, jti: string, now: Date): Promise<boolean> {
  if (await latestExpiry(db) <= now.getTime()) return false;
  return await one(statements(db).isRevoked, { jti }) !== undefined;
}

/** Records a revoked access token until `expiresAt` (its `exp`); revoking twice is harmless. */
export async function recordRevokedAccessToken(db: Db, jti: string, expiresAt: Date, now: Date): Promise<void> {
  await exec(statements(db).insert, { jti, expiresAt, revokedAt: now });
  const until = Math.max(await latestExpiry(db), expiresAt.getTime());
  liveUntil.set(db, { until, readAt: liveUntil.get(db)!.readAt });
}

