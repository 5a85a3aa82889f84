/**
 * Device authorization (RFC 8628, spec grants-and-logout.md) through `inject` with a fixed clock:
 * the device authorization endpoint's answer and errors, the hosted /device page (code entry,
 * sign-in first, the sign-up policy, approve and deny, wrong codes rate-limited), polling
 * (`authorization_pending`, `slow_down` with a growing interval, `access_denied`,
 * `expired_token`), tokens issued exactly once, and the device's own session (listed, signed out
 * with a back-channel logout). openid-client and a real browser drive it in device-flow.test.ts
 * and test/e2e/device-browser.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication, sessionCookieOf, signIn, signUp } from '../helpers/accounts.js';
import { expectOAuthError, token } from '../helpers/oauth-inject.js';
import { me } from '../helpers/self-service.js';
import { backchannelLogouts, deviceAuthorizations } from '../../server/db/schema.js';
import { sha256 } from '../../server/util/crypto.js';
import { one, many } from '../../server/db/store.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

async function setUp(options: { env?: Record<string, string>; policy?: string } = {}) {
  const t = await makeApp({ config: options.env ? { env: options.env } : {} });
  await createApplication(t, {
    id: 'tv', name: 'Lobby TV', audience: 'https://tv.example.com/api', clientType: 'native', redirectUris: ['http://127.0.0.1/callback'],
    grantTypes: [GRANT, 'refresh_token'], authPolicy: { signup_policy: options.policy ?? 'open' },
    backchannelLogoutUri: 'https://tv.example.com/logout',
  });
  return t;
}

function form(t: TestApp, url: string, body: Record<string, string>, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: new URLSearchParams(body).toString(),
  });
}

async function startDevice(t: TestApp, body: Record<string, string> = {}) {
  const res = await form(t, '/api/auth/oauth2/device_authorization', { client_id: 'tv', scope: 'openid offline_access', ...body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; expires_in: number; interval: number };
}

const poll = (t: TestApp, deviceCode: string) => token(t, { grant_type: GRANT, device_code: deviceCode, client_id: 'tv' });

/** A browser for the /device page: the session cookie plus the CSRF cookie it was handed. */
async function browser(t: TestApp, email = 'ada@example.com') {
  const res = await signUp(t, { email, name: 'Ada', applicationId: 'tv' });
  expect(res.statusCode).toBe(201);
  return { session: `gatehouse_session=${sessionCookieOf(res)}` };
}

function csrfOf(res: LightMyRequestResponse): { csrf: string; cookie: string } {
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(res.body)![1]!;
  const set = res.cookies.find((c) => c.name === 'gatehouse_csrf');
  return { csrf, cookie: set ? `gatehouse_csrf=${set.value}` : '' };
}

/** Opens the confirmation page for `userCode` and submits `action` with its CSRF token. */
async function decide(t: TestApp, cookie: string, userCode: string, action: 'approve' | 'deny') {
  const page = await t.app.inject({ method: 'GET', url: `/device?user_code=${userCode}`, headers: { cookie } });
  expect(page.statusCode, page.body).toBe(200);
  const { csrf, cookie: csrfCookie } = csrfOf(page);
  return form(t, '/device', { csrf_token: csrf, user_code: userCode, action }, { cookie: [cookie, csrfCookie].filter(Boolean).join('; ') });
}

