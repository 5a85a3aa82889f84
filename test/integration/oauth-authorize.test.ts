/** Every way an authorization request can fail or divert, with its exact answer (DESIGN §4.8, §4.10). */
import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication, insertInvitation, sessionCookieOf, signIn, signUp } from '../helpers/accounts.js';
import { memberships } from '../../server/db/schema.js';
import { authorize, location, refusedBack, setUpClients, SPA_REDIRECT, spaParams, WEB_REDIRECT } from '../helpers/oauth-inject.js';
import { exec } from '../../server/db/store.js';

async function setUp() {
  const t = await makeApp();
  return { t, ...(await setUpClients(t)) };
}

function expectErrorRedirect(res: Awaited<ReturnType<typeof authorize>>, t: TestApp, error: string, redirect = SPA_REDIRECT) {
  expectErrorUrl(location(res), t, error, redirect);
}

function expectErrorUrl(url: URL, t: TestApp, error: string, redirect = SPA_REDIRECT) {
  expect(url.origin + url.pathname).toBe(redirect);
  expect(url.searchParams.get('error')).toBe(error);
  expect(url.searchParams.get('error_description')).toBeTruthy();
  expect(url.searchParams.get('state')).toBe('xyz');
  expect(url.searchParams.get('iss')).toBe(t.config.issuer);
  expect(url.searchParams.get('code')).toBeNull();
}

describe('authorize: requests that must not redirect', () => {
  it('shows an error page for an unknown client, a missing or an unregistered redirect_uri', async () => {
    const { t, cookie } = await setUp();
    for (const params of [
      spaParams({ client_id: 'nope' }).params,
      spaParams({ client_id: undefined }).params,
      spaParams({ redirect_uri: undefined }).params,
      spaParams({ redirect_uri: 'https://evil.example.com/callback' }).params,
      spaParams({ redirect_uri: `${SPA_REDIRECT}/extra` }).params,
      spaParams({ redirect_uri: WEB_REDIRECT }).params, // another client's URI
    ]) {
      const res = await authorize(t, params, cookie);
      expect(res.statusCode).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toContain('This sign-in request cannot continue');
    }
  });

  it('escapes what it echoes on the error page', async () => {
    const { t } = await setUp();
    const res = await authorize(t, spaParams({ redirect_uri: 'x' }).params);
    expect(res.statusCode).toBe(400);
    expect(res.body).not.toContain('<script');
  });
});

describe('authorize: errors redirected with error, state and iss', () => {
  const cases: [string, Record<string, string | undefined>][] = [
    ['unsupported_response_type', { response_type: 'token' }],
    ['invalid_request', { response_type: undefined }],
    ['invalid_scope', { scope: 'openid admin' }],
    ['invalid_scope', { scope: undefined }],
    ['invalid_request', { code_challenge: undefined, code_challenge_method: undefined }],
    ['invalid_request', { code_challenge_method: 'plain' }],
    ['invalid_request', { code_challenge_method: undefined }],
    ['invalid_request', { code_challenge: 'too-short' }],
    ['invalid_target', { resource: 'https://billing.example.com/api' }],
    ['invalid_request', { prompt: 'create' }],
    ['invalid_request', { prompt: 'none login' }],
    ['invalid_request', { prompt: 'none consent' }],
    ['invalid_request', { max_age: '-1' }],
    ['invalid_request', { response_mode: 'fragment' }],
    ['request_not_supported', { request: 'eyJ.x.y' }],
  ];
  it('answers each invalid parameter with its error', async () => {
    const { t, cookie } = await setUp();
    for (const [error, extra] of cases) {
      const res = await authorize(t, spaParams(extra).params, cookie);
      expect(new URL(String(res.headers.location)).searchParams.get('error'), JSON.stringify(extra)).toBe(error);
      expectErrorRedirect(res, t, error);
    }
  });

  it('rejects a repeated parameter', async () => {
    const { t, cookie } = await setUp();
    const { params } = spaParams();
    const url = `/api/auth/oauth2/authorize?${new URLSearchParams(params as Record<string, string>).toString()}&scope=email`;
    expectErrorRedirect(await t.app.inject({ method: 'GET', url, headers: { cookie } }), t, 'invalid_request');
  });

  it('answers a repeated state with invalid_request and echoes neither value', async () => {
    const { t, cookie } = await setUp();
    const { params } = spaParams();
    const url = `/api/auth/oauth2/authorize?${new URLSearchParams(params as Record<string, string>).toString()}&state=other`;
    const answer = location(await t.app.inject({ method: 'GET', url, headers: { cookie } }));
    expect(answer.origin + answer.pathname).toBe(SPA_REDIRECT);
    expect(answer.searchParams.get('error')).toBe('invalid_request');
    expect(answer.searchParams.get('error_description')).toBe('The state parameter must not be repeated.');
    expect(answer.searchParams.get('state')).toBeNull();
    expect(answer.searchParams.get('code')).toBeNull();
  });

  it('lets a web client skip PKCE', async () => {
    const { t, cookie } = await setUp();
    await signIn(t, { email: 'ada@example.com', applicationId: 'billing' }, { cookie });
    const res = await authorize(t, { response_type: 'code', client_id: 'billing', redirect_uri: WEB_REDIRECT, scope: 'openid', state: 'xyz' }, cookie);
    expect(location(res).searchParams.get('code')).toBeTruthy();
  });
});

