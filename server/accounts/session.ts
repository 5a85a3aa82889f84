/**
 * Browser sessions and SSO realms (DESIGN §4.8, §5).
 *
 * A session is one person on one device: the cookie carries a random 256-bit token, the store
 * keeps only its SHA-256. Each application's realm is its SSO group (`group:<id>`) or the
 * application alone (`app:<id>`); signing in for an application marks its realm in the session,
 * and authorize is silent only for realms the session has authenticated.
 */
import { and, count, eq, gt, isNull, ne, sql } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import UAParser from 'ua-parser-js';
import type { AppContext } from '../context.js';
import type { Config } from '../config.js';
import { people, sessionRealms, sessions, type Application, type AuthMethod, type Person, type Session } from '../db/schema.js';
import type { Db, Tx } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { forbidden } from '../http/problem.js';
import { randomToken, sha256 } from '../util/crypto.js';
import { newId } from '../util/ids.js';
import { revokeFamilies, type FamilyScope } from '../oauth/revoke-families.js';
import { queueMemberLogouts, queueSessionLogouts } from '../oauth/backchannel/outbox.js';
import type { SessionEndReason } from '../plugin-api/hooks.js';
import { exec, one, many } from '../db/store.js';

export const SESSION_COOKIE = 'gatehouse_session';

/** `lastSeenAt` is written at most this often, so reads stay reads. */
const LAST_SEEN_RESOLUTION_MS = 60_000;

const isHttps = (config: Config) => config.issuer.startsWith('https:');

/** The cookie name: `__Host-` prefixed under HTTPS so no sibling host can set or shadow it. */
export function sessionCookieName(config: Config): string {
  return isHttps(config) ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE;
}

/** Cookie attributes shared by the session and CSRF cookies. */
export function cookieOptions(config: Config, maxAgeSeconds: number) {
  return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: isHttps(config), maxAge: maxAgeSeconds };
}

export function setSessionCookie(reply: FastifyReply, config: Config, token: string): void {
  reply.setCookie(sessionCookieName(config), token, cookieOptions(config, config.sessionTtl));
}

export function clearSessionCookie(reply: FastifyReply, config: Config): void {
  reply.clearCookie(sessionCookieName(config), { path: '/', secure: isHttps(config), httpOnly: true, sameSite: 'lax' });
}

/** The raw session token from the request's cookie, if any. */
export function sessionToken(config: Config, request: FastifyRequest): string | undefined {
  const value = request.cookies[sessionCookieName(config)];
  return value ? value : undefined;
}

/** Every authorize reads the session and its realm: prepared once (db/prepared.ts). */
const sessionQueries = preparedPerDb((db) => ({
  live: db
    .select({ session: sessions, person: people })
    .from(sessions)
    .innerJoin(people, eq(people.id, sessions.personId))
    // Placeholders are bound as given (no column mapping): `nowMs` is epoch milliseconds, as stored.
    // A disabled person's sessions were ended when they were disabled; this keeps it so (issue 33).
    .where(and(eq(sessions.tokenHash, sql.placeholder('hash')), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql.placeholder('nowMs')), eq(people.status, 'active')))
    .prepare(),
  realm: db
    .select({ at: sessionRealms.authenticatedAt })
    .from(sessionRealms)
    .where(and(eq(sessionRealms.sessionId, sql.placeholder('sessionId')), eq(sessionRealms.realm, sql.placeholder('realm'))))
    .prepare(),
}));

/** The live session of the request's cookie and its person: unrevoked and unexpired. */
export async function readSession(ctx: AppContext, request: FastifyRequest): Promise<{ session: Session; person: Person } | undefined> {
  const token = sessionToken(ctx.config, request);
  if (!token || token.length > 200) return undefined;
  const now = ctx.clock.now();
  const row = await liveSession(ctx.db, token, now);
  if (!row) return undefined;
  if (now.getTime() - row.session.lastSeenAt.getTime() >= LAST_SEEN_RESOLUTION_MS) {
    await exec(ctx.db.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.id, row.session.id)));
    row.session.lastSeenAt = now;
  }
  return row;
}

