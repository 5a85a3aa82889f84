import { describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { PAGE_CSP } from '../../server/pages/render.js';
import { redirectSources } from '../../server/pages/sign-in-pages.js';
import { Registries } from '../../server/plugin-api/registries.js';
import type { Application } from '../../server/db/schema.js';
import { makeApp, type TestApp } from '../helpers/app.js';
import { PASSWORD, cookieValue, createApplication, sessionCookieOf, signUp } from '../helpers/accounts.js';

const RESUME = '/api/auth/oauth2/authorize?client_id=notes&response_type=code&state=s%26t';

function csrfFrom(res: LightMyRequestResponse): string {
  const match = /name="csrf_token" value="([^"]+)"/.exec(res.body);
  expect(match).not.toBeNull();
  return match![1]!;
}

async function openPage(t: TestApp, url: string, cookie = '') {
  const res = await t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });
  const csrfCookie = cookieValue(res, 'gatehouse_csrf');
  return { res, cookie: [cookie, csrfCookie ? `gatehouse_csrf=${csrfCookie}` : ''].filter(Boolean).join('; ') };
}

function postForm(t: TestApp, url: string, fields: Record<string, string>, cookie: string) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    payload: new URLSearchParams(fields).toString(),
  });
}

describe('hosted sign-in page', () => {
  it('shows the application name, its allowed and configured providers, with a strict CSP', async () => {
    const t = await makeApp({ config: { env: { GITHUB_CLIENT_ID: 'id', GITHUB_CLIENT_SECRET: 'secret' } } });
    await createApplication(t, { name: 'Notes <b>&</b>', authPolicy: { allowed_providers: ['email', 'github', 'google'] } });
    const { res } = await openPage(t, `/sign-in?client_id=notes&return_to=${encodeURIComponent(RESUME)}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    // The form's answer redirects on to the application, so its redirect origin is a form-action source.
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self' https://notes.example.com; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain('Sign in to Notes &lt;b&gt;&amp;&lt;/b&gt;');
    expect(res.body).not.toContain('<b>&</b>');
    expect(res.body).toContain('href="/api/auth/sign-in/github?client_id=notes&amp;return_to=');
    expect(res.body).not.toContain('/api/auth/sign-in/google');
    expect(res.body).toContain('name="password"');
    expect(res.body).not.toContain('/sign-up?'); // invite_only by default
    const cookies = [res.headers['set-cookie']].flat().map(String);
    expect(cookies.find((c) => c.startsWith('gatehouse_csrf='))).toMatch(/^gatehouse_csrf=[A-Za-z0-9_-]{43}; Max-Age=86400; Path=\/; HttpOnly; SameSite=Lax$/);
    // Invite-only: the request is remembered for the invitation pages, which finish it after joining (issue 25).
    expect(cookies.find((c) => c.startsWith('gatehouse_resume='))).toBe(
      'gatehouse_resume=%2Fapi%2Fauth%2Foauth2%2Fauthorize%3Fclient_id%3Dnotes%26response_type%3Dcode%26state%3Ds%2526t; Max-Age=3600; Path=/invite/; HttpOnly; SameSite=Lax',
    );
    const css = await t.app.inject({ method: 'GET', url: '/assets/gatehouse.css' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('offers sign-up only where the policy is open and hides the e-mail form when not allowed', async () => {
    const t = await makeApp();
    await createApplication(t, { authPolicy: { signup_policy: 'open' } });
    await createApplication(t, { id: 'gh-only', audience: 'g', authPolicy: { signup_policy: 'open', allowed_providers: ['github'] } });
    const open = await openPage(t, '/sign-in?client_id=notes');
    expect(open.res.body).toContain('href="/sign-up?client_id=notes&amp;return_to=%2Faccount"');
    const ghOnly = await openPage(t, '/sign-in?client_id=gh-only');
    expect(ghOnly.res.body).not.toContain('name="password"');
    expect(ghOnly.res.body).not.toContain('/sign-up?');
    const closedSignUp = await openPage(t, '/sign-up?client_id=gh-only');
    expect(closedSignUp.res.statusCode).toBe(403);
    expect(closedSignUp.res.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('renders an HTML error page for an unknown application', async () => {
    const t = await makeApp();
    const { res } = await openPage(t, '/sign-in?client_id=nope');
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain('not known to this server');
    expect(res.headers['content-security-policy']).toBe(PAGE_CSP);
  });

  it('signs in with the CSRF token and 303s to the authorization request', async () => {
    const t = await makeApp();
    await createApplication(t, { authPolicy: { signup_policy: 'open' } });
    expect((await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: 'notes' })).statusCode).toBe(201);
    const page = await openPage(t, `/sign-in?client_id=notes&return_to=${encodeURIComponent(RESUME)}`);
    const fields = { csrf_token: csrfFrom(page.res), client_id: 'notes', return_to: RESUME, email: 'ada@example.com', password: PASSWORD };

    const noToken = await postForm(t, '/sign-in', { ...fields, csrf_token: '' }, page.cookie);
    expect(noToken.statusCode).toBe(403);
    expect(noToken.headers['content-type']).toBe('text/html; charset=utf-8');
    const noCookie = await postForm(t, '/sign-in', fields, '');
    expect(noCookie.statusCode).toBe(403);

    const wrong = await postForm(t, '/sign-in', { ...fields, password: 'wrong password' }, page.cookie);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('The e-mail address or password is not correct.');
    expect(wrong.body).toContain('value="ada@example.com"');

    const ok = await postForm(t, '/sign-in', fields, page.cookie);
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe(RESUME);
    const session = sessionCookieOf(ok);

    // With a session the page offers "Continue as" (password again), and never redirects off-site.
    const again = await openPage(t, '/sign-in?client_id=notes&return_to=https%3A%2F%2Fevil.example%2F', `gatehouse_session=${session}`);
    expect(again.res.body).toContain('Continue as Ada');
    expect(again.res.body).toContain('name="return_to" value="/account"');
    const cont = await postForm(
      t,
      '/sign-in',
      { ...fields, return_to: 'https://evil.example/', csrf_token: csrfFrom(again.res) },
      `${again.cookie}`,
    );
    expect(cont.statusCode).toBe(303);
    expect(cont.headers.location).toBe('/account');
  });

  it('signs up through the form where the policy is open', async () => {
    const t = await makeApp();
    await createApplication(t, { authPolicy: { signup_policy: 'open' } });
    const page = await openPage(t, `/sign-up?client_id=notes&return_to=${encodeURIComponent(RESUME)}`);
    expect(page.res.statusCode).toBe(200);
    const fields = { csrf_token: csrfFrom(page.res), client_id: 'notes', return_to: RESUME, name: 'Ada', email: 'ada@example.com', password: 'short' };
    const short = await postForm(t, '/sign-up', fields, page.cookie);
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('Password: must be 8 to 256 characters long');
    const ok = await postForm(t, '/sign-up', { ...fields, password: PASSWORD }, page.cookie);
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe(RESUME);
    expect(sessionCookieOf(ok)).toBeTruthy();
    const dup = await postForm(t, '/sign-up', { ...fields, password: PASSWORD }, page.cookie);
    expect(dup.statusCode).toBe(409);
  });
});

describe('hosted form rate limit', () => {
  it('answers 429 as an HTML page with Retry-After', async () => {
    const t = await makeApp();
    for (let i = 0; i < 30; i++) expect((await postForm(t, '/sign-in', { email: 'a@b.c', password: 'x' }, '')).statusCode).toBe(403);
    const res = await postForm(t, '/sign-in', { email: 'a@b.c', password: 'x' }, '');
    expect(res.statusCode).toBe(429);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.body).toContain('Too many attempts');
  });
});

describe('redirectSources', () => {
  it('lists redirect origins, any port for native loopback, bare custom schemes, no IPv6 literals', () => {
    const app = (clientType: string, redirectUris: string[]) => ({ clientType, redirectUris }) as unknown as Application;
    // No browser flow of a plugin adds its targets (forward auth's hosts: forward-auth-*.test.ts).
    const ctx = { registries: new Registries() };
    expect(redirectSources(ctx, app('web', ['https://a.example/cb', 'https://a.example/other', 'http://10.0.0.5:3000/cb']))).toEqual([
      'https://a.example',
      'http://10.0.0.5:3000',
    ]);
    expect(redirectSources(ctx, app('native', ['http://127.0.0.1/cb', 'com.example.notes:/cb', 'http://[::1]/cb']))).toEqual([
      'http://127.0.0.1:*',
      'com.example.notes:',
    ]);
  });
});