describe('authorize: sessions, realms, prompt and max_age', () => {
  it('answers with code, state and iss for a session of the realm', async () => {
    const { t, cookie } = await setUp();
    const url = location(await authorize(t, spaParams().params, cookie));
    expect([...url.searchParams.keys()].sort()).toEqual(['code', 'iss', 'state']);
    expect(url.searchParams.get('iss')).toBe(t.config.issuer);
  });

  it('sends a browser without a session to the hosted sign-in page, and prompt=none gets login_required', async () => {
    const { t } = await setUp();
    const { params } = spaParams();
    const url = location(await authorize(t, params));
    expect(url.pathname).toBe('/sign-in');
    expect(url.searchParams.get('client_id')).toBe('notes');
    const returnTo = url.searchParams.get('return_to')!;
    expect(returnTo.startsWith('/api/auth/oauth2/authorize?')).toBe(true);
    expect(new URLSearchParams(returnTo.split('?')[1]).get('code_challenge')).toBe(params.code_challenge);
    expectErrorRedirect(await authorize(t, { ...params, prompt: 'none' }), t, 'login_required');
  });

  it('accepts the request as a POSTed form too (OIDC Core §3.1.2.1), coming back from sign-in as a GET', async () => {
    const { t, cookie } = await setUp();
    const { params } = spaParams();
    const post = (headers: Record<string, string>) => t.app.inject({
      method: 'POST', url: '/api/auth/oauth2/authorize',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams(params as Record<string, string>).toString(),
    });
    const answered = location(await post({ cookie }));
    expect(answered.origin + answered.pathname).toBe(SPA_REDIRECT);
    expect([...answered.searchParams.keys()].sort()).toEqual(['code', 'iss', 'state']);

    const toSignIn = location(await post({}));
    expect(toSignIn.pathname).toBe('/sign-in');
    const back = new URL(toSignIn.searchParams.get('return_to')!, 'http://x');
    expect(back.pathname).toBe('/api/auth/oauth2/authorize');
    expect(Object.fromEntries(back.searchParams)).toEqual(params);
    expect(location(await authorize(t, Object.fromEntries(back.searchParams), cookie)).searchParams.get('code')).toBeTruthy();
  });

  it('prompt=login sends a signed-in person to sign in again, without prompt in return_to', async () => {
    const { t, cookie } = await setUp();
    const url = location(await authorize(t, spaParams({ prompt: 'login' }).params, cookie));
    expect(url.pathname).toBe('/sign-in');
    const back = new URLSearchParams(url.searchParams.get('return_to')!.split('?')[1]);
    expect(back.get('prompt')).toBeNull();
    expect(back.get('state')).toBe('xyz');
  });

  it('the return_to of a prompt=login or max_age request cannot skip the sign-in it stands for', async () => {
    const { t, cookie } = await setUp();
    for (const extra of [{ prompt: 'login' }, { max_age: '0' }]) {
      t.clock.advance(5_000);
      const toSignIn = location(await authorize(t, spaParams(extra).params, cookie));
      expect(toSignIn.pathname).toBe('/sign-in');
      const returnTo = toSignIn.searchParams.get('return_to')!;
      // Loading it directly with the old session: still the sign-in page, and prompt=none is refused.
      const direct = location(await t.app.inject({ method: 'GET', url: returnTo, headers: { cookie } }));
      expect(direct.pathname, JSON.stringify(extra)).toBe('/sign-in');
      expect(direct.searchParams.get('return_to')).toBe(returnTo);
      const silent = await t.app.inject({ method: 'GET', url: `${returnTo}&prompt=none`, headers: { cookie } });
      expectErrorRedirect(silent, t, 'login_required');
      // A real sign-in satisfies it; then the same request is answered with a code.
      t.clock.advance(1_000);
      expect((await signIn(t, { email: 'ada@example.com', applicationId: 'notes' }, { cookie })).statusCode).toBe(200);
      const answered = location(await t.app.inject({ method: 'GET', url: returnTo, headers: { cookie } }));
      expect(answered.origin + answered.pathname, JSON.stringify(extra)).toBe(SPA_REDIRECT);
      expect(answered.searchParams.get('code')).toBeTruthy();
    }
  });

  it('prompt=consent asks nothing more under implicit consent; select_account goes to sign-in like login, keeping consent for later', async () => {
    const { t, cookie } = await setUp();
    const consent = location(await authorize(t, spaParams({ prompt: 'consent' }).params, cookie));
    expect([...consent.searchParams.keys()].sort()).toEqual(['code', 'iss', 'state']);
    for (const [prompt, left] of [['select_account', null], ['consent select_account', 'consent'], ['login consent', 'consent']] as const) {
      const url = location(await authorize(t, spaParams({ prompt }).params, cookie));
      expect(url.pathname, prompt).toBe('/sign-in');
      expect(new URLSearchParams(url.searchParams.get('return_to')!.split('?')[1]).get('prompt')).toBe(left);
    }
  });

  it('max_age is judged against the realm authentication time', async () => {
    const { t, cookie } = await setUp();
    expect(location(await authorize(t, spaParams({ max_age: '60' }).params, cookie)).searchParams.get('code')).toBeTruthy();
    t.clock.advance(61_000);
    expectErrorRedirect(await authorize(t, spaParams({ max_age: '60', prompt: 'none' }).params, cookie), t, 'login_required');
    const url = location(await authorize(t, spaParams({ max_age: '60' }).params, cookie));
    expect(url.pathname).toBe('/sign-in');
    expect(new URLSearchParams(url.searchParams.get('return_to')!.split('?')[1]).get('max_age')).toBeNull();
  });

  it('another application outside the SSO group asks again; inside the group it is silent', async () => {
    const { t, cookie } = await setUp();
    const web = { response_type: 'code', client_id: 'billing', redirect_uri: WEB_REDIRECT, scope: 'openid', state: 'xyz' };
    expectErrorRedirect(await authorize(t, { ...web, prompt: 'none' }, cookie), t, 'login_required', WEB_REDIRECT);
    expect(location(await authorize(t, web, cookie)).pathname).toBe('/sign-in');

    expect((await t.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: 'Suite' })).statusCode).toBe(201);
    expect((await t.admin('POST', '/api/admin/sso-groups/suite/apps', { appId: 'notes' })).statusCode).toBeLessThan(300);
    expect((await t.admin('POST', '/api/admin/sso-groups/suite/apps', { appId: 'billing' })).statusCode).toBeLessThan(300);
    // Signing in to one member of the group authenticates the group realm.
    const again = await signIn(t, { email: 'ada@example.com', applicationId: 'notes' }, { cookie });
    expect(again.statusCode).toBe(200);
    const session = again.cookies.find((c) => c.name === 'gatehouse_session')?.value;
    const groupCookie = session ? `gatehouse_session=${session}` : cookie;
    expect(location(await authorize(t, { ...web, prompt: 'none' }, groupCookie)).searchParams.get('code')).toBeTruthy();
  });

  it('a deleted application or group takes its sign-ins along: the same id created again starts signed out', async () => {
    const { t, cookie } = await setUp();
    const notes = (await t.admin('GET', '/api/admin/applications/notes')).json();
    const recreate = async () => {
      expect((await t.admin('DELETE', '/api/admin/applications/notes')).statusCode).toBe(204);
      const body = { id: 'notes', name: notes.name, audience: notes.audience, clientType: notes.clientType, redirectUris: notes.redirectUris, authPolicy: notes.authPolicy };
      expect((await t.admin('POST', '/api/admin/applications', body)).statusCode).toBe(201);
    };
    expect(location(await authorize(t, spaParams({ prompt: 'none' }).params, cookie)).searchParams.get('code')).toBeTruthy();
    await recreate();
    expectErrorRedirect(await authorize(t, spaParams({ prompt: 'none' }).params, cookie), t, 'login_required');

    expect((await t.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: 'Suite' })).statusCode).toBe(201);
    expect((await t.admin('POST', '/api/admin/sso-groups/suite/apps', { appId: 'notes' })).statusCode).toBeLessThan(300);
    const again = await signIn(t, { email: 'ada@example.com', applicationId: 'notes' }, { cookie });
    const groupCookie = `gatehouse_session=${again.cookies.find((c) => c.name === 'gatehouse_session')?.value ?? cookie.split('=')[1]}`;
    expect(location(await authorize(t, spaParams({ prompt: 'none' }).params, groupCookie)).searchParams.get('code')).toBeTruthy();
    expect((await t.admin('DELETE', '/api/admin/sso-groups/suite')).statusCode).toBe(204);
    expect((await t.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: 'Suite' })).statusCode).toBe(201);
    expect((await t.admin('POST', '/api/admin/sso-groups/suite/apps', { appId: 'notes' })).statusCode).toBeLessThan(300);
    expectErrorRedirect(await authorize(t, spaParams({ prompt: 'none' }).params, groupCookie), t, 'login_required');
  });
});

