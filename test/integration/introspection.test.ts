/**
 * Token introspection (RFC 7662, spec grants-and-logout.md): openid-client's `tokenIntrospection`
 * against a real server for access, refresh and client-credentials tokens; then, through inject
 * with a fixed clock, every way a token stops being active (expiry, rotation, family revocation by
 * reuse or /revoke, sign-out, suspension), another application's tokens, and the caller's
 * authentication.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication, postJson, sessionCookieOf, signIn, signUp } from '../helpers/accounts.js';
import { authorize, expectOAuthError, location, spaParams, spaTokens, token, WEB_REDIRECT } from '../helpers/oauth-inject.js';
import { createClient, follow, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';

const REDIRECT = 'http://127.0.0.1:3000/callback';
const INACTIVE = { active: false };

describe('openid-client tokenIntrospection against a real server', () => {
  let server: OAuthServer;
  beforeAll(async () => {
    server = await startOAuthServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('answers active with the RFC 7662 fields for its own access, refresh and client-credentials tokens', async () => {
    const billing = await createClient(server, {
      id: 'billing', name: 'Billing', audience: 'https://billing.example.com/api', clientType: 'web', redirectUris: [REDIRECT],
      grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
    });
    const cookie = await signUpCookie(server, 'ada@example.com', 'billing');
    const config = await client.discovery(new URL(server.url), 'billing', undefined, client.ClientSecretBasic(billing.clientSecret!), {
      execute: [client.allowInsecureRequests],
    });
    expect(config.serverMetadata().introspection_endpoint).toBe(`${server.url}/api/auth/oauth2/introspect`);
    const url = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid offline_access', state: 's1' });
    const hop = await follow(url, cookie);
    const tokens = await client.authorizationCodeGrant(config, hop.location!, { expectedState: 's1' });
    const sub = tokens.claims()!.sub;
    const sid = tokens.claims()!.sid;

    const access = await client.tokenIntrospection(config, tokens.access_token);
    expect(access).toEqual({
      active: true, scope: 'openid offline_access', client_id: 'billing', sub, aud: billing.audience, iss: server.url,
      exp: expect.any(Number), iat: expect.any(Number), token_type: 'Bearer', jti: expect.any(String), sid, username: 'ada',
    });
    expect(access.exp! - access.iat!).toBe(900);

    const refresh = await client.tokenIntrospection(config, tokens.refresh_token!, { token_type_hint: 'refresh_token' });
    expect(refresh).toEqual({
      active: true, scope: 'openid offline_access', client_id: 'billing', sub, aud: billing.audience, iss: server.url,
      exp: expect.any(Number), iat: expect.any(Number), token_type: 'refresh_token', sid, username: 'ada',
    });

    const machine = await client.clientCredentialsGrant(config);
    const cc = await client.tokenIntrospection(config, machine.access_token);
    expect(cc).toEqual({
      active: true, client_id: 'billing', sub: 'billing', aud: billing.audience, iss: server.url, exp: expect.any(Number),
      iat: expect.any(Number), token_type: 'Bearer', jti: expect.any(String),
    });

    // A hint that names the wrong kind changes nothing; nonsense is inactive.
    expect(await client.tokenIntrospection(config, tokens.access_token, { token_type_hint: 'refresh_token' })).toMatchObject({ active: true });
    expect(await client.tokenIntrospection(config, 'not-a-token')).toEqual(INACTIVE);
  });
});

/** billing (web, confidential) and notes (spa); Ada signed in to both in one session. */
async function setUp(): Promise<{ t: TestApp; cookie: string; secret: string }> {
  const t = await makeApp();
  const billing = await createApplication(t, {
    id: 'billing', name: 'Billing', audience: 'https://billing.example.com/api', clientType: 'web', redirectUris: [WEB_REDIRECT],
    authPolicy: { signup_policy: 'open' }, grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
  });
  await createApplication(t, {
    id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: ['http://127.0.0.1:5173/callback'],
    authPolicy: { signup_policy: 'open' },
  });
  const res = await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: 'billing' });
  return { t, cookie: `gatehouse_session=${sessionCookieOf(res)}`, secret: billing.clientSecret };
}

