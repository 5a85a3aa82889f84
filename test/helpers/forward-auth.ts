/**
 * Forward-auth helpers for inject tests: a protected application, the hand-over (start → callback)
 * as a browser goes through it, and checks as Caddy (`/api/auth/forward`) and nginx
 * (`/api/auth/forward/auth-request`) send them.
 */
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { cookieValue, createApplication, sessionCookieOf, signUp } from './accounts.js';

export const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** A web application protecting `hosts` (open sign-up unless overridden). */
export async function protectedApp(t: TestApp, id: string, hosts: string[], overrides: Record<string, unknown> = {}) {
  return createApplication(t, {
    id, name: id[0]!.toUpperCase() + id.slice(1), audience: `https://${id}.example.com/api`, redirectUris: [`https://${id}.example.com/callback`],
    clientType: 'web', authPolicy: { signup_policy: 'open' }, forwardAuth: { hosts }, ...overrides,
  });
}

/** Signs a new person up for `applicationId`; returns the issuer's session cookie header. */
export async function personCookie(t: TestApp, email: string, applicationId: string, name?: string): Promise<string> {
  const res = await signUp(t, { email, applicationId, ...(name ? { name } : {}) });
  expect(res.statusCode, res.body).toBe(201);
  return `gatehouse_session=${sessionCookieOf(res)}`;
}

export function start(t: TestApp, rd: string, cookie?: string) {
  return t.app.inject({ method: 'GET', url: `/api/auth/forward/start?${new URLSearchParams({ rd }).toString()}`, headers: cookie ? { cookie } : {} });
}

/** `/.gatehouse/callback` on `host` as the proxy forwards it. */
export function callback(t: TestApp, host: string, query: string, headers: Record<string, string> = {}, proxy = '127.0.0.1') {
  return t.app.inject({
    method: 'GET', url: `/.gatehouse/callback?${query}`, remoteAddress: proxy,
    headers: { host, 'x-forwarded-host': host, 'x-forwarded-proto': 'http', ...headers },
  });
}

/** `/.gatehouse/start` on `host` as the proxy forwards it (the verifier cookie's end of the hand-over). */
export function hostStart(t: TestApp, host: string, rd: string, headers: Record<string, string> = {}, proxy = '127.0.0.1') {
  return t.app.inject({
    method: 'GET', url: `/.gatehouse/start?${new URLSearchParams({ rd }).toString()}`, remoteAddress: proxy,
    headers: { host, 'x-forwarded-host': host, 'x-forwarded-proto': new URL(rd).protocol.slice(0, -1), ...headers },
  });
}

/**
 * A signed-in browser's hand-over up to the callback: start (sent to the host's
 * `/.gatehouse/start`), the host's verifier cookie, start again with its challenge. Returns the
 * callback URL and the `Cookie` header that browser holds for the host (`state`).
 */
export async function handOver(t: TestApp, rd: string, sessionCookie: string, state?: string, proxy = '127.0.0.1'): Promise<{ to: URL; state: string }> {
  const first = await start(t, rd, sessionCookie);
  expect(first.statusCode, first.body).toBe(302);
  const bounce = new URL(String(first.headers.location));
  expect(`${bounce.origin}${bounce.pathname}`).toBe(`${new URL(rd).origin}/.gatehouse/start`);
  const atHost = await hostStart(t, bounce.host, rd, state ? { cookie: state } : {}, proxy);
  expect(atHost.statusCode, atHost.body).toBe(302);
  const name = rd.startsWith('https:') ? '__Host-gatehouse_state' : 'gatehouse_state';
  const held = state ?? `${name}=${cookieValue(atHost, name)}`;
  const back = new URL(String(atHost.headers.location));
  const second = await t.app.inject({ method: 'GET', url: `${back.pathname}${back.search}`, headers: { cookie: sessionCookie } });
  expect(second.statusCode, second.body).toBe(302);
  return { to: new URL(String(second.headers.location)), state: held };
}

/** The whole hand-over for a signed-in browser: start, the host's verifier, callback; returns the site cookie's value. */
export async function siteSignIn(t: TestApp, sessionCookie: string, rd: string, proxy = '127.0.0.1'): Promise<string> {
  const { to, state } = await handOver(t, rd, sessionCookie, undefined, proxy);
  const back = await callback(t, to.host, to.search.slice(1), { cookie: state }, proxy);
  expect(back.statusCode, back.body).toBe(302);
  expect(back.headers.location).toBe(rd);
  const value = cookieValue(back, 'gatehouse_site');
  expect(value).toBeTruthy();
  return value!;
}

export interface CheckOptions {
  host: string;
  uri?: string;
  method?: string;
  site?: string;
  authorization?: string;
  browser?: boolean;
  peer?: string;
  /**
   * The application the nginx configuration names (`X-Gatehouse-Application`): by default the
   * host's first label (`wiki` for wiki.localhost, the tests' naming); null sends none.
   */
  application?: string | null;
  headers?: Record<string, string>;
}

/** The request a check is, as Caddy's `forward_auth` (`forward`) or the nginx snippet's `auth_request` sends it. */
export function checkRequest(endpoint: 'forward' | 'auth-request', o: CheckOptions): { url: string; headers: Record<string, string> } {
  return endpoint === 'forward'
    ? {
      url: '/api/auth/forward',
      headers: {
        'x-forwarded-proto': 'http', 'x-forwarded-host': o.host, 'x-forwarded-uri': o.uri ?? '/', 'x-forwarded-method': o.method ?? 'GET',
        ...common(o),
      },
    }
    : {
      url: '/api/auth/forward/auth-request',
      headers: {
        'x-original-url': `http://${o.host}${o.uri ?? '/'}`, 'x-original-method': o.method ?? 'GET',
        ...(o.application === null ? {} : { 'x-gatehouse-application': o.application ?? o.host.split('.', 1)[0]! }),
        ...common(o),
      },
    };
}

/** A check as Caddy's `forward_auth` sends it. */
export function forwardCheck(t: TestApp, o: CheckOptions): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', remoteAddress: o.peer ?? '127.0.0.1', ...checkRequest('forward', o) });
}

/** A check as the nginx snippet's `auth_request` sends it (naming its application). */
export function authRequestCheck(t: TestApp, o: CheckOptions): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', remoteAddress: o.peer ?? '127.0.0.1', ...checkRequest('auth-request', o) });
}

function common(o: CheckOptions): Record<string, string> {
  return {
    accept: o.browser ? BROWSER_ACCEPT : 'application/json',
    ...(o.site ? { cookie: `gatehouse_site=${o.site}` } : {}),
    ...(o.authorization ? { authorization: o.authorization } : {}),
    ...o.headers,
  };
}

/** The identity headers of a 200 check. */
export function identityOf(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBe(200);
  const h = res.headers;
  return { user: h['remote-user'], email: h['remote-email'], name: h['remote-name'], groups: h['remote-groups'], role: h['remote-role'] };
}

/** The start URL a check redirects a browser to, for the original `http://host/uri`. */
export const startUrlFor = (issuer: string, rd: string) => `${issuer}/api/auth/forward/start?${new URLSearchParams({ rd }).toString()}`;