describe('authorize: membership is settled by the sign-up policy', () => {
  async function withApp(policy: 'invite_only' | 'closed') {
    const setup = await setUp();
    await createApplication(setup.t, {
      id: 'wiki', name: 'Wiki', audience: 'https://wiki.example.com/api', clientType: 'spa',
      redirectUris: ['http://127.0.0.1:7000/cb'], authPolicy: { signup_policy: policy },
    });
    const res = await signIn(setup.t, { email: 'ada@example.com', applicationId: 'wiki' }, { cookie: setup.cookie });
    const session = res.cookies.find((c) => c.name === 'gatehouse_session')?.value;
    return { ...setup, cookie: session ? `gatehouse_session=${session}` : setup.cookie, wiki: spaParams({ client_id: 'wiki', redirect_uri: 'http://127.0.0.1:7000/cb' }).params };
  }

  it('invite_only without an invitation → access_denied; with one for a verified e-mail → joins', async () => {
    const { t, cookie, wiki } = await withApp('invite_only');
    // Our own page says why (issue 25); its link back carries the error to the application.
    const refused = await authorize(t, wiki, cookie);
    expect(refused.body).toContain('Wiki is invitation-only: ask its administrator for an invitation');
    expectErrorUrl(refusedBack(refused, 'invite_only'), t, 'access_denied', 'http://127.0.0.1:7000/cb');
    // prompt=none cannot show a page: the error goes back at once.
    expectErrorRedirect(await authorize(t, { ...wiki, prompt: 'none' }, cookie), t, 'access_denied', 'http://127.0.0.1:7000/cb');
    // An invitation accepted by link verifies the e-mail; authorize then accepts a pending one.
    (await insertInvitation(t, 'wiki', 'ada@example.com'));
    const { people } = await import('../../server/db/schema.js');
    await exec(t.db.update(people).set({ emailVerified: true }));
    expect(location(await authorize(t, wiki, cookie)).searchParams.get('code')).toBeTruthy();
  });

  it('closed admits no newcomer', async () => {
    const { t, cookie, wiki } = await withApp('closed');
    expectErrorUrl(refusedBack(await authorize(t, wiki, cookie), 'closed'), t, 'access_denied', 'http://127.0.0.1:7000/cb');
  });

  it('a suspended member is refused', async () => {
    const { t, cookie } = await setUp();
    await exec(t.db.update(memberships).set({ status: 'suspended' }).where(and(eq(memberships.applicationId, 'notes'))));
    const refused = await authorize(t, spaParams().params, cookie);
    expect(refused.body).toContain('<title>You cannot use Notes with this account · Gatehouse</title>');
    expect(refused.body).toContain('Your access to Notes is suspended.');
    expect(refused.body).toContain('>Use another account</a>');
    expect(refused.body).toContain('>Back to Notes</a>');
    const back = refusedBack(refused, 'suspended');
    expectErrorUrl(back, t, 'access_denied');
    expect(back.searchParams.get('error_description')).toBe('Your access to Notes is suspended.');
  });

  it('an open application joins a newcomer at authorize', async () => {
    const { t } = await setUp();
    const fresh = await signUp(t, { email: 'bob@example.com', applicationId: 'billing' });
    expect(fresh.statusCode).toBe(201);
    const bob = `gatehouse_session=${sessionCookieOf(fresh)}`;
    await signIn(t, { email: 'bob@example.com', applicationId: 'notes' }, { cookie: bob });
    const res = await authorize(t, spaParams().params, bob);
    expect(location(res).pathname).not.toBe('/sign-in');
  });
});