/**
 * The sessions lists' name of a session's device: the name it was made with (a device sign-in's),
 * else its User-Agent described as it is read. Sign-ins store no description (`device` ''), so
 * ua-parser-js' expressions are compiled only once someone opens a sessions list, not at the
 * first sign-in of every start (issue 45, docs/decisions/0484-device-names-when-read.md).
 */
export function sessionDevice(session: Pick<Session, 'device' | 'userAgent'>): string {
  return session.device || describeDevice(session.userAgent ?? undefined);
}

/** "Chrome 120 on Linux"-style description of a User-Agent, for the sessions list. */
export function describeDevice(userAgent: string | undefined): string {
  if (!userAgent) return 'Unknown device';
  // Only the browser and the system: the device, engine and CPU lists (getResult) are most of
  // ua-parser-js' regular expressions, each compiled to native code that V8 keeps for good once
  // run (issue 45: −0.2 MB of heap and a fifth of the time per parse; decision 0346).
  const parser = new UAParser(userAgent);
  const { name: browserName, major } = parser.getBrowser();
  const { name: osName, version } = parser.getOS();
  const browser = [browserName, major].filter(Boolean).join(' ');
  const os = [osName, version].filter(Boolean).join(' ');
  if (!browser && !os) return userAgent.slice(0, 100);
  return browser && os ? `${browser} on ${os}` : browser || os;
}

/** Every sign-in creates a session and marks realms: prepared once (db/prepared.ts). */
const sessionWrites = preparedPerDb((db) => {
  const p = sql.placeholder;
  return {
    insert: db
      .insert(sessions)
      .values({
        id: p('id'), tokenHash: p('tokenHash'), personId: p('personId'), userAgent: p('userAgent'), device: p('device'),
        ip: p('ip'), createdAt: p('now'), expiresAt: p('expiresAt'), lastSeenAt: p('now'), amr: p('amr'),
      })
      .returning()
      .prepare(),
    markRealm: db
      .insert(sessionRealms)
      .values({ sessionId: p('sessionId'), realm: p('realm'), authenticatedAt: p('at') })
      .onConflictDoUpdate({ target: [sessionRealms.sessionId, sessionRealms.realm], set: { authenticatedAt: sql`excluded.authenticated_at` } })
      .prepare(),
    // Raw SQL value: placeholders in `set` are bound as given, so the JSON text is passed.
    setAmr: db.update(sessions).set({ amr: sql`${p('amr')}` }).where(eq(sessions.id, p('id'))).prepare(),
  };
});

/**
 * Creates a session for `personId` (also inside a transaction opened on `db`); the returned token
 * goes into the cookie and nowhere else.
 */
export async function createSession(
  db: Db,
  now: Date,
  config: Config,
  /**
   * `device` names it in the sessions list instead of the User-Agent (a device sign-in); `amr` is
   * how the sign-in was made (the ID tokens' `amr`/`acr`), empty when not known.
   */
  input: { personId: string; userAgent?: string | undefined; ip?: string | undefined; device?: string; amr?: AuthMethod[] },
): Promise<{ session: Session; token: string }> {
  const token = randomToken();
  const userAgent = input.userAgent?.slice(0, 500) ?? null;
  const session = (await one(sessionWrites(db).insert, {
    id: newId('ses'),
    tokenHash: sha256(token),
    personId: input.personId,
    userAgent,
    device: input.device ?? '', // '': described from userAgent when read (sessionDevice)
    ip: input.ip ?? '',
    now,
    expiresAt: new Date(now.getTime() + config.sessionTtl * 1000),
    amr: input.amr ?? [],
  }))!;
  return { session, token };
}

/** The live session of a raw token and its person, if any (the cookie check of `readSession`). */
export async function liveSession(db: Db, token: string, now: Date): Promise<{ session: Session; person: Person } | undefined> {
  return await one(sessionQueries(db).live, { hash: sha256(token), nowMs: now.getTime() });
}