describe('the device authorization endpoint', () => {
  it('answers RFC 8628 §3.2 JSON and stores only hashes of both codes', async () => {
    const t = await setUp();
    const res = await form(t, '/api/auth/oauth2/device_authorization', { client_id: 'tv', scope: 'openid' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['device_code', 'expires_in', 'interval', 'user_code', 'verification_uri', 'verification_uri_complete']);
    expect(body.device_code).toMatch(/^ghd_[A-Za-z0-9_-]{43}$/);
    expect(body.user_code).toMatch(CODE);
    expect(body.verification_uri).toBe(`${t.config.issuer}/device`);
    expect(body.verification_uri_complete).toBe(`${t.config.issuer}/device?user_code=${body.user_code}`);
    expect(body.expires_in).toBe(600);
    expect(body.interval).toBe(5);
    const row = (await one(t.db.select().from(deviceAuthorizations)))!;
    expect(row.deviceCodeHash).toBe(sha256(body.device_code));
    expect(row.userCodeHash).toBe(sha256(body.user_code.replace('-', '')));
    expect(JSON.stringify(row)).not.toContain(body.device_code);
    expect(JSON.stringify(row)).not.toContain(body.user_code.replace('-', ''));
    expect(row).toMatchObject({ scope: 'openid', resource: 'https://tv.example.com/api', status: 'pending', interval: 5 });
  });

  it('refuses what it must: grant not allowed, unknown client, missing scope, another audience', async () => {
    const t = await setUp();
    await createApplication(t, { id: 'notes', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: ['https://notes.example.com/cb'] });
    expectOAuthError(await form(t, '/api/auth/oauth2/device_authorization', { client_id: 'notes', scope: 'openid' }), 400, 'unauthorized_client');
    expectOAuthError(await form(t, '/api/auth/oauth2/device_authorization', { client_id: 'nobody', scope: 'openid' }), 401, 'invalid_client');
    expectOAuthError(await form(t, '/api/auth/oauth2/device_authorization', { client_id: 'tv' }), 400, 'invalid_scope');
    expectOAuthError(await form(t, '/api/auth/oauth2/device_authorization', { client_id: 'tv', scope: 'openid admin' }), 400, 'invalid_scope');
    expectOAuthError(
      await form(t, '/api/auth/oauth2/device_authorization', { client_id: 'tv', scope: 'openid', resource: 'https://notes.example.com/api' }),
      400, 'invalid_target',
    );
    // A token request with the device grant by an application without it.
    expectOAuthError(await token(t, { grant_type: GRANT, device_code: 'ghd_x', client_id: 'notes' }), 400, 'unauthorized_client');
  });

  it('a confidential client authenticates with its secret', async () => {
    const t = await setUp();
    const web = await createApplication(t, {
      id: 'cli', audience: 'https://cli.example.com/api', clientType: 'web', redirectUris: ['https://cli.example.com/cb'], grantTypes: [GRANT],
    });
    expectOAuthError(await form(t, '/api/auth/oauth2/device_authorization', { client_id: 'cli', scope: 'openid' }), 401, 'invalid_client');
    const ok = await form(t, '/api/auth/oauth2/device_authorization', { client_id: 'cli', client_secret: web.clientSecret, scope: 'openid' });
    expect(ok.statusCode).toBe(200);
  });

  it('limits how many device sign-ins one address starts a minute', async () => {
    const t = await setUp({ env: { GATEHOUSE_DEVICE_AUTHORIZATION_RATE_LIMIT: '2' } });
    await startDevice(t);
    await startDevice(t);
    const res = await form(t, '/api/auth/oauth2/device_authorization', { client_id: 'tv', scope: 'openid' });
    expectOAuthError(res, 429, 'slow_down');
    expect(res.headers['retry-after']).toBe('60');
    t.clock.advance(60_000);
    await startDevice(t);
  });
});

describe('polling and the device page', () => {
  it('pending, slow_down with a growing interval, then approved tokens exactly once, in a session of the device', async () => {
    const t = await setUp();
    const device = await startDevice(t);
    expectOAuthError(await poll(t, device.device_code), 400, 'authorization_pending');
    t.clock.advance(1000);
    expectOAuthError(await poll(t, device.device_code), 400, 'slow_down');
    expect((await one(t.db.select().from(deviceAuthorizations)))!.interval).toBe(10);
    t.clock.advance(6000); // the old interval is no longer enough
    expectOAuthError(await poll(t, device.device_code), 400, 'slow_down');
    expect((await one(t.db.select().from(deviceAuthorizations)))!.interval).toBe(15);
    t.clock.advance(15_000);
    expectOAuthError(await poll(t, device.device_code), 400, 'authorization_pending');

    const { session } = await browser(t);
    const approved = await decide(t, session, device.user_code, 'approve');
    expect(approved.statusCode).toBe(200);
    expect(approved.body).toContain('Device connected');
    expect(approved.body).toContain('Lobby TV');

    t.clock.advance(15_000);
    const res = await poll(t, device.device_code);
    expect(res.statusCode, res.body).toBe(200);
    const tokens = res.json();
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: 'openid offline_access' });
    expect(tokens.refresh_token).toMatch(/^ghr_/);
    const id = decodeJwt(tokens.id_token);
    const access = decodeJwt(tokens.access_token);
    expect(access).toMatchObject({ aud: 'https://tv.example.com/api', client_id: 'tv', sid: id.sid, app_user: { status: 'active' } });
    expect(id).not.toHaveProperty('nonce');

    // The device has a session of its own, listed with the browser's.
    const sessions = (await me(t, 'GET', '/api/me/sessions', session)).json().sessions as { id: string; device: string; current: boolean }[];
    expect(sessions.find((s) => s.id === id.sid)).toMatchObject({ device: 'Lobby TV (device sign-in)', current: false });
    expect(sessions.find((s) => s.current)!.id).not.toBe(id.sid);

    t.clock.advance(15_000);
    expectOAuthError(await poll(t, device.device_code), 400, 'invalid_grant');
    // The code was used: the page refuses it too.
    const again = await t.app.inject({ method: 'GET', url: `/device?user_code=${device.user_code}`, headers: { cookie: session } });
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('That code has already been used.');

    // Signing the device out ends its tokens and tells the application.
    expect((await me(t, 'DELETE', `/api/me/sessions/${id.sid}`, session)).statusCode).toBe(204);
    expectOAuthError(await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'tv' }), 400, 'invalid_grant');
    expect(await many(t.db.select().from(backchannelLogouts).where(eq(backchannelLogouts.sessionId, id.sid as string)))).toHaveLength(1);
  });

  it('two polls racing after approval get one set of tokens between them', async () => {
    const t = await setUp();
    const device = await startDevice(t);
    const { session } = await browser(t);
    expect((await decide(t, session, device.user_code, 'approve')).statusCode).toBe(200);
    const answers = await Promise.all([poll(t, device.device_code), poll(t, device.device_code), poll(t, device.device_code)]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 400, 400]);
  });

  it('a denied request answers access_denied', async () => {
    const t = await setUp();
    const device = await startDevice(t);
    const { session } = await browser(t);
    const denied = await decide(t, session, device.user_code, 'deny');
    expect(denied.statusCode).toBe(200);
    expect(denied.body).toContain('Sign-in denied');
    expectOAuthError(await poll(t, device.device_code), 400, 'access_denied');
  });

  it('an expired code answers expired_token, and the page says so', async () => {
    const t = await setUp();
    const device = await startDevice(t);
    const { session } = await browser(t);
    t.clock.advance(600_000);
    expectOAuthError(await poll(t, device.device_code), 400, 'expired_token');
    const page = await t.app.inject({ method: 'GET', url: `/device?user_code=${device.user_code}`, headers: { cookie: session } });
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain('That code has expired.');
  });

  it('an unknown device code, or another client’s, is invalid_grant', async () => {
    const t = await setUp();
    expectOAuthError(await poll(t, 'ghd_not-a-real-code'), 400, 'invalid_grant');
  });
});

