/**
 * Starting a sign-in with each arctic provider: the exact redirect (authorization endpoint,
 * client_id, redirect_uri, state, PKCE S256 challenge of the stored verifier, nonce where the
 * provider speaks OIDC, scopes) and the browser-binding cookie; plus the error pages when a
 * provider is unknown, not configured, not allowed, or misconfigured. (Their callbacks need the
 * real providers, which this machine cannot reach; the oidc tests cover the callback path.)
 */
import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { providerLogins } from '../../server/db/schema.js';
import { sha256 } from '../../server/util/crypto.js';
import { makeApp, type TestApp } from '../helpers/app.js';
import { expectPage } from '../helpers/browser-jar.js';
import { createApplication, cookieValue, signUp, sessionCookieOf } from '../helpers/accounts.js';
import { many } from '../../server/db/store.js';

const ISSUER = 'http://127.0.0.1:8787';
const ALL = ['google', 'github', 'microsoft', 'gitlab', 'discord'];
const credentials = Object.fromEntries(
  ALL.flatMap((id) => [[`${id.toUpperCase()}_CLIENT_ID`, `${id}-client-id`], [`${id.toUpperCase()}_CLIENT_SECRET`, `${id}-secret`]]),
);

async function appAllowing(env: Record<string, string>, allowed: string[]): Promise<TestApp> {
  const t = await makeApp({ config: { env } });
  await createApplication(t, { authPolicy: { signup_policy: 'open', allowed_providers: allowed } });
  return t;
}

const RETURN_TO = '/api/auth/oauth2/authorize?client_id=notes&response_type=code';
const start = (t: TestApp, provider: string, query = `client_id=notes&return_to=${encodeURIComponent(RETURN_TO)}`) =>
  t.app.inject({ method: 'GET', url: `/api/auth/sign-in/${provider}?${query}` });


