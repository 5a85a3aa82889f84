/**
 * The check (spec forward-auth.md, "The check": its situation table, row by row), as a function
 * of the proxy's request — its peer address and headers — so the Fastify routes and the early
 * path (check-routes.ts) give the same answer:
 *
 * | situation                                              | /forward                   | /forward/auth-request |
 * | a peer that is not a trusted proxy                     | 403                        | 403                   |
 * | host not protected by any application                  | 403                        | 403                   |
 * | host of another application than the configuration's   | 403                        | 403                   |
 * | site cookie of a person the application admits         | 200 + identity headers     | 200 + identity        |
 * | Bearer access token for the app's audience, valid      | 200 + identity headers     | 200 + identity        |
 * | Bearer token invalid                                   | 401 Bearer invalid_token   | same                  |
 * | no credential, a browser navigating                    | 302 to the start URL       | 401                   |
 * | no credential, anything else                           | 401                        | 401                   |
 * | signed in, refused (suspended, not a member, no group) | 403 (refusal page to a browser) | 403              |
 * | password only where the application requires MFA       | 302 to the start URL (it steps up) | 401          |
 *
 * Which configuration asks (issue 49, H1): a proxy block answers for one application's hosts, but
 * a block that is nginx's default server for its port receives requests naming any host. So the
 * nginx configuration names its application in `X-Gatehouse-Application` (its `proxy_set_header`
 * replaces any a client sent), and the check refuses a host of another application (403
 * `host_mismatch`) or, at the nginx endpoint, a configuration that names none — one printed before
 * this rule, whose `$http_host` lets another application's host through (403
 * `configuration_outdated`: print it again). Caddy and Traefik route by host, so `/forward` asks
 * for the header only when a proxy sends it (decision 0300).
 *
 * The site cookie is looked at first: a browser signed in to the site passes even when the page's
 * own scripts send an `Authorization` header of the application's. A Bearer token is one of our
 * access tokens (oauth/bearer.ts: signature, `typ`, issuer, expiry, revocation list) whose `aud` is
 * the application's audience, acting for a member; the second factor is not asked of it (the flow
 * that issued it applied the application's MFA policy). HTTP Basic, for applications with
 * `forwardAuth.basic` (DAV clients that cannot follow a sign-in), takes the person's username or
 * e-mail and an app password made for this application (app-passwords/verify.ts, the check LDAP
 * binds use too); a wrong one is 401 with the Basic challenge, so the client asks again.
 *
 * Cost: decisions are remembered per credential (by its SHA-256) for at most DECISION_TTL_MS, and
 * forgotten at once when this process changes an application or ends a sign-in; so a busy site
 * costs a map lookup per request, and a revocation anywhere (another instance included) stops the
 * next check within that bound — inside the contract's 5 seconds. A miss is one indexed lookup
 * (site-sessions.ts) and the person's groups.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { AppContext } from '../context.js';
import type { Application, AuthMethod } from '../db/schema.js';
import { isMultiFactor, mfaRequired } from '../accounts/second-factor/factors.js';
import { verifyAccessToken } from '../oauth/bearer.js';
import type { KeyRing } from '../oauth/keys.js';
import { sha256 } from '../util/crypto.js';
import { claimsForwarding, isNavigation, originalRequest, proxyTrust } from './forwarded.js';
import { identityHeaders, type Identity } from './identity-headers.js';
import { forwardAuthVersion, STALE, type ProtectedHosts, type ProtectedSite } from './protected-hosts.js';
import { findLiveSiteSession, SITE_COOKIE, siteSessionsEndedCount } from './site-sessions.js';
import { findMember, groupsOfPerson } from './members.js';
import { passesGroupRule } from '../applications/group-rule.js';
import { groupsClaim } from '../oauth/claims/compose.js';
import { verifyAppPassword } from '../app-passwords/verify.js';

/** How long a decision about one credential is reused: well inside the 5-second revocation bound. */
export const DECISION_TTL_MS = 2_000;
/** Decisions remembered at once (the oldest forgotten first). */
const DECISION_CACHE_SIZE = 20_000;