async function billingTokens(t: TestApp, cookie: string, secret: string, scope = 'openid offline_access') {
  const { params } = spaParams({ client_id: 'billing', redirect_uri: WEB_REDIRECT, scope, code_challenge: undefined, code_challenge_method: undefined });
  const code = location(await authorize(t, params, cookie)).searchParams.get('code')!;
  const res = await token(t, { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, client_id: 'billing', client_secret: secret });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { access_token: string; refresh_token?: string; id_token?: string };
}

function introspect(t: TestApp, form: Record<string, string>, secret?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (secret) headers.authorization = `Basic ${Buffer.from(`billing:${secret}`).toString('base64')}`;
  return t.app.inject({ method: 'POST', url: '/api/auth/oauth2/introspect', headers, payload: new URLSearchParams(form).toString() });
}

async function active(t: TestApp, secret: string, value: string): Promise<boolean> {
  const res = await introspect(t, { token: value }, secret);
  expect(res.statusCode).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  return res.json().active as boolean;
}

describe('when a token stops being active', () => {
  it('expiry: the access token at its exp, the refresh token at its family end', async () => {
    const { t, cookie, secret } = await setUp();
    const tokens = await billingTokens(t, cookie, secret);
    expect(await active(t, secret, tokens.access_token)).toBe(true);
    t.clock.advance(900_000);
    const res = await introspect(t, { token: tokens.access_token }, secret);
    expect(res.body).toBe('{"active":false}');
    expect(await active(t, secret, tokens.refresh_token!)).toBe(true);
    t.clock.advance(30 * 86400_000);
    expect(await active(t, secret, tokens.refresh_token!)).toBe(false);
  });

  it('rotation: the used refresh token is inactive, its successor active; reuse revokes the family and its access tokens', async () => {
    const { t, cookie, secret } = await setUp();
    const first = await billingTokens(t, cookie, secret);
    const refreshed = (await token(t, { grant_type: 'refresh_token', refresh_token: first.refresh_token!, client_id: 'billing', client_secret: secret })).json();
    expect(await active(t, secret, first.refresh_token!)).toBe(false);
    expect(await active(t, secret, refreshed.refresh_token)).toBe(true);
    expect(await active(t, secret, refreshed.access_token)).toBe(true);
    expect(await active(t, secret, first.access_token)).toBe(true);
    // Reuse of the rotated token: the whole family is revoked, and so are the access tokens it gave out.
    expectOAuthError(await token(t, { grant_type: 'refresh_token', refresh_token: first.refresh_token!, client_id: 'billing', client_secret: secret }), 400, 'invalid_grant');
    for (const value of [first.access_token, refreshed.access_token, refreshed.refresh_token]) expect(await active(t, secret, value)).toBe(false);
  });

  it('revoking the refresh token (RFC 7009) makes the access tokens of its family inactive', async () => {
    const { t, cookie, secret } = await setUp();
    const tokens = await billingTokens(t, cookie, secret);
    const other = await billingTokens(t, cookie, secret, 'openid');
    const revoke = await t.app.inject({
      method: 'POST', url: '/api/auth/oauth2/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: tokens.refresh_token!, client_id: 'billing', client_secret: secret }).toString(),
    });
    expect(revoke.statusCode).toBe(200);
    expect(await active(t, secret, tokens.access_token)).toBe(false);
    expect(await active(t, secret, tokens.refresh_token!)).toBe(false);
    expect(await active(t, secret, other.access_token)).toBe(true); // not of that family
  });

  it('revoking the access token itself (RFC 7009, issue 22) makes it inactive; its refresh token lives on', async () => {
    const { t, cookie, secret } = await setUp();
    const tokens = await billingTokens(t, cookie, secret);
    const plain = await billingTokens(t, cookie, secret, 'openid');
    for (const value of [tokens.access_token, plain.access_token]) {
      const revoke = await t.app.inject({
        method: 'POST', url: '/api/auth/oauth2/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ token: value, token_type_hint: 'access_token', client_id: 'billing', client_secret: secret }).toString(),
      });
      expect(revoke.statusCode).toBe(200);
      expect(await active(t, secret, value)).toBe(false);
    }
    expect(await active(t, secret, tokens.refresh_token!)).toBe(true);
  });

  it('sign-out ends the session: its access tokens are inactive, with or without a refresh-token family', async () => {
    const { t, cookie, secret } = await setUp();
    const plain = await billingTokens(t, cookie, secret, 'openid');
    const offline = await billingTokens(t, cookie, secret);
    expect(await active(t, secret, plain.access_token)).toBe(true);
    expect((await postJson(t, '/api/auth/sign-out', undefined, { cookie })).statusCode).toBe(204);
    for (const value of [plain.access_token, offline.access_token, offline.refresh_token!]) expect(await active(t, secret, value)).toBe(false);
  });

  it('suspension ends the member: access and refresh tokens are inactive', async () => {
    const { t, cookie, secret } = await setUp();
    const tokens = await billingTokens(t, cookie, secret);
    const plain = await billingTokens(t, cookie, secret, 'openid');
    const member = (await t.admin('GET', '/api/admin/applications/billing/users')).json().users[0];
    expect((await t.admin('PATCH', `/api/admin/applications/billing/users/${member.id}`, { status: 'suspended' })).statusCode).toBe(200);
    expect(await active(t, secret, tokens.access_token)).toBe(false);
    expect(await active(t, secret, tokens.refresh_token!)).toBe(false);
    expect(await active(t, secret, plain.access_token)).toBe(false);
  });
});

