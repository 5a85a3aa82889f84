/**
 * OAuth helpers for inject tests: applications, a signed-in session, authorize and token calls,
 * and the pieces of their answers.
 */
import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.js';
import { createApplication, sessionCookieOf, signUp } from './accounts.js';
import { pkcePair } from './oauth-server.js';

export const SPA_REDIRECT = 'http://127.0.0.1:5173/callback';
export const WEB_REDIRECT = 'https://billing.example.com/callback';

export interface Clients {
  spa: { id: string; audience: string };
  web: { id: string; audience: string; clientSecret: string };
  cookie: string;
}

/** An open `spa` app and an open `web` app, and a person signed in to the spa app (cookie header). */
export async function setUpClients(t: TestApp): Promise<Clients> {
  const spa = await createApplication(t, {
    id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: [SPA_REDIRECT],
    authPolicy: { signup_policy: 'open' },
  });
  const web = await createApplication(t, {
    id: 'billing', name: 'Billing', audience: 'https://billing.example.com/api', clientType: 'web', redirectUris: [WEB_REDIRECT],
    authPolicy: { signup_policy: 'open' },
  });
  const res = await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: 'notes' });
  expect(res.statusCode).toBe(201);
  return { spa, web, cookie: `gatehouse_session=${sessionCookieOf(res)}` };
}

export function authorizeUrl(params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) query.set(k, v);
  return `/api/auth/oauth2/authorize?${query.toString()}`;
}

export function authorize(t: TestApp, params: Record<string, string | undefined>, cookie?: string) {
  return t.app.inject({ method: 'GET', url: authorizeUrl(params), headers: cookie ? { cookie } : {} });
}

/** The redirect's URL (must be a 302). */
export function location(res: LightMyRequestResponse): URL {
  expect(res.statusCode, res.body).toBe(302);
  return new URL(String(res.headers.location), 'http://gatehouse.invalid');
}

/** Standard spa authorize parameters with a fresh PKCE pair. */
export function spaParams(extra: Record<string, string | undefined> = {}) {
  const pkce = pkcePair();
  return {
    pkce,
    params: {
      response_type: 'code', client_id: 'notes', redirect_uri: SPA_REDIRECT, scope: 'openid offline_access', state: 'xyz',
      code_challenge: pkce.challenge, code_challenge_method: 'S256', ...extra,
    } as Record<string, string | undefined>,
  };
}

export function token(t: TestApp, form: Record<string, string | undefined>, headers: Record<string, string> = {}) {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) if (v !== undefined) body.set(k, v);
  return t.app.inject({
    method: 'POST',
    url: '/api/auth/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: body.toString(),
  });
}

/** Authorizes the spa client and exchanges the code; returns the token response body. */
export async function spaTokens(t: TestApp, cookie: string, extra: Record<string, string | undefined> = {}) {
  const { pkce, params } = spaParams(extra);
  const code = location(await authorize(t, params, cookie)).searchParams.get('code')!;
  expect(code).toBeTruthy();
  const res = await token(t, { grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: 'notes', code_verifier: pkce.verifier });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { access_token: string; refresh_token?: string; id_token?: string; scope: string; expires_in: number };
}

/** Asserts an RFC 6749 error answer. */
export function expectOAuthError(res: LightMyRequestResponse, status: number, error: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.json().error).toBe(error);
  expect(typeof res.json().error_description).toBe('string');
}

/**
 * The access-refused page (issue 25): 403 HTML naming the reason; answers its "Back to <app>"
 * link, which carries the OAuth error to the registered redirect URI.
 */
export function refusedBack(res: LightMyRequestResponse, reason: 'suspended' | 'invite_only' | 'closed'): URL {
  expect(res.statusCode, res.body).toBe(403);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.body).toContain(`data-reason="${reason}"`);
  const href = /<a class="button secondary" href="([^"]+)" data-back>/.exec(res.body)?.[1];
  expect(href, 'the back link').toBeTruthy();
  return new URL(href!.replaceAll('&amp;', '&'));
}