/** Records how the session's last sign-in was made (its `amr`, also inside a transaction on `db`). */
/** Sessions neither ended nor expired at `now`, counted from the (revoked_at, expires_at) index alone. */
export async function countLiveSessions(db: Db, now: Date): Promise<number> {
  return (await one(db.select({ n: count() }).from(sessions).where(and(isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))))?.n ?? 0;
}

export async function setSessionAmr(db: Db, sessionId: string, amr: AuthMethod[]): Promise<void> {
  await exec(sessionWrites(db).setAmr, { id: sessionId, amr: JSON.stringify(amr) });
}

/** How the session's last sign-in was made (empty for sessions from before `amr` was recorded). */
export async function sessionAmr(db: Db, sessionId: string): Promise<AuthMethod[]> {
  return (await one(db.select({ amr: sessions.amr }).from(sessions).where(eq(sessions.id, sessionId))))?.amr ?? [];
}

/** The realm an application's sign-in belongs to: its SSO group, or the application alone. */
export function realmOf(app: Pick<Application, 'id' | 'ssoGroupId'>): string {
  return app.ssoGroupId ? `group:${app.ssoGroupId}` : `app:${app.id}`;
}

/** Records that the session (re-)authenticated `realm` at `now` (also inside a transaction on `db`). */
export async function markRealm(db: Db, sessionId: string, realm: string, now: Date): Promise<void> {
  await exec(sessionWrites(db).markRealm, { sessionId, realm, at: now });
}

/** When the session last authenticated `realm` (the ID token's `auth_time`), or undefined. */
export async function realmAuthTime(ctx: AppContext, sessionId: string, realm: string): Promise<Date | undefined> {
  return (await one(sessionQueries(ctx.db).realm, { sessionId, realm }))?.at;
}

/**
 * Gatehouse's own realm (account pages, self-service): every sign-in marks it, whatever it was
 * for, so its time is the session's last authentication by any method. It never collides with
 * an application's `app:`/`group:` realm.
 */
export const ACCOUNT_REALM = 'gatehouse';

/** How recent a sign-in must be before the person may change how they sign in. */
export const RECENT_SIGN_IN_MS = 10 * 60_000;

export const reauthenticationRequired = () =>
  forbidden(
    'reauthentication_required',
    'Changing how you sign in needs a recent sign-in: sign in again on this device (within 10 minutes), then retry.',
  );

/**
 * Refuses (403 `reauthentication_required`) unless the session signed in within the last 10
 * minutes: a stolen session cookie alone must not add or remove a way to sign in, which would
 * outlive the session. Sessions from before this rule have no mark and must sign in again.
 */
export async function requireRecentSignIn(ctx: AppContext, sessionId: string): Promise<void> {
  const at = await realmAuthTime(ctx, sessionId, ACCOUNT_REALM);
  if (!at || ctx.clock.now().getTime() - at.getTime() > RECENT_SIGN_IN_MS) throw reauthenticationRequired();
}

/** Why sessions end: kept with the back-channel logouts they cause, shown in the delivery log. */
export type { SessionEndReason };

/**
 * What ends:
 * - `{ sessionId }`: that session;
 * - `{ personId }`: every session of the person; `exceptSessionId` keeps one (the caller's);
 * - `{ personId, application }`: no browser session, but the person's sign-ins at that
 *   application's realm (an administrator suspended or removed the member): its refresh tokens
 *   die, and the realm's applications the person is a member of get a `sub`-only logout token.
 */
export type SessionEnd =
  | { sessionId: string }
  | { personId: string; exceptSessionId?: string }
  | { personId: string; application: Pick<Application, 'id' | 'ssoGroupId'> };

/** The refresh-token family reason for a session-end reason (kept as before this function). */
const FAMILY_REASON: Partial<Record<SessionEndReason, string>> = {
  password_reset: 'password_reset',
  second_factor_reset: 'second_factor_reset',
  second_factor_removed: 'second_factor_removed',
  membership_suspended: 'membership_suspended',
  membership_deleted: 'membership_deleted',
};

