/**
 * People as the sign-in endpoints see them: look-up by e-mail, the `{user}` wire view, and
 * starting a browser session after a successful sign-in or sign-up.
 */
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Tx } from '../audit/record.js';
import type { Config } from '../config.js';
import type { AppContext } from '../context.js';
import { applications, people, sessions, type Application, type Person } from '../db/schema.js';
import { forbidden, notFound } from '../http/problem.js';
import { sha256 } from '../util/crypto.js';
import { ACCOUNT_REALM, createSession, endSession, markRealm, realmOf } from './session.js';

/** Who is asking: what the session row records about the device, and the cookie it already has. */
export interface ClientInfo {
  userAgent?: string | undefined;
  ip: string;
  /** The session token the browser already holds, if any. */
  currentToken?: string | undefined;
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export function findPersonByEmail(tx: Tx, email: string): Person | undefined {
  return tx.select().from(people).where(eq(people.email, normalizeEmail(email))).get();
}

export function userRecord(p: Person) {
  return { id: p.id, email: p.email, emailVerified: p.emailVerified, name: p.name, createdAt: p.createdAt.toISOString() };
}

/** The application a sign-in is for; it must exist and allow e-mail and password. */
export function applicationForEmailSignIn(ctx: AppContext, applicationId: string): Application {
  const app = ctx.db.select().from(applications).where(eq(applications.id, applicationId)).get();
  if (!app) throw notFound('application_not_found', `There is no application with id "${applicationId}".`);
  if (!app.authPolicy.allowed_providers.includes('email')) {
    throw forbidden('provider_not_allowed', `${app.name} does not allow signing in with e-mail and password.`);
  }
  return app;
}

/**
 * Signs `person` in on this browser inside the caller's transaction. The browser's current
 * session is kept when it already belongs to the same person (its `sid` stays stable, so refresh
 * tokens born of it live on); another person's session on this browser is ended. Marks the
 * account realm and the application's realm. Returns the new cookie token, or undefined when the
 * cookie stays.
 */
export function startSession(
  tx: Tx,
  now: Date,
  config: Config,
  person: Person,
  app: Application | undefined,
  client: ClientInfo,
): { sessionId: string; token: string | undefined } {
  let sessionId: string | undefined;
  let token: string | undefined;
  if (client.currentToken) {
    const current = tx
      .select({ id: sessions.id, personId: sessions.personId })
      .from(sessions)
      .where(and(eq(sessions.tokenHash, sha256(client.currentToken)), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
      .get();
    if (current?.personId === person.id) sessionId = current.id;
    else if (current) endSession(tx, now, current.id);
  }
  if (!sessionId) {
    const created = createSession(tx, now, config, { personId: person.id, userAgent: client.userAgent, ip: client.ip });
    sessionId = created.session.id;
    token = created.token;
  }
  // Any sign-in is a fresh authentication of the session (accounts/session.ts, requireRecentSignIn).
  markRealm(tx, sessionId, ACCOUNT_REALM, now);
  if (app) markRealm(tx, sessionId, realmOf(app), now);
  return { sessionId, token };
}