describe('who may ask about what', () => {
  it("another application's tokens are inactive to the caller", async () => {
    const { t, cookie, secret } = await setUp();
    expect((await signIn(t, { email: 'ada@example.com', applicationId: 'notes' }, { cookie })).statusCode).toBe(200);
    const notes = await spaTokens(t, cookie, { scope: 'openid offline_access' });
    expect((await introspect(t, { token: notes.access_token }, secret)).body).toBe('{"active":false}');
    expect((await introspect(t, { token: notes.refresh_token! }, secret)).body).toBe('{"active":false}');
  });

  it('only an authenticated confidential client may introspect', async () => {
    const { t, cookie, secret } = await setUp();
    const tokens = await billingTokens(t, cookie, secret);
    const noAuth = await introspect(t, { token: tokens.access_token, client_id: 'billing' });
    expectOAuthError(noAuth, 401, 'invalid_client');
    expect(noAuth.headers['www-authenticate']).toBeUndefined();
    expectOAuthError(await introspect(t, { token: tokens.access_token }, 'ghs_wrong'), 401, 'invalid_client');
    expectOAuthError(await introspect(t, { token: tokens.access_token, client_id: 'notes' }), 401, 'invalid_client');
    expectOAuthError(await introspect(t, {}, secret), 400, 'invalid_request');
    const json = await t.app.inject({ method: 'POST', url: '/api/auth/oauth2/introspect', headers: { 'content-type': 'application/json' }, payload: '{}' });
    expectOAuthError(json, 400, 'invalid_request');
  });

  it('a token signed by someone else, or of another type, is inactive', async () => {
    const { t, cookie, secret } = await setUp();
    const tokens = await billingTokens(t, cookie, secret);
    const [h, p, s] = tokens.access_token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 3600 })).toString('base64url')}.${s}`;
    expect(await active(t, secret, forged)).toBe(false);
    // Our own signature, but an ID token (typ JWT), not an access token.
    expect(tokens.id_token).toBeTruthy();
    expect(await active(t, secret, tokens.id_token!)).toBe(false);
  });
});

describe('resource servers (spec claims-and-groups.md, "Introspection")', () => {
  /** billing lists imap; stranger is another confidential application; each has its secret. */
  async function withResourceServer() {
    const { t, cookie, secret } = await setUp();
    const imap = await createApplication(t, { id: 'imap', name: 'Mail', audience: 'imap://mail.example.com', clientType: 'web', redirectUris: ['https://mail.example.com/cb'] });
    const stranger = await createApplication(t, { id: 'stranger', name: 'Stranger', audience: 'https://stranger.example.com', clientType: 'web', redirectUris: ['https://stranger.example.com/cb'] });
    const patched = await t.admin('PATCH', '/api/admin/applications/billing', { resourceServers: ['imap'] });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().resourceServers).toEqual(['imap']);
    return { t, cookie, secret, imapSecret: imap.clientSecret as string, strangerSecret: stranger.clientSecret as string };
  }

  const as = (t: TestApp, id: string, secret: string, value: string) =>
    t.app.inject({
      method: 'POST', url: '/api/auth/oauth2/introspect',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` },
      payload: new URLSearchParams({ token: value }).toString(),
    });

  it('a listed application introspects with its own credentials and gets the same answer as the owner; anyone else gets active:false', async () => {
    const { t, cookie, secret, imapSecret, strangerSecret } = await withResourceServer();
    const tokens = await billingTokens(t, cookie, secret, 'openid email offline_access');
    for (const value of [tokens.access_token, tokens.refresh_token!]) {
      const owner = await as(t, 'billing', secret, value);
      expect(owner.json().active).toBe(true);
      expect(owner.json().client_id).toBe('billing');
      expect(owner.json().email).toBe('ada@example.com');
      expect(owner.json().username).toBe('ada');
      const server = await as(t, 'imap', imapSecret, value);
      expect(server.statusCode).toBe(200);
      expect(server.headers['cache-control']).toBe('no-store');
      expect(server.body).toBe(owner.body);
      expect((await as(t, 'stranger', strangerSecret, value)).body).toBe('{"active":false}');
    }
    // The relation is one way: billing does not see imap's tokens.
    await t.admin('PATCH', '/api/admin/applications/imap', { grantTypes: ['authorization_code', 'client_credentials'] });
    const machine = await token(t, { grant_type: 'client_credentials' }, { authorization: `Basic ${Buffer.from(`imap:${imapSecret}`).toString('base64')}` });
    expect((await as(t, 'imap', imapSecret, machine.json().access_token)).json().active).toBe(true);
    expect((await as(t, 'billing', secret, machine.json().access_token)).body).toBe('{"active":false}');
    // Taken off the list: inactive to it at once.
    await t.admin('PATCH', '/api/admin/applications/billing', { resourceServers: [] });
    expect((await as(t, 'imap', imapSecret, tokens.access_token)).body).toBe('{"active":false}');
  });

  it('email only with the email scope', async () => {
    const { t, cookie, secret, imapSecret } = await withResourceServer();
    const tokens = await billingTokens(t, cookie, secret, 'openid offline_access');
    const answer = (await as(t, 'imap', imapSecret, tokens.access_token)).json();
    expect(answer.active).toBe(true);
    expect(answer.username).toBe('ada');
    expect(answer.email).toBeUndefined();
  });

  it('refuses an unknown, public or own id, naming body.resourceServers', async () => {
    const { t } = await withResourceServer();
    for (const [list, message] of [
      [['nope'], 'there is no application "nope"'],
      [['notes'], '"notes" is a spa application; only confidential (web) applications can introspect'],
      [['billing'], '"billing" is this application; it introspects its own tokens already'],
    ] as const) {
      const res = await t.admin('PATCH', '/api/admin/applications/billing', { resourceServers: list });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('validation_failed');
      expect(res.json().errors).toEqual([{ path: 'body.resourceServers', message }]);
    }
    expect((await t.admin('GET', '/api/admin/applications/billing')).json().resourceServers).toEqual(['imap']);
  });

  it('a deleted resource server leaves the list at once: an application made later with its id inherits nothing', async () => {
    const { t, cookie, secret } = await withResourceServer();
    const tokens = await billingTokens(t, cookie, secret);
    expect((await t.admin('DELETE', '/api/admin/applications/imap')).statusCode).toBe(204);
    expect((await t.admin('GET', '/api/admin/applications/billing')).json().resourceServers).toEqual([]);
    // Once its purge is done, the id is free again: the newcomer is not a resource server of billing.
    let again = await t.admin('POST', '/api/admin/applications', { id: 'imap', name: 'Mail 2', audience: 'imap://mail2.example.com', clientType: 'web', redirectUris: ['https://mail2.example.com/cb'] });
    for (let i = 0; again.statusCode === 409 && i < 50; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      again = await t.admin('POST', '/api/admin/applications', { id: 'imap', name: 'Mail 2', audience: 'imap://mail2.example.com', clientType: 'web', redirectUris: ['https://mail2.example.com/cb'] });
    }
    expect(again.statusCode, again.body).toBe(201);
    expect((await as(t, 'imap', again.json().clientSecret, tokens.access_token)).body).toBe('{"active":false}');
  });
});