describe('the /device page', () => {
  it('takes a typed code in any case and spacing, and sends a stranger to sign in first (coming back here)', async () => {
    const t = await setUp();
    const device = await startDevice(t);
    const entry = await t.app.inject({ method: 'GET', url: '/device' });
    expect(entry.statusCode).toBe(200);
    expect(entry.headers['content-security-policy']).toContain("default-src 'none'");
    expect(entry.body).toContain('Type the code that your device');
    const { csrf, cookie } = csrfOf(entry);
    const typed = ` ${device.user_code.toLowerCase().replace('-', ' ')} `;
    const submitted = await form(t, '/device', { csrf_token: csrf, user_code: typed }, { cookie });
    expect(submitted.statusCode).toBe(303);
    expect(submitted.headers.location).toBe(`/device?user_code=${device.user_code}`);
    const stranger = await t.app.inject({ method: 'GET', url: `/device?user_code=${device.user_code}` });
    expect(stranger.statusCode).toBe(303);
    const to = new URL(String(stranger.headers.location), 'http://x');
    expect(to.pathname).toBe('/sign-in');
    expect(to.searchParams.get('client_id')).toBe('tv');
    expect(to.searchParams.get('return_to')).toBe(`/device?user_code=${device.user_code}`);

    // Signing in on the page comes back to the confirmation.
    expect((await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: 'tv' })).statusCode).toBe(201); // elsewhere
    const signInPage = await t.app.inject({ method: 'GET', url: String(stranger.headers.location) });
    const signInCsrf = csrfOf(signInPage);
    const signedIn = await form(
      t, '/sign-in',
      { csrf_token: signInCsrf.csrf, client_id: 'tv', return_to: `/device?user_code=${device.user_code}`, email: 'ada@example.com', password: 'correct horse battery' },
      { cookie: signInCsrf.cookie },
    );
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.headers.location).toBe(`/device?user_code=${device.user_code}`);
    const confirm = await t.app.inject({ method: 'GET', url: String(signedIn.headers.location), headers: { cookie: `gatehouse_session=${sessionCookieOf(signedIn)}` } });
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Connect a device to Lobby TV?');
    expect(confirm.body).toContain('Stay signed in until you sign it out');
    expect(confirm.body).toContain('ada@example.com');
  });

  it("applies the application's sign-up policy: a person it does not admit is told why, and the request waits", async () => {
    const t = await setUp({ policy: 'invite_only' });
    const device = await startDevice(t);
    await createApplication(t, { id: 'wiki', audience: 'https://wiki.example.com/api', clientType: 'spa', redirectUris: ['https://wiki.example.com/cb'], authPolicy: { signup_policy: 'open' } });
    const res = await signUp(t, { email: 'eve@example.com', name: 'Eve', applicationId: 'wiki' });
    const cookie = `gatehouse_session=${sessionCookieOf(res)}`;
    expect((await signIn(t, { email: 'eve@example.com', applicationId: 'tv' }, { cookie })).statusCode).toBe(200);
    const page = await t.app.inject({ method: 'GET', url: `/device?user_code=${device.user_code}`, headers: { cookie } });
    expect(page.statusCode).toBe(403);
    expect(page.body).toContain('Lobby TV is invitation-only: ask its administrator for an invitation');
    expect(page.body).not.toContain('name="action"');
    expect((await one(t.db.select().from(deviceAuthorizations)))!.status).toBe('pending');
  });

  it('limits wrong codes per address: 429 with Retry-After, then codes work again', async () => {
    const t = await setUp({ env: { GATEHOUSE_DEVICE_CODE_FAILURE_LIMIT: '3' } });
    const device = await startDevice(t);
    for (const wrong of ['BBBB-BBBB', 'not a code', 'CCCC-CCCC']) {
      const res = await t.app.inject({ method: 'GET', url: `/device?user_code=${encodeURIComponent(wrong)}` });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('That code is not valid.');
    }
    const blocked = await t.app.inject({ method: 'GET', url: `/device?user_code=${device.user_code}` });
    expect(blocked.statusCode).toBe(429);
    expect(blocked.headers['retry-after']).toBe('900');
    expect(blocked.body).toContain('Too many wrong codes.');
    t.clock.advance(900_000);
    const fresh = await startDevice(t);
    expect((await t.app.inject({ method: 'GET', url: `/device?user_code=${fresh.user_code}` })).statusCode).toBe(303);
  });

  it('refuses a decision without the form token', async () => {
    const t = await setUp();
    const device = await startDevice(t);
    const { session } = await browser(t);
    const res = await form(t, '/device', { user_code: device.user_code, action: 'approve' }, { cookie: session });
    expect(res.statusCode).toBe(403);
    expect((await one(t.db.select().from(deviceAuthorizations)))!.status).toBe('pending');
  });
});