export const FORWARD_PATH = '/api/auth/forward';
export const AUTH_REQUEST_PATH = '/api/auth/forward/auth-request';
export const START_PATH = '/api/auth/forward/start';
/** The header in which a proxy configuration names the application it was printed for. */
export const APPLICATION_HEADER = 'X-Gatehouse-Application';
const APPLICATION_HEADER_KEY = 'x-gatehouse-application';

export type Endpoint = 'forward' | 'auth-request';

/** Forward-auth checks (spec forward-auth.md): 200, a redirect (or the 401 a proxy turns into one), or 401/403. */
export type ForwardAuthResult = 'allowed' | 'redirected' | 'refused';

/** `gatehouse_forward_auth_checks_total{result}`: each answer counted once, by whoever sends it (check-routes.ts). */
export const FORWARD_AUTH_CHECKS = {
  name: 'gatehouse_forward_auth_checks_total',
  help: 'Forward-auth checks by result (allowed, redirected, refused).',
  labelNames: ['result'],
} as const;

export type RefusalReason = 'suspended' | 'not_member' | 'group_missing' | 'no_person' | 'disabled';

/** What the credential earns at this application; `headers`: the whole 200 answer's, frozen (shared by every answer). */
type Verdict =
  | { kind: 'allowed'; headers: Readonly<Record<string, string>> }
  | { kind: 'step_up' }
  | { kind: 'refused'; reason: RefusalReason; email: string };

/** An answer the early path and the routes both send; `page` asks the route for the hosted refusal page. */
export type CheckAnswer =
  | { status: number; headers: Record<string, string>; body: string }
  | { page: 'refused'; app: Application; reason: RefusalReason; email: string; startPath: string };

/**
 * An answer and how it is counted (`gatehouse_forward_auth_checks_total{result}`, plugin.ts):
 * the sender counts it, once. Checks are counted, never logged one by one (spec).
 */
export interface Checked {
  answer: CheckAnswer;
  result: ForwardAuthResult;
}

interface Remembered {
  verdict: Verdict;
  applicationId: string;
  host: string;
  until: number;
  apps: number;
  ended: number;
}

const NO_STORE = { 'cache-control': 'no-store' };
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

function problem(status: number, code: string, detail: string, headers: Record<string, string> = {}): CheckAnswer {
  const title = status === 401 ? 'Unauthorized' : 'Forbidden';
  return {
    status,
    headers: { ...NO_STORE, 'content-type': PROBLEM_TYPE, ...headers },
    body: JSON.stringify({ type: `https://gatehouse.dev/problems/${code.replaceAll('_', '-')}`, title, status, detail, code }),
  };
}

/** The site cookie's value in a `Cookie` header, without parsing the others. */
export function siteCookie(header: string | string[] | undefined): string | undefined {
  const text = Array.isArray(header) ? header.join('; ') : header;
  if (!text) return undefined;
  const match = /(?:^|;\s*)gatehouse_site=([A-Za-z0-9_-]{1,100})(?:;|\s|$)/.exec(text);
  return match?.[1];
}
// The pattern above names the cookie; keep it in step with the constant.
if (SITE_COOKIE !== 'gatehouse_site') throw new Error('site cookie name changed: update siteCookie()');

export class ForwardCheck {
  private readonly trusted: (address: string) => boolean;
  private readonly decisions = new Map<string, Remembered>();

  constructor(
    private readonly ctx: AppContext,
    private readonly hosts: ProtectedHosts,
    private readonly keys: KeyRing,
  ) {
    this.trusted = proxyTrust(ctx.config);
  }

