/**
 * The paths every protected host routes to Gatehouse (spec forward-auth.md, "Signing in to a
 * protected host", steps 2 and 4; the snippets route `/.gatehouse/` here):
 *
 * - `GET /.gatehouse/start?rd=…` (issue 49, H6; hand-over-state.ts): for an `rd` on this very
 *   host, keeps a verifier in a host-only cookie and sends the browser to the issuer's start with
 *   its challenge; any other `rd` is the 400 page, no redirect.
 * - `GET /.gatehouse/callback?code=…&rd=…` spends the one-time code (single use, 60 s, bound to
 *   this host and to this browser's verifier: codes.ts; none is 400 `invalid_grant`), starts a site session tied to the Gatehouse session it came from
 *   (site-sessions.ts), sets the host-only cookie `gatehouse_site` (HttpOnly, SameSite=Lax,
 *   Secure on https, Path=/, living as long as that session) and sends the browser to `rd`. A
 *   spent, expired or foreign code, or a session that ended meanwhile, gets the hosted error page.
 *   The sign-in is audited (`forward_auth.signed_in`) and marks the membership active, as a code
 *   exchange does for OIDC.
 * - `GET /.gatehouse/sign-out` ends this host's site session, clears its cookie and hands over to
 *   the issuer's end-session page, which asks the person to confirm before it ends the Gatehouse
 *   session (a link alone must not sign anyone out of everything: RP-Initiated Logout §2), then
 *   shows the signed-out page. Every other site of that session stops at its next check.
 *
 * Which host this is comes from the proxy's `X-Forwarded-Host` (or `Host`), believed only from a
 * trusted proxy, as for the checks (forwarded.ts): a forged one from anyone else is refused (403).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { recordAudit } from '../audit/record.js';
import { findMembership, touchMembership } from '../members/create.js';
import { transaction } from '../db/store.js';
import { param, type RawParams } from '../oauth/params.js';
import { siteCookie } from './check.js';
import { spendCode } from './codes.js';
import { challengeOf, HOST_START_PATH, STATE_MAX_AGE_S, stateCookieName, stateVerifier } from './hand-over-state.js';
import { START_PATH } from './check.js';
import { startTarget } from './start-route.js';
import { randomToken } from '../util/crypto.js';
import { claimsForwarding, originalRequest, proxyTrust } from './forwarded.js';
import { parseRequestHost, type RequestHost } from './hosts.js';
import { sendForwardError } from './pages.js';
import type { ProtectedHosts } from './protected-hosts.js';
import { createSiteSession, endSiteSession, liveSessionExpiry, SITE_COOKIE } from './site-sessions.js';
import { CALLBACK_PATH } from './start-route.js';

export const SIGN_OUT_PATH = '/.gatehouse/sign-out';

function single(request: FastifyRequest, name: string): string | undefined {
  try {
    return param(request.query as RawParams, name);
  } catch {
    return undefined;
  }
}

export const callbackRoutes: FastifyPluginAsync<{ hosts: ProtectedHosts }> = async (app, { hosts }) => {
  const ctx: AppContext = app.ctx;
  const trusted = proxyTrust(ctx.config);
  // Read per request: a server started on port 0 learns its issuer once listening.
  const error = (reply: FastifyReply, status: number, code: string, key: string) =>
    sendForwardError(reply, status, code, key, undefined, new URL(ctx.config.issuer).origin);

  /** The protected host and scheme this request came to, or an answer refusing it. */
  function where(request: FastifyRequest, reply: FastifyReply): { host: RequestHost; https: boolean } | FastifyReply {
    const viaProxy = claimsForwarding(request.headers);
    if (viaProxy && !trusted(request.socket.remoteAddress ?? '')) return error(reply, 403, 'untrusted_proxy', 'untrusted');
    const original = originalRequest('forward', request.headers, request.headers.host);
    const host = parseRequestHost(original.host);
    if (!host) return error(reply, 400, 'invalid_request', 'notProtected');
    return { host, https: viaProxy ? original.proto === 'https' : request.protocol === 'https' };
  }

  const cookieOptions = (https: boolean) => ({ path: '/', httpOnly: true, sameSite: 'lax' as const, secure: https });

  app.get(HOST_START_PATH, { schema: { hide: true } }, async (request, reply) => {
    const at = where(request, reply);
    if (!('host' in at)) return at;
    const target = await startTarget(hosts, single(request, 'rd'));
    if (!target || target.url.host !== at.host.host) return error(reply, 400, 'invalid_request', 'badRd');
    const verifier = stateVerifier(request.headers.cookie, at.https) ?? randomToken();
    reply.setCookie(stateCookieName(at.https), verifier, { ...cookieOptions(at.https), maxAge: STATE_MAX_AGE_S });
    const query = new URLSearchParams({ rd: target.url.href, challenge: challengeOf(verifier) });
    return reply.header('cache-control', 'no-store').redirect(`${ctx.config.issuer}${START_PATH}?${query.toString()}`, 302);
  });

  app.get(CALLBACK_PATH, { schema: { hide: true } }, async (request, reply) => {
    const at = where(request, reply);
    if (!('host' in at)) return at;
    const now = ctx.clock.now();
    const verifier = stateVerifier(request.headers.cookie, at.https);
    if (!verifier) return error(reply, 400, 'invalid_grant', 'otherBrowser');
    const code = single(request, 'code');
    const grant = code ? await spendCode(ctx.db, now, code, challengeOf(verifier), at.host.host) : undefined;
    const site = grant ? await hosts.find(at.host.host) : undefined;
    if (!grant || !site || site.app.id !== grant.applicationId) return error(reply, 400, 'invalid_grant', 'codeSpent');
    const expiresAt = await liveSessionExpiry(ctx.db, grant.sessionId, now);
    if (!expiresAt) return error(reply, 400, 'invalid_grant', 'sessionGone');

    const started = await transaction(ctx.db, async (tx) => {
      const made = await createSiteSession(tx, now, {
        sessionId: grant.sessionId, applicationId: grant.applicationId, personId: grant.personId, host: grant.host, expiresAt,
      });
      const membership = await findMembership(tx, grant.applicationId, grant.personId);
      if (membership?.status === 'active') await touchMembership(tx, membership.id, now);
      await recordAudit(tx, now, {
        actor: `person:${grant.personId}`, action: 'forward_auth.signed_in', applicationId: grant.applicationId,
        target: membership?.id ?? grant.personId, details: { host: grant.host, sessionId: grant.sessionId },
      });
      return made;
    });
    const maxAge = Math.max(1, Math.floor((expiresAt.getTime() - now.getTime()) / 1000));
    reply.setCookie(SITE_COOKIE, started.token, { ...cookieOptions(at.https), maxAge });
    return reply.header('cache-control', 'no-store').redirect(grant.rd, 302);
  });

  app.get(SIGN_OUT_PATH, { schema: { hide: true } }, async (request, reply) => {
    const at = where(request, reply);
    if (!('host' in at)) return at;
    const token = siteCookie(request.headers.cookie);
    if (token) await endSiteSession(ctx.db, token);
    reply.clearCookie(SITE_COOKIE, cookieOptions(at.https));
    const site = await hosts.find(at.host.host);
    const query = site ? `?${new URLSearchParams({ client_id: site.app.id }).toString()}` : '';
    return reply.header('cache-control', 'no-store').redirect(`${ctx.config.issuer}/api/auth/oauth2/end-session${query}`, 303);
  });
};