/**
 * THE way a sign-in ends: every path (sign-out, end-session, DELETE /api/me/sessions/:sid,
 * sign-out elsewhere, password change and reset, second-factor reset, another person signing in
 * on the browser, an administrator suspending or removing a member) comes through here, inside
 * the caller's transaction. It marks the sessions ended, revokes the refresh-token families
 * born of them, and queues the back-channel logout tokens for the applications that received
 * tokens from them (oauth/backchannel/outbox.ts), which the delivery worker sends after the
 * commit, and announces it (`sessionsEnded`, plugin-api/hooks.ts), so the plugins end what hangs
 * off those sessions in the same transaction (forward auth's site sessions: their protected hosts
 * stop at the next check). Idempotent: an ended session is not ended (or announced) twice.
 * Returns the ids of the sessions it ended and how many refresh-token families it revoked.
 */
export async function endSessions(
  ctx: Pick<AppContext, 'hooks'>,
  tx: Tx,
  now: Date,
  which: SessionEnd,
  reason: SessionEndReason,
): Promise<{ sessionIds: string[]; families: number }> {
  const familyReason = FAMILY_REASON[reason] ?? 'session_ended';
  if ('application' in which) {
    // The browser sessions live on: they serve the person's other applications, and authorize
    // refuses a suspended member anyway (DESIGN §4.5). The applications are told to drop theirs.
    const families = await revokeFamilies(tx, now, { applicationId: which.application.id, personId: which.personId }, familyReason);
    await queueMemberLogouts(tx, now, which.personId, which.application, reason);
    // The plugins hear it too (forward auth's protected sites answer 403 from the membership itself at the next check).
    await ctx.hooks.emit('sessionsEnded', { tx, now, personId: which.personId, sessionIds: [], applicationId: which.application.id, reason });
    return { sessionIds: [], families };
  }
  const condition =
    'sessionId' in which
      ? eq(sessions.id, which.sessionId)
      : which.exceptSessionId
        ? and(eq(sessions.personId, which.personId), ne(sessions.id, which.exceptSessionId))
        : eq(sessions.personId, which.personId);
  // Person-wide, only live sessions: an expired one is over already and is not announced again.
  const live = 'sessionId' in which ? undefined : gt(sessions.expiresAt, now);
  const ended = await many(tx
    .update(sessions)
    .set({ revokedAt: now })
    .where(and(condition, isNull(sessions.revokedAt), live))
    .returning({ id: sessions.id, personId: sessions.personId }));
  // Person-wide, families whose session row is gone (or never had one) die too.
  const scope: FamilyScope =
    'sessionId' in which ? { sessionId: which.sessionId } : which.exceptSessionId ? { personId: which.personId, exceptSessionId: which.exceptSessionId } : { personId: which.personId };
  const families = await revokeFamilies(tx, now, scope, familyReason);
  await queueSessionLogouts(tx, now, ended, reason);
  const sessionIds = ended.map((s) => s.id);
  const personId = 'personId' in which ? which.personId : ended[0]?.personId;
  await ctx.hooks.emit('sessionsEnded', { tx, now, personId, sessionIds, applicationId: undefined, reason });
  return { sessionIds, families };
}

/**
 * Hands the browser to the plugins' front-channel logouts after a sign-out (plugin-api/registries.ts
 * `logoutFlows`): the first that has others to tell answers, and sends the browser to `next` when
 * done; undefined when none had anything to do (the caller answers as it would have).
 */
export async function frontChannelLogout(
  ctx: Pick<AppContext, 'registries'>,
  request: FastifyRequest,
  reply: FastifyReply,
  ended: { sessionIds: string[]; next: string | undefined; application: Application | undefined },
): Promise<FastifyReply | undefined> {
  if (!ended.sessionIds.length) return undefined;
  for (const flow of ctx.registries.logoutFlows.all) {
    const answer = await flow.afterSignOut(request, reply, ended);
    if (answer) return answer;
  }
  return undefined;
}

/** Ends one session (see `endSessions`). */
export async function endSession(ctx: Pick<AppContext, 'hooks'>, tx: Tx, now: Date, sessionId: string, reason: SessionEndReason): Promise<void> {
  await endSessions(ctx, tx, now, { sessionId }, reason);
}