  /**
   * Decides one check from the proxy at `peer` (the sender counts it). Never throws for bad input.
   * A busy site's check — a site cookie whose decision is remembered — is answered at once, without
   * a promise (each costs a few microseconds with the request's AsyncLocalStorage, client-address.ts).
   */
  decide(endpoint: Endpoint, peer: string, headers: IncomingHttpHeaders): Checked | Promise<Checked> {
    return this.fromMemory(endpoint, peer, headers) ?? this.decideNow(endpoint, peer, headers);
  }

  /** The answer when everything it needs is in memory and it admits; undefined sends the check the awaited way. */
  private fromMemory(endpoint: Endpoint, peer: string, headers: IncomingHttpHeaders): Checked | undefined {
    const token = siteCookie(headers.cookie);
    if (!token || !this.trusted(peer)) return undefined;
    const site = this.hosts.inMemory(originalRequest(endpoint, headers).host);
    if (!site || site === STALE || configurationRefusal(endpoint, headers, site)) return undefined;
    const known = this.remembered(`c:${sha256(token)}`, site);
    return known?.kind === 'allowed' ? { answer: { status: 200, headers: known.headers, body: '' }, result: 'allowed' } : undefined;
  }

  private async decideNow(endpoint: Endpoint, peer: string, headers: IncomingHttpHeaders): Promise<Checked> {
    const refused = (answer: CheckAnswer) => ({ answer, result: 'refused' as const });
    if (!this.trusted(peer)) {
      return refused(claimsForwarding(headers)
        ? problem(403, 'untrusted_proxy', 'Forwarded request headers are accepted only from the proxies named by GATEHOUSE_TRUST_PROXY.')
        : problem(403, 'host_not_protected', 'The request does not say which protected host it is for.'));
    }
    const original = originalRequest(endpoint, headers);
    const site = await this.hosts.find(original.host);
    if (!site) return refused(problem(403, 'host_not_protected', 'No application protects this host.'));
    const mismatch = configurationRefusal(endpoint, headers, site);
    if (mismatch) return refused(mismatch);

    const navigation = isNavigation(headers, original.method);
    const verdict = await this.verdictOf(site, headers);
    if (verdict && 'invalid' in verdict) {
      return refused(problem(401, 'invalid_token', verdict.invalid, { 'www-authenticate': `Bearer realm="gatehouse", error="invalid_token", error_description="${verdict.invalid}"` }));
    }
    if (verdict && 'wrongPassword' in verdict) {
      return refused(problem(401, 'invalid_credentials', 'The name or app password is not right for this site.', { 'www-authenticate': basicChallenge(site.app) }));
    }
    if (verdict?.kind === 'allowed') return { answer: { status: 200, headers: verdict.headers, body: '' }, result: 'allowed' };
    if (verdict?.kind === 'refused') {
      if (endpoint === 'forward' && navigation) {
        return refused({ page: 'refused', app: site.app, reason: verdict.reason, email: verdict.email, startPath: this.startPath(original.proto, original.host!, original.uri) });
      }
      return refused(problem(403, 'access_refused', refusalText(site.app, verdict.reason)));
    }
    // No credential, or a second factor missing: the start URL signs in (or steps up) and comes back.
    if (navigation) {
      if (endpoint === 'forward') {
        return { answer: { status: 302, headers: { ...NO_STORE, location: this.startUrl(original.proto, original.host!, original.uri) }, body: '' }, result: 'redirected' };
      }
      // nginx turns this 401 into the redirect, reading the start URL from Location (snippets.ts).
      const answer = this.unauthorized(site.app) as Extract<CheckAnswer, { status: number }>;
      answer.headers.location = this.startUrl(original.proto, original.host!, original.uri);
      return { answer, result: 'redirected' };
    }
    return refused(this.unauthorized(site.app));
  }

  /** `/api/auth/forward/start?rd=<the original URL>` on the issuer. */
  startUrl(proto: string, host: string, uri: string): string {
    return `${this.ctx.config.issuer}${this.startPath(proto, host, uri)}`;
  }

