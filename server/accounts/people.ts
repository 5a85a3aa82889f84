/**
 * People as the sign-in endpoints see them: look-up by e-mail, the `{user}` wire view, and
 * starting a browser session after a successful sign-in or sign-up.
 */
import { eq, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { AppContext } from '../context.js';
import type { Db } from '../db/client.js';
import { people, type Application, type AuthMethod, type Person } from '../db/schema.js';
import { preparedPerDb } from '../db/prepared.js';
import { findApplication } from '../applications/lookup.js';
import { forbidden, notFound } from '../http/problem.js';
import { ACCOUNT_REALM, createSession, endSession, liveSession, markRealm, realmOf, setSessionAmr } from './session.js';
import { one } from '../db/store.js';

/** Who is asking: what the session row records about the device, and the cookie it already has. */
export interface ClientInfo {
  userAgent?: string | undefined;
  ip: string;
  /** The session token the browser already holds, if any. */
  currentToken?: string | undefined;
  /** The browser's device cookie, if any (accounts/device-cookie.ts). */
  deviceCookie?: string | undefined;
  /** The request's logger, for work that outlives the answer (e-mail). */
  log?: Pick<FastifyBaseLogger, 'warn'> | undefined;
}

/** A disabled person's sign-in, once their password (or passkey, or provider) was right. */
export const accountDisabled = () => forbidden('account_disabled', 'This account is disabled. Ask an administrator of this Gatehouse to enable it.');

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** Prepared once (db/prepared.ts): every password sign-in looks the address up. */
const byEmail = preparedPerDb((db) => db.select().from(people).where(eq(people.email, sql.placeholder('email'))).prepare());

export async function findPersonByEmail(db: Db, email: string): Promise<Person | undefined> {
  return await one(byEmail(db), { email: normalizeEmail(email) });
}

/** Prepared once: username sign-in (`people_username_uq`; usernames are stored lower-case). */
const byUsername = preparedPerDb((db) => db.select().from(people).where(eq(people.username, sql.placeholder('username'))).prepare());

export async function findPersonByUsername(db: Db, username: string): Promise<Person | undefined> {
  const name = username.trim().toLowerCase();
  // No username has these (people/username.ts), and PostgreSQL cannot even compare text with a NUL.
  if (name.length === 0 || name.length > 64 || name.includes('\u0000')) return undefined;
  return await one(byUsername(db), { username: name });
}

export function userRecord(p: Person) {
  return {
    id: p.id, email: p.email, emailVerified: p.emailVerified, username: p.username,
    name: p.name, givenName: p.givenName, familyName: p.familyName, createdAt: p.createdAt.toISOString(),
  };
}

/** The application a sign-in is for; it must exist and allow e-mail and password. */
export async function applicationForEmailSignIn(ctx: AppContext, applicationId: string): Promise<Application> {
  const app = await findApplication(ctx.db, applicationId);
  if (!app) throw notFound('application_not_found', `There is no application with id "${applicationId}".`);
  if (!app.authPolicy.allowed_providers.includes('email')) {
    throw forbidden('provider_not_allowed', `${app.name} does not allow signing in with e-mail and password.`);
  }
  return app;
}

/**
 * Signs `person` in on this browser inside the caller's transaction (opened on `db`: the
 * statements are prepared on it, db/prepared.ts). The browser's current
 * session is kept when it already belongs to the same person (its `sid` stays stable, so refresh
 * tokens born of it live on); another person's session on this browser is ended. Marks the
 * account realm and the application's realm, and records `amr`, how this sign-in was made (the
 * session's later ID tokens carry it). Returns the new cookie token, or undefined when the cookie
 * stays.
 */
/** What starting or ending a session needs of the app context: the store, the configuration, and the hooks it announces on. */
export type SessionHost = Pick<AppContext, 'db' | 'config' | 'hooks'>;

export async function startSession(
  ctx: SessionHost,
  now: Date,
  person: Person,
  app: Application | undefined,
  client: ClientInfo,
  amr: AuthMethod[],
): Promise<{ sessionId: string; token: string | undefined }> {
  const { db, config } = ctx;
  // Every way of signing in ends here: a disabled person gets no session (issue 33).
  if (person.status === 'disabled') throw accountDisabled();
  let sessionId: string | undefined;
  let token: string | undefined;
  if (client.currentToken) {
    const current = (await liveSession(db, client.currentToken, now))?.session;
    if (current?.personId === person.id) {
      sessionId = current.id;
      await setSessionAmr(db, sessionId, amr);
    } else if (current) await endSession(ctx, db, now, current.id, 'replaced_by_other_person');
  }
  if (!sessionId) {
    const created = await createSession(db, now, config, { personId: person.id, userAgent: client.userAgent, ip: client.ip, amr });
    sessionId = created.session.id;
    token = created.token;
  }
  // Any sign-in is a fresh authentication of the session (accounts/session.ts, requireRecentSignIn).
  await markRealm(db, sessionId, ACCOUNT_REALM, now);
  if (app) await markRealm(db, sessionId, realmOf(app), now);
  return { sessionId, token };
}
