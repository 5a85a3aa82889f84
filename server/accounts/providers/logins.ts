/**
 * In-flight external sign-ins (`provider_logins`). A login lives 10 minutes and is used once.
 *
 * Each login is bound to the browser that started it: the browser keeps the login's secret in a
 * short-lived HttpOnly cookie and the table keeps only its SHA-256. While the browser is at the
 * provider the secret is the OAuth `state` (so the callback must present both the same `state`
 * and the cookie: a callback URL replayed in another browser fails). When the provider's answer
 * must wait for the person to prove they own an existing account, the identity is kept on a new
 * login whose secret lives only in a second cookie.
 */
import { and, eq, lt } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { Config } from '../../config.js';
import { providerLogins, type ExternalIdentity } from '../../db/schema.js';
import { randomToken, safeEqual, sha256 } from '../../util/crypto.js';
import { cookieOptions } from '../session.js';
import { loginExpired, loginOtherBrowser } from './errors.js';
import type { LoginSecrets } from './provider-client.js';
import { exec, one, transaction } from '../../db/store.js';

export const LOGIN_TTL_MS = 10 * 60_000;

export type ProviderLogin = typeof providerLogins.$inferSelect;

/** The two browser-binding cookies: the trip to the provider, and an identity awaiting proof. */
export type LoginCookie = 'gatehouse_provider_login' | 'gatehouse_link_pending';

function cookieName(config: Config, name: LoginCookie): string {
  return config.issuer.startsWith('https:') ? `__Host-${name}` : name;
}

export function setLoginCookie(reply: FastifyReply, config: Config, name: LoginCookie, secret: string): void {
  reply.setCookie(cookieName(config, name), secret, cookieOptions(config, LOGIN_TTL_MS / 1000));
}

export function clearLoginCookie(reply: FastifyReply, config: Config, name: LoginCookie): void {
  reply.clearCookie(cookieName(config, name), { ...cookieOptions(config, 0), maxAge: undefined });
}

export function loginCookie(config: Config, request: FastifyRequest, name: LoginCookie): string | undefined {
  const value = request.cookies[cookieName(config, name)];
  return value && value.length <= 100 ? value : undefined;
}

export interface NewLogin {
  provider: string;
  applicationId: string | null;
  returnTo: string;
  linkPersonId: string | null;
}

/** Fresh secrets for a login: they go to the provider (state, challenge, nonce) and the cookie. */
export function loginSecrets(): LoginSecrets {
  return { state: randomToken(), codeVerifier: randomToken(), nonce: randomToken() };
}

/** Stores a login once its authorization URL exists (a provider that cannot be reached leaves nothing). */
export async function beginLogin(ctx: AppContext, login: NewLogin, secrets: LoginSecrets): Promise<void> {
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    // Expired logins are swept as new ones start, so the table stays small without a worker.
    await exec(tx.delete(providerLogins).where(lt(providerLogins.expiresAt, now)));
    await exec(tx.insert(providerLogins)
      .values({
        ...login,
        state: sha256(secrets.state),
        codeVerifier: secrets.codeVerifier,
        nonce: secrets.nonce,
        createdAt: now,
        expiresAt: new Date(now.getTime() + LOGIN_TTL_MS),
      }));
  });
}

/**
 * Takes (deletes) the login whose secret is `secret` for `provider`, after checking the browser
 * holds the same secret in `cookie`. Unknown, used or expired → `login_expired`; another
 * browser → `login_state_mismatch` (the login is left for its own browser).
 */
export async function takeLogin(ctx: AppContext, provider: string, secret: string, cookie: string | undefined): Promise<ProviderLogin> {
  const key = sha256(secret);
  const row = await one(ctx.db.select().from(providerLogins).where(and(eq(providerLogins.state, key), eq(providerLogins.provider, provider))));
  if (!row) throw loginExpired();
  if (!cookie || !safeEqual(cookie, secret)) throw loginOtherBrowser();
  const taken = await one(ctx.db.delete(providerLogins).where(eq(providerLogins.state, key)).returning());
  // Deleted in between by a concurrent callback of the same browser: only one may proceed.
  if (!taken || taken.expiresAt.getTime() <= ctx.clock.now().getTime()) throw loginExpired();
  return taken;
}

/** Keeps the provider's answer until the person proves they own `personId`; returns the new secret. */
export async function holdForProof(ctx: AppContext, login: ProviderLogin, personId: string, identity: ExternalIdentity): Promise<string> {
  const now = ctx.clock.now();
  const secret = randomToken();
  await exec(ctx.db.insert(providerLogins)
    .values({
      state: sha256(secret),
      provider: login.provider,
      codeVerifier: '',
      nonce: null,
      returnTo: login.returnTo,
      applicationId: login.applicationId,
      linkPersonId: personId,
      identity,
      createdAt: now,
      expiresAt: new Date(now.getTime() + LOGIN_TTL_MS),
    }));
  return secret;
}

/** The identity awaiting proof in this browser, without taking it; undefined when none or expired. */
export async function pendingLink(ctx: AppContext, secret: string | undefined): Promise<(ProviderLogin & { identity: ExternalIdentity; linkPersonId: string }) | undefined> {
  if (!secret) return undefined;
  const row = await one(ctx.db.select().from(providerLogins).where(eq(providerLogins.state, sha256(secret))));
  if (!row || !row.identity || !row.linkPersonId || row.expiresAt.getTime() <= ctx.clock.now().getTime()) return undefined;
  return row as ProviderLogin & { identity: ExternalIdentity; linkPersonId: string };
}

/** Removes a pending link once it is used or abandoned. */
export async function dropPendingLink(ctx: AppContext, secret: string): Promise<void> {
  await exec(ctx.db.delete(providerLogins).where(eq(providerLogins.state, sha256(secret))));
}