  startPath(proto: string, host: string, uri: string): string {
    return `${START_PATH}?${new URLSearchParams({ rd: `${proto}://${host}${uri}` }).toString()}`;
  }

  private unauthorized(app: Application): CheckAnswer {
    const challenges = ['Bearer realm="gatehouse"', ...(app.forwardAuth?.basic ? [basicChallenge(app)] : [])];
    return problem(401, 'unauthorized', 'Sign in to use this site.', { 'www-authenticate': challenges.join(', ') });
  }

  /**
   * The verdict on the request's credential: undefined when it has none usable, `invalid` for a bad
   * Bearer token, `wrongPassword` for HTTP Basic that is not an app password of this application.
   */
  private async verdictOf(site: ProtectedSite, headers: IncomingHttpHeaders): Promise<Verdict | { invalid: string } | { wrongPassword: true } | undefined> {
    const token = siteCookie(headers.cookie);
    if (token) {
      const key = `c:${sha256(token)}`;
      const known = this.remembered(key, site);
      if (known) return known;
      const verdict = await this.siteSessionVerdict(site, key.slice(2));
      if (verdict) return this.remember(key, site, verdict);
    }
    if (typeof headers.authorization === 'string' && /^bearer /i.test(headers.authorization)) {
      const key = `b:${sha256(headers.authorization)}`;
      const known = this.remembered(key, site);
      if (known) return known;
      const verdict = await this.bearerVerdict(site, headers);
      return 'invalid' in verdict ? verdict : this.remember(key, site, verdict);
    }
    const basic = site.app.forwardAuth?.basic ? basicCredentials(headers.authorization) : undefined;
    if (basic) {
      const key = `p:${sha256(headers.authorization as string)}`;
      const known = this.remembered(key, site);
      if (known) return known;
      const match = await verifyAppPassword(this.ctx, { applicationId: site.app.id, ...basic });
      const member = match ? await findMember(this.ctx.db, site.app.id, match.person.id) : undefined;
      if (!member) return { wrongPassword: true };
      return this.remember(key, site, await this.judge(site.app, member.person, member.membership, null));
    }
    return undefined;
  }

  private async siteSessionVerdict(site: ProtectedSite, tokenHash: string): Promise<Verdict | undefined> {
    const row = await findLiveSiteSession(this.ctx.db, tokenHash, this.ctx.clock.now());
    // A cookie of another host (copied by hand) or application is no credential here.
    if (!row || row.applicationId !== site.app.id || row.host !== site.host.host) return undefined;
    return this.judge(site.app, row.person, row.membership, row.amr);
  }