const EXPECTED: Record<string, { endpoint: string; scope: string; nonce: boolean }> = {
  google: { endpoint: 'https://accounts.google.com/o/oauth2/v2/auth', scope: 'openid email profile', nonce: true },
  microsoft: { endpoint: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize', scope: 'openid email profile', nonce: true },
  gitlab: { endpoint: 'https://gitlab.com/oauth/authorize', scope: 'openid email profile', nonce: true },
  github: { endpoint: 'https://github.com/login/oauth/authorize', scope: 'read:user user:email', nonce: false },
  discord: { endpoint: 'https://discord.com/oauth2/authorize', scope: 'identify email', nonce: false },
};

describe('starting an external sign-in', () => {
  it.each(ALL)('%s: redirects with state, PKCE S256, scopes and the callback, bound to this browser', async (provider) => {
    const t = await appAllowing(credentials, ['email', provider]);
    const res = await start(t, provider);
    expect(res.statusCode).toBe(302);
    expect(res.headers['cache-control']).toBe('no-store');
    const url = new URL(res.headers.location as string);
    const want = EXPECTED[provider]!;
    expect(`${url.origin}${url.pathname}`).toBe(want.endpoint);
    const q = Object.fromEntries(url.searchParams);
    const keys = ['client_id', 'code_challenge', 'code_challenge_method', 'redirect_uri', 'response_type', 'scope', 'state'];
    expect(Object.keys(q).sort()).toEqual((want.nonce ? [...keys, 'nonce'] : keys).sort());
    expect(q).toMatchObject({
      response_type: 'code',
      client_id: `${provider}-client-id`,
      redirect_uri: `${ISSUER}/api/auth/callback/${provider}`,
      code_challenge_method: 'S256',
      scope: want.scope,
    });

    const [login] = await many(t.db.select().from(providerLogins));
    expect(login).toMatchObject({ state: sha256(q.state!), provider, applicationId: 'notes', returnTo: RETURN_TO, linkPersonId: null, identity: null });
    expect(q.code_challenge).toBe(createHash('sha256').update(login!.codeVerifier).digest('base64url'));
    if (want.nonce) expect(q.nonce).toBe(login!.nonce);
    expect(login!.expiresAt.getTime() - t.clock.now().getTime()).toBe(10 * 60_000);
    const cookie = res.cookies.find((c) => c.name === 'gatehouse_provider_login')!;
    expect(cookie).toMatchObject({ value: q.state, httpOnly: true, sameSite: 'Lax', path: '/', maxAge: 600 });
  });

  it('offers only allowed and configured providers on the sign-in page', async () => {
    const t = await appAllowing({ GITHUB_CLIENT_ID: 'a', GITHUB_CLIENT_SECRET: 'b' }, ['email', 'github', 'google']);
    const page = await t.app.inject({ method: 'GET', url: '/sign-in?client_id=notes' });
    expect(page.body).toContain('href="/api/auth/sign-in/github?client_id=notes&amp;return_to=%2Faccount">Continue with GitHub</a>');
    expect(page.body).not.toContain('Continue with Google');
  });

  it('answers unknown, unconfigured, disallowed and misconfigured providers with error pages', async () => {
    const t = await appAllowing({ GITHUB_CLIENT_ID: 'a', GITHUB_CLIENT_SECRET: 'b', OIDC_ISSUER: 'http://idp.example.com', OIDC_CLIENT_ID: 'c', OIDC_CLIENT_SECRET: 'd' }, ['email', 'google', 'oidc']);
    await expectPage(await start(t, 'myspace'), 404, 'There is no such sign-in provider.');
    await expectPage(await start(t, 'email'), 404, 'There is no such sign-in provider.');
    await expectPage(await start(t, 'google'), 404, 'Signing in with Google is not set up on this server.');
    await expectPage(await start(t, 'github'), 403, 'Notes does not allow signing in with GitHub.');
    await expectPage(await start(t, 'github', 'client_id=nope'), 400, 'The application that sent you here is not known to this server.');
    await expectPage(
      await start(t, 'oidc'),
      503,
      'Signing in with OpenID Connect is not set up correctly on this server: OIDC_ISSUER must use https (http only for loopback or private-network hosts).',
    );
    await expectPage(await start(t, 'github', 'client_id=notes&extra=1'), 400, 'The request is not valid.');
    expect(await many(t.db.select().from(providerLogins))).toEqual([]);
  });

  it('answers a callback without a login in progress with an error page', async () => {
    const t = await appAllowing(credentials, ['email', 'github']);
    await expectPage(await t.app.inject({ method: 'GET', url: '/api/auth/callback/github?code=x' }), 400, 'This sign-in has expired or was already used.');
    await expectPage(await t.app.inject({ method: 'GET', url: '/api/auth/callback/github?code=x&state=unknown' }), 400, 'This sign-in has expired or was already used.');
    await expectPage(await t.app.inject({ method: 'GET', url: '/api/auth/callback/oidc?code=x&state=y' }), 404, 'Signing in with OpenID Connect is not set up on this server.');
  });

  it('refuses a provider callback that reports an error without echoing its text', async () => {
    const t = await appAllowing(credentials, ['email', 'github']);
    const res = await start(t, 'github');
    const state = new URL(res.headers.location as string).searchParams.get('state')!;
    const cookie = { gatehouse_provider_login: cookieValue(res, 'gatehouse_provider_login')! };
    const failed = await t.app.inject({
      method: 'GET',
      url: `/api/auth/callback/github?error=server_error&error_description=${encodeURIComponent('<b>call 555-0100</b>')}&state=${state}`,
      cookies: cookie,
    });
    await expectPage(failed, 400, 'GitHub refused the sign-in (server_error). Please start again.');
    expect(failed.body).not.toContain('555-0100');
    expect(await many(t.db.select().from(providerLogins).where(eq(providerLogins.provider, 'github')))).toEqual([]);
  });

  it('starts linking from the account page only for a signed-in person with the form token', async () => {
    const t = await appAllowing(credentials, ['email']);
    const anonymousPage = await t.app.inject({ method: 'GET', url: '/sign-in' });
    const csrf = cookieValue(anonymousPage, 'gatehouse_csrf')!;
    const post = (cookies: Record<string, string>, token: string | undefined) =>
      t.app.inject({
        method: 'POST', url: '/account/link/github', cookies,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: token === undefined ? '' : `csrf_token=${token}`,
      });
    await expectPage(await post({ gatehouse_csrf: csrf }, 'wrong'), 403, 'The form has expired or did not come from this site.');
    await expectPage(await post({ gatehouse_csrf: csrf }, csrf), 401, 'Sign in first, then link a provider from your account page.');

    const session = sessionCookieOf(await signUp(t, { email: 'ada@example.com', applicationId: 'notes' }));
    const started = await post({ gatehouse_csrf: csrf, gatehouse_session: session }, csrf);
    expect(started.statusCode).toBe(200);
    const to = /content="0;url=([^"]+)"/.exec(started.body)![1]!.replaceAll('&amp;', '&');
    expect(to.startsWith('https://github.com/login/oauth/authorize?')).toBe(true);
    expect(started.headers['content-security-policy']).toContain("form-action 'self';");
    const [login] = await many(t.db.select().from(providerLogins));
    expect(login).toMatchObject({ provider: 'github', applicationId: null, returnTo: '/account', linkPersonId: expect.stringMatching(/^usr_/) });
    await expectPage(await t.app.inject({ method: 'POST', url: '/account/link/google', cookies: { gatehouse_csrf: csrf, gatehouse_session: session }, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `csrf_token=${csrf}` }), 200, 'Taking you to Google');
  });
});
