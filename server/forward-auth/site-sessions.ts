/**
 * Site sessions (spec forward-auth.md, "Signing in to a protected host", step 3): the
 * `gatehouse_site` cookie of a protected host carries a random 256-bit token; the store keeps its
 * SHA-256, the host and application it was handed over to, and the Gatehouse session it came from.
 * A check passes only while that session is live and the person still passes the application's
 * rules, which the one lookup below reads together (an index seek on the token, then primary keys).
 *
 * They end with their session: `endSessions` (accounts/session.ts, the one way a sign-in ends and
 * where back-channel logout attaches) deletes the site sessions of the sessions it ended, and the
 * lookup refuses any whose session is revoked or expired meanwhile; `/.gatehouse/sign-out` deletes
 * its own. Expired rows go by retention (data-lifecycle/retention-rules.ts).
 */
import { and, eq, gt, inArray, isNull, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import { forwardAuthSessions, memberships, people, sessions } from '../db/schema.js';
import { preparedPerDb } from '../db/prepared.js';
import { exec, one } from '../db/store.js';
import { randomToken, sha256 } from '../util/crypto.js';
import { newId } from '../util/ids.js';

/** The site cookie's name on every protected host (host-only: no Domain attribute). */
export const SITE_COOKIE = 'gatehouse_site';

/** Per-process count of ended sign-ins, so cached check decisions made before one are not used again. */
let ended = 0;
export const siteSessionsEndedCount = (): number => ended;

const lookup = preparedPerDb((db) => {
  const p = sql.placeholder;
  return db
    .select({
      siteId: forwardAuthSessions.id,
      applicationId: forwardAuthSessions.applicationId,
      host: forwardAuthSessions.host,
      sessionId: forwardAuthSessions.sessionId,
      amr: sessions.amr,
      person: { id: people.id, email: people.email, name: people.name, username: people.username, status: people.status },
      membership: { id: memberships.id, status: memberships.status, role: memberships.role },
    })
    .from(forwardAuthSessions)
    .innerJoin(sessions, eq(sessions.id, forwardAuthSessions.sessionId))
    .innerJoin(people, eq(people.id, forwardAuthSessions.personId))
    .leftJoin(memberships, and(eq(memberships.applicationId, forwardAuthSessions.applicationId), eq(memberships.personId, forwardAuthSessions.personId)))
    // Placeholders are bound as given: `nowMs` is epoch milliseconds, as stored.
    .where(and(
      eq(forwardAuthSessions.tokenHash, p('hash')),
      gt(forwardAuthSessions.expiresAt, p('nowMs')),
      isNull(sessions.revokedAt),
      gt(sessions.expiresAt, p('nowMs')),
    ))
    .prepare();
});

export type LiveSiteSession = NonNullable<Awaited<ReturnType<typeof findLiveSiteSession>>>;

/** The live site session of a cookie's token (by its SHA-256), with its person and membership. */
export async function findLiveSiteSession(db: Db, tokenHash: string, now: Date) {
  return await one(lookup(db), { hash: tokenHash, nowMs: now.getTime() });
}

/** Starts a site session; the returned token goes into the cookie and nowhere else. */
export async function createSiteSession(
  db: Db,
  now: Date,
  input: { sessionId: string; applicationId: string; personId: string; host: string; expiresAt: Date },
): Promise<{ id: string; token: string }> {
  const token = randomToken();
  const id = newId('fas');
  await exec(db.insert(forwardAuthSessions).values({ id, tokenHash: sha256(token), createdAt: now, ...input }));
  return { id, token };
}

/** Ends the site session of a cookie's token (`/.gatehouse/sign-out`); returns whether there was one. */
export async function endSiteSession(db: Db, token: string): Promise<boolean> {
  ended += 1;
  return (await exec(db.delete(forwardAuthSessions).where(eq(forwardAuthSessions.tokenHash, sha256(token))))) > 0;
}

/**
 * Called by `endSessions` inside its transaction: the site sessions of the ended sessions go, and
 * this process's cached check decisions are not used again. A member suspended or removed keeps
 * their site sessions (the next check answers 403 from the membership itself), but the cache is
 * dropped all the same.
 */
export async function endSiteSessionsOf(tx: Tx, sessionIds: string[]): Promise<void> {
  ended += 1;
  if (sessionIds.length) await exec(tx.delete(forwardAuthSessions).where(inArray(forwardAuthSessions.sessionId, sessionIds)));
}

/** When the Gatehouse session ends, if it is live (the hand-over's site session ends with it). */
export async function liveSessionExpiry(db: Db, sessionId: string, now: Date): Promise<Date | undefined> {
  const row = await one(db
    .select({ expiresAt: sessions.expiresAt })
    .from(sessions)
    .where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now))));
  return row?.expiresAt;
}