  private async bearerVerdict(site: ProtectedSite, headers: IncomingHttpHeaders): Promise<Verdict | { invalid: string }> {
    let claims;
    try {
      claims = await verifyAccessToken(this.ctx, this.keys, { headers });
    } catch {
      return { invalid: 'The access token is invalid, expired or revoked.' };
    }
    const audience = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!audience.includes(site.app.audience)) return { invalid: 'The access token is for another audience.' };
    const member = typeof claims.sub === 'string' && claims.app_user ? await findMember(this.ctx.db, site.app.id, claims.sub) : undefined;
    // A client-credentials token acts for the application itself, not a person the site can name.
    if (!member) return { kind: 'refused', reason: 'no_person', email: '' };
    return this.judge(site.app, member.person, member.membership, null);
  }

  /** The application's rules (spec "A protected site is an application"); `amr` null: not asked (a token). */
  private async judge(
    app: Application,
    person: { id: string; email: string; name: string | null; username: string; status: string },
    membership: { status: string; role: string } | null,
    amr: AuthMethod[] | null,
  ): Promise<Verdict> {
    // Disabling a person ends their sessions; a token or app password of theirs stops here too.
    if (person.status !== 'active') return { kind: 'refused', reason: 'disabled', email: person.email };
    if (!membership) return { kind: 'refused', reason: 'not_member', email: person.email };
    if (membership.status !== 'active') return { kind: 'refused', reason: 'suspended', email: person.email };
    const groups = await groupsOfPerson(this.ctx.db, person.id);
    if (!passesGroupRule(app, groups)) return { kind: 'refused', reason: 'group_missing', email: person.email };
    if (amr && mfaRequired(app) && !isMultiFactor(amr)) return { kind: 'step_up' };
    // Remote-Groups says what the `groups` claim would: kept to the application's `groupsFilter`.
    const identity: Identity = { username: person.username, email: person.email, name: person.name, groups: groupsClaim(groups, app.groupsFilter), role: membership.role };
    return { kind: 'allowed', headers: Object.freeze({ ...NO_STORE, ...identityHeaders(identity) }) };
  }

  private remembered(key: string, site: ProtectedSite): Verdict | undefined {
    const entry = this.decisions.get(key);
    if (!entry) return undefined;
    if (entry.until <= Date.now() || entry.apps !== forwardAuthVersion() || entry.ended !== siteSessionsEndedCount()) {
      this.decisions.delete(key);
      return undefined;
    }
    return entry.applicationId === site.app.id && entry.host === site.host.host ? entry.verdict : undefined;
  }

  private remember(key: string, site: ProtectedSite, verdict: Verdict): Verdict {
    if (this.decisions.size >= DECISION_CACHE_SIZE) this.decisions.delete(this.decisions.keys().next().value!);
    this.decisions.set(key, {
      verdict, applicationId: site.app.id, host: site.host.host,
      until: Date.now() + DECISION_TTL_MS, apps: forwardAuthVersion(), ended: siteSessionsEndedCount(),
    });
    return verdict;
  }
}

/**
 * The refusal when the asking configuration was made for another application than the host's, or
 * (nginx) names none; undefined when it may ask about this host.
 */
function configurationRefusal(endpoint: Endpoint, headers: IncomingHttpHeaders, site: ProtectedSite): CheckAnswer | undefined {
  const raw = headers[APPLICATION_HEADER_KEY];
  const named = Array.isArray(raw) ? raw[0] : raw;
  if (named === undefined) {
    if (endpoint === 'forward') return undefined;
    return problem(403, 'configuration_outdated',
      `This nginx configuration does not name its application (${APPLICATION_HEADER}), so it could pass another application's host: print it again (gatehouse app show <id> --proxy nginx).`);
  }
  if (named === site.app.id) return undefined;
  return problem(403, 'host_mismatch', 'This host belongs to another application than the one this proxy configuration was made for.');
}

/** The Basic challenge of an application's protected hosts (RFC 7617): its name as the realm, UTF-8. */
function basicChallenge(app: Application): string {
  return `Basic realm="${app.name.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '')}", charset="UTF-8"`;
}

/** `Authorization: Basic` (RFC 7617 §2) as a login and a password, or undefined. */
function basicCredentials(header: string | undefined): { login: string; password: string } | undefined {
  const match = header ? /^Basic[ ]+([A-Za-z0-9+/]+=*)[ ]*$/i.exec(header) : null;
  if (!match || match[1]!.length > 1000) return undefined;
  const text = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon > 0 ? { login: text.slice(0, colon), password: text.slice(colon + 1) } : undefined;
}

/** A sentence for a refusal (problem details; the hosted page words it in the reader's language). */
export function refusalText(app: Application, reason: RefusalReason): string {
  switch (reason) {
    case 'suspended': return `Your access to ${app.name} is suspended.`;
    case 'not_member': return `You are not a member of ${app.name}.`;
    case 'group_missing': return `${app.name} is open only to members of certain groups.`;
    case 'no_person': return `${app.name} needs a token that acts for a person.`;
    case 'disabled': return 'This account is disabled.';
  }
}
