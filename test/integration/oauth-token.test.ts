/**
 * Token, userinfo, revocation and end-session endpoints: every negative path with its exact
 * RFC 6749 / 6750 / 7009 answer, code replay, refresh re-checks and lifetimes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { makeApp, type TestApp } from '../helpers/app.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { signIn } from '../helpers/accounts.js';
import { auditLog, memberships, people, refreshTokenFamilies, revokedAccessTokens } from '../../server/db/schema.js';
import { openDatabase } from '../../server/db/client.js';
import { isAccessTokenRevoked, recordRevokedAccessToken } from '../../server/oauth/revoked-access-tokens.js';
import { sweep } from '../../server/data-lifecycle/sweeper.js';
import {
  authorize, expectOAuthError, location, setUpClients, SPA_REDIRECT, spaParams, spaTokens, token, WEB_REDIRECT,
} from '../helpers/oauth-inject.js';
import { exec, many, one } from '../../server/db/store.js';

async function setUp(clock?: Date) {
  const t = await makeApp({ clock });
  return { t, ...(await setUpClients(t)) };
}

async function spaCode(t: Awaited<ReturnType<typeof setUp>>['t'], cookie: string, extra: Record<string, string | undefined> = {}) {
  const { pkce, params } = spaParams(extra);
  return { code: location(await authorize(t, params, cookie)).searchParams.get('code')!, verifier: pkce.verifier };
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('token endpoint: request and client errors', () => {
  it('answers each malformed request and failed client authentication exactly', async () => {
    const { t, web, cookie } = await setUp();
    const { code, verifier } = await spaCode(t, cookie);
    const good = { grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: 'notes', code_verifier: verifier };

    const json = await t.app.inject({ method: 'POST', url: '/api/auth/oauth2/token', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(good) });
    expectOAuthError(json, 400, 'invalid_request');
    const text = await t.app.inject({ method: 'POST', url: '/api/auth/oauth2/token', headers: { 'content-type': 'text/plain' }, payload: 'x' });
    expectOAuthError(text, 400, 'invalid_request');
    expectOAuthError(await token(t, { ...good, grant_type: undefined }), 400, 'invalid_request');
    expectOAuthError(await token(t, { ...good, grant_type: 'password' }), 400, 'unsupported_grant_type');
    // A grant type the server knows but the application was not given (spec grants-and-logout.md).
    expectOAuthError(await token(t, { ...good, grant_type: 'client_credentials' }), 400, 'unauthorized_client');

    const unknown = await token(t, { ...good, client_id: 'nope' });
    expectOAuthError(unknown, 401, 'invalid_client');
    // No Basic challenge for a client that did not use Basic: a browser would open its own dialog (issue 33).
    expect(unknown.headers['www-authenticate']).toBeUndefined();
    const basicUnknown = await token(t, { ...good, client_id: undefined }, { authorization: `Basic ${Buffer.from('nope:x').toString('base64')}` });
    expectOAuthError(basicUnknown, 401, 'invalid_client');
    expect(basicUnknown.headers['www-authenticate']).toBe('Basic realm="gatehouse"');
    expectOAuthError(await token(t, { ...good, client_id: undefined }), 401, 'invalid_client');
    expectOAuthError(await token(t, { ...good, client_secret: 'whatever' }), 401, 'invalid_client'); // public client with a secret

    const webForm = { grant_type: 'refresh_token', refresh_token: 'x' };
    expectOAuthError(await token(t, { ...webForm, client_id: 'billing' }), 401, 'invalid_client');
    expectOAuthError(await token(t, { ...webForm, client_id: 'billing', client_secret: 'wrong' }), 401, 'invalid_client');
    expectOAuthError(await token(t, webForm, { authorization: basic('billing', 'wrong') }), 401, 'invalid_client');
    expectOAuthError(await token(t, webForm, { authorization: 'Basic !!!' }), 401, 'invalid_client');
    expectOAuthError(
      await token(t, { ...webForm, client_secret: web.clientSecret }, { authorization: basic('billing', web.clientSecret) }),
      400, 'invalid_request',
    );
    expectOAuthError(await token(t, { ...webForm, client_id: 'notes' }, { authorization: basic('billing', web.clientSecret) }), 400, 'invalid_request');
    // Authenticated fine; only the grant is bad.
    expectOAuthError(await token(t, webForm, { authorization: basic('billing', web.clientSecret) }), 400, 'invalid_grant');
    expectOAuthError(await token(t, { ...webForm, client_id: 'billing', client_secret: web.clientSecret }), 400, 'invalid_grant');

    // The good request still works after all that.
    expect((await token(t, good)).statusCode).toBe(200);
  });
});

/** Signs the browser out the way a person does without an id_token_hint: the page, then its form. */
async function signOutConfirmed(t: TestApp, cookie: string, query = '') {
  const page = await openPage(t, `/api/auth/oauth2/end-session${query}`, cookie);
  expect(page.res.statusCode).toBe(200);
  const fields = [...page.res.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!] as [string, string]);
  return postForm(t, '/api/auth/oauth2/end-session', fields, page.cookie);
}

describe('token endpoint: authorization_code grant', () => {
  it('refuses a missing code or redirect_uri, an unknown code and a repeated parameter without spending the code', async () => {
    const { t, cookie } = await setUp();
    const { code, verifier } = await spaCode(t, cookie);
    const good = { grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: 'notes', code_verifier: verifier };
    expectOAuthError(await token(t, { ...good, code: undefined }), 400, 'invalid_request');
    expectOAuthError(await token(t, { ...good, redirect_uri: undefined }), 400, 'invalid_request');
    expectOAuthError(await token(t, { ...good, code: 'not-a-code' }), 400, 'invalid_grant');
    const repeated = await t.app.inject({
      method: 'POST', url: '/api/auth/oauth2/token', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `${new URLSearchParams(good).toString()}&code=again`,
    });
    expectOAuthError(repeated, 400, 'invalid_request');
    const ok = await token(t, { ...good, resource: 'https://notes.example.com/api' });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['cache-control']).toBe('no-store');
    expect(Object.keys(ok.json()).sort()).toEqual(['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type']);
    expect(ok.json()).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: 'openid offline_access' });
  });

  it('a wrong redirect_uri, verifier or resource is refused and spends the code', async () => {
    const { t, cookie } = await setUp();
    const wrongs: [Record<string, string | undefined>, string][] = [
      [{ redirect_uri: 'http://127.0.0.1:5173/other' }, 'invalid_grant'],
      [{ code_verifier: undefined }, 'invalid_request'],
      [{ code_verifier: 'a'.repeat(43) }, 'invalid_grant'],
      [{ code_verifier: 'short' }, 'invalid_grant'],
      [{ resource: 'https://billing.example.com/api' }, 'invalid_target'],
    ];
    for (const [wrong, error] of wrongs) {
      const { code, verifier } = await spaCode(t, cookie);
      const good = { grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: 'notes', code_verifier: verifier };
      expectOAuthError(await token(t, { ...good, ...wrong }), 400, error);
      const after = await token(t, good);
      expectOAuthError(after, 400, 'invalid_grant');
      expect(after.json().error_description, JSON.stringify(wrong)).toBe('The authorization code has already been used.');
    }
    expect(await many(t.db.select().from(refreshTokenFamilies))).toEqual([]);
  });

  it('a code whose session was signed out before the exchange is refused', async () => {
    const { t, cookie } = await setUp();
    const { code, verifier } = await spaCode(t, cookie);
    await signOutConfirmed(t, cookie);
    const res = await token(t, { grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: 'notes', code_verifier: verifier });
    expectOAuthError(res, 400, 'invalid_grant');
    expect(res.json().error_description).toBe('The sign-in session this code was issued in has ended.');
    expect(await many(t.db.select().from(refreshTokenFamilies))).toEqual([]);
  });

  it('a code is bound to its client and lives 60 seconds', async () => {
    const { t, web, cookie } = await setUp();
    const { code, verifier } = await spaCode(t, cookie);
    expectOAuthError(
      await token(t, { grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, code_verifier: verifier }, { authorization: basic('billing', web.clientSecret) }),
      400, 'invalid_grant',
    );
    t.clock.advance(60_001);
    expectOAuthError(
      await token(t, { grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: 'notes', code_verifier: verifier }),
      400, 'invalid_grant',
    );
  });

  it('a web client without PKCE must not send a verifier; with PKCE it must', async () => {
    const { t, web, cookie } = await setUp();
    await signIn(t, { email: 'ada@example.com', applicationId: 'billing' }, { cookie });
    const auth = { authorization: basic('billing', web.clientSecret) };
    const plainCode = async () =>
      location(await authorize(t, { response_type: 'code', client_id: 'billing', redirect_uri: WEB_REDIRECT, scope: 'openid', state: 'xyz' }, cookie))
        .searchParams.get('code')!;
    const refused = { grant_type: 'authorization_code', code: await plainCode(), redirect_uri: WEB_REDIRECT, code_verifier: 'a'.repeat(43) };
    expectOAuthError(await token(t, refused, auth), 400, 'invalid_grant');
    const ok = await token(t, { grant_type: 'authorization_code', code: await plainCode(), redirect_uri: WEB_REDIRECT }, auth);
    expect(ok.statusCode).toBe(200);
    expect(ok.json().refresh_token).toBeUndefined();
    const claims = decodeJwt(ok.json().access_token);
    expect(claims).toMatchObject({ aud: 'https://billing.example.com/api', azp: 'billing', client_id: 'billing', scope: 'openid' });
  });

  it('a replayed code is refused and revokes the refresh tokens its first exchange issued', async () => {
    const { t, cookie } = await setUp();
    const { code, verifier } = await spaCode(t, cookie);
    const form = { grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: 'notes', code_verifier: verifier };
    const first = await token(t, form);
    expect(first.statusCode).toBe(200);
    expectOAuthError(await token(t, form), 400, 'invalid_grant');
    expectOAuthError(await token(t, { grant_type: 'refresh_token', refresh_token: first.json().refresh_token, client_id: 'notes' }), 400, 'invalid_grant');
    const family = (await one(t.db.select().from(refreshTokenFamilies)))!;
    expect(family.revokedReason).toBe('code_replayed');
  });
});

describe('token endpoint: refresh_token grant', () => {
  it('rotates, may narrow but not widen scope, checks resource and client, and re-checks membership', async () => {
    const { t, web, cookie } = await setUp();
    const tokens = await spaTokens(t, cookie, { scope: 'openid profile offline_access' });
    const form = (refresh_token: string, extra: Record<string, string> = {}) => ({ grant_type: 'refresh_token', refresh_token, client_id: 'notes', ...extra });

    expectOAuthError(await token(t, { grant_type: 'refresh_token', client_id: 'notes' }), 400, 'invalid_request');
    expectOAuthError(await token(t, form('ghr_unknown')), 400, 'invalid_grant');
    expectOAuthError(await token(t, form(tokens.refresh_token!, { scope: 'openid email' })), 400, 'invalid_scope');
    expectOAuthError(await token(t, form(tokens.refresh_token!, { scope: 'openid admin' })), 400, 'invalid_scope');
    expectOAuthError(await token(t, form(tokens.refresh_token!, { resource: 'https://billing.example.com/api' })), 400, 'invalid_target');
    expectOAuthError(
      await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }, { authorization: basic('billing', web.clientSecret) }),
      400, 'invalid_grant',
    );

    const narrowed = await token(t, form(tokens.refresh_token!, { scope: 'openid' }));
    expect(narrowed.statusCode).toBe(200);
    expect(narrowed.json().scope).toBe('openid');
    expect(decodeJwt(narrowed.json().access_token).scope).toBe('openid');
    const next = await token(t, form(narrowed.json().refresh_token));
    expect(next.json().scope).toBe('openid profile offline_access'); // the grant itself kept its scope
    expect(Object.keys(next.json()).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);

    await exec(t.db.update(memberships).set({ status: 'suspended' }));
    expectOAuthError(await token(t, form(next.json().refresh_token)), 400, 'invalid_grant');
    await exec(t.db.update(memberships).set({ status: 'active' }));
    const back = await token(t, form(next.json().refresh_token));
    expect(back.statusCode).toBe(200);
    expect(decodeJwt(back.json().access_token).app_user).toMatchObject({ status: 'active' });
  });

  it("refuses grants made for the application's earlier audience once it changes (another application may take it over)", async () => {
    const { t, cookie } = await setUp();
    const tokens = await spaTokens(t, cookie);
    const { code, verifier } = await spaCode(t, cookie);
    expect(decodeJwt(tokens.access_token).aud).toBe('https://notes.example.com/api');
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { audience: 'https://notes-v2.example.com/api' })).statusCode).toBe(200);
    const other = await t.admin('POST', '/api/admin/applications', {
      id: 'other', name: 'Other', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: ['https://other.example.com/cb'],
    });
    expect(other.statusCode).toBe(201);

    const refreshed = await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: 'notes' });
    expectOAuthError(refreshed, 400, 'invalid_grant');
    expect(refreshed.json().error_description).toBe("The application's audience has changed since this grant; sign in again.");
    const exchanged = await token(t, { grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: 'notes', code_verifier: verifier });
    expectOAuthError(exchanged, 400, 'invalid_grant');
    expect(exchanged.json().error_description).toBe("The application's audience has changed since this code was issued; start the sign-in again.");

    // A new sign-in gets tokens for the new audience.
    expect(decodeJwt((await spaTokens(t, cookie)).access_token).aud).toBe('https://notes-v2.example.com/api');
  });

  it('a refresh marks the member active, at most hourly', async () => {
    // Midday: the first grant of a UTC day also marks (activeMarkDue), so 30 minutes from a real
    // clock near midnight would cross a day and mark.
    const { t, cookie } = await setUp(new Date('2026-11-29T12:00:00Z'));
    const tokens = await spaTokens(t, cookie);
    const lastActive = async () => (await one(t.db.select().from(memberships).where(eq(memberships.applicationId, 'notes'))))!.lastActiveAt.getTime();
    const before = (await lastActive());
    t.clock.advance(30 * 60_000);
    const next = (await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: 'notes' })).json();
    expect((await lastActive())).toBe(before);
    t.clock.advance(31 * 60_000);
    expect((await token(t, { grant_type: 'refresh_token', refresh_token: next.refresh_token, client_id: 'notes' })).statusCode).toBe(200);
    expect((await lastActive())).toBe(t.clock.now().getTime());
  });

  it('refresh tokens expire with their family (30 days)', async () => {
    const { t, cookie } = await setUp();
    const tokens = await spaTokens(t, cookie);
    t.clock.advance(30 * 24 * 3600 * 1000 + 1);
    expectOAuthError(await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: 'notes' }), 400, 'invalid_grant');
  });

  it('reuse revokes the family once and records one audit entry', async () => {
    const { t, cookie } = await setUp();
    const tokens = await spaTokens(t, cookie);
    const form = (r: string) => ({ grant_type: 'refresh_token', refresh_token: r, client_id: 'notes' });
    const next = (await token(t, form(tokens.refresh_token!))).json();
    expectOAuthError(await token(t, form(tokens.refresh_token!)), 400, 'invalid_grant');
    expectOAuthError(await token(t, form(tokens.refresh_token!)), 400, 'invalid_grant');
    expectOAuthError(await token(t, form(next.refresh_token)), 400, 'invalid_grant');
    const audits = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'security.refresh_token_reused')));
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ actor: 'system', applicationId: 'notes' });
    const family = (await one(t.db.select().from(refreshTokenFamilies).where(eq(refreshTokenFamilies.applicationId, 'notes'))))!;
    expect(family.revokedReason).toBe('refresh_token_reused');
  });
});

describe('userinfo, revocation and end-session', () => {
  it('userinfo needs a valid access token with openid', async () => {
    const { t, cookie } = await setUp();
    const none = await t.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo' });
    expectOAuthError(none, 401, 'invalid_request');
    expect(none.headers['www-authenticate']).toBe('Bearer realm="gatehouse"');
    const bad = await t.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo', headers: { authorization: 'Bearer abc.def.ghi' } });
    expectOAuthError(bad, 401, 'invalid_token');
    expect(bad.headers['www-authenticate']).toMatch(/^Bearer realm="gatehouse", error="invalid_token"/);
    const noOpenid = await spaTokens(t, cookie, { scope: 'profile' });
    const res = await t.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo', headers: { authorization: `Bearer ${noOpenid.access_token}` } });
    expectOAuthError(res, 403, 'insufficient_scope');
    const ok = await spaTokens(t, cookie, { scope: 'openid profile' });
    const info = await t.app.inject({ method: 'POST', url: '/api/auth/oauth2/userinfo', headers: { authorization: `Bearer ${ok.access_token}` } });
    expect(info.statusCode).toBe(200);
    const sub = String(decodeJwt(ok.access_token).sub);
    const updatedAt = Math.floor((await one(t.db.select().from(people).where(eq(people.id, sub))))!.updatedAt.getTime() / 1000);
    expect(info.json()).toEqual({ sub, name: 'Ada', preferred_username: 'ada', updated_at: updatedAt });
    // No name: the claim is left out, not null (OIDC Core §5.3.2), in userinfo and the ID token.
    await exec(t.db.update(people).set({ name: null }));
    const nameless = await t.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo', headers: { authorization: `Bearer ${ok.access_token}` } });
    expect(nameless.json()).toEqual({ sub, preferred_username: 'ada', updated_at: updatedAt });
    expect('name' in decodeJwt((await spaTokens(t, cookie, { scope: 'openid profile' })).id_token!)).toBe(false);
    t.clock.advance(901_000);
    expectOAuthError(
      await t.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo', headers: { authorization: `Bearer ${ok.access_token}` } }),
      401, 'invalid_token',
    );
  });

  it('revocation answers 200 for unknown and foreign tokens and revokes only the caller\'s own', async () => {
    const { t, web, cookie } = await setUp();
    const tokens = await spaTokens(t, cookie);
    const revoke = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'POST', url: '/api/auth/oauth2/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: new URLSearchParams(form).toString() });
    expectOAuthError(await revoke({ client_id: 'notes' }), 400, 'invalid_request');
    expectOAuthError(await revoke({ token: 'x', client_id: 'nope' }), 401, 'invalid_client');
    expect((await revoke({ token: 'ghr_unknown', client_id: 'notes' })).statusCode).toBe(200);
    expect((await revoke({ token: tokens.access_token, client_id: 'notes', token_type_hint: 'access_token' })).statusCode).toBe(200);
    expect((await revoke({ token: tokens.refresh_token! }, { authorization: basic('billing', web.clientSecret) })).statusCode).toBe(200);
    const still = await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: 'notes' });
    expect(still.statusCode).toBe(200);
    const res = await revoke({ token: still.json().refresh_token, client_id: 'notes', token_type_hint: 'refresh_token' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    expectOAuthError(await token(t, { grant_type: 'refresh_token', refresh_token: still.json().refresh_token, client_id: 'notes' }), 400, 'invalid_grant');
  });

  it('a revoked access token is refused at userinfo until it expires; only its own client can revoke it', async () => {
    const { t, web, cookie } = await setUp();
    const tokens = await spaTokens(t, cookie, { scope: 'openid' });
    const other = await spaTokens(t, cookie, { scope: 'openid' });
    const userinfo = (accessToken: string) =>
      t.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo', headers: { authorization: `Bearer ${accessToken}` } });
    const revoke = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'POST', url: '/api/auth/oauth2/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: new URLSearchParams(form).toString() });
    // Another client's revocation answers 200 (RFC 7009 §2.2) and revokes nothing.
    expect((await revoke({ token: tokens.access_token }, { authorization: basic('billing', web.clientSecret) })).statusCode).toBe(200);
    expect((await userinfo(tokens.access_token)).statusCode).toBe(200);
    const res = await revoke({ token: tokens.access_token, client_id: 'notes' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    const refused = await userinfo(tokens.access_token);
    expectOAuthError(refused, 401, 'invalid_token');
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="gatehouse", error="invalid_token", error_description="The access token has been revoked."');
    expect((await userinfo(other.access_token)).statusCode).toBe(200);
    // Kept until the token would have expired, then forgotten by the retention rule.
    const { jti, exp } = decodeJwt(tokens.access_token) as { jti: string; exp: number };
    expect(await many(t.db.select().from(revokedAccessTokens))).toEqual([
      { jti, expiresAt: new Date(exp * 1000), revokedAt: t.clock.now() },
    ]);
    expect(await isAccessTokenRevoked(t.db, jti, t.clock.now())).toBe(true);
    t.clock.advance(901_000);
    expect((await sweep(t.db, t.config, t.clock, { between: async () => {} })).pruned['revoked access tokens']).toBe(1);
    expect(await many(t.db.select().from(revokedAccessTokens))).toEqual([]);
    // An expired access token is not recorded at all (it cannot be used anyway).
    expect((await revoke({ token: other.access_token, client_id: 'notes' })).statusCode).toBe(200);
    expect(await many(t.db.select().from(revokedAccessTokens))).toEqual([]);
  });

  it('a process started on a data directory with revoked access tokens on the list refuses them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-revoked-'));
    try {
      const file = join(dir, 'gatehouse.db');
      const now = new Date();
      const first = openDatabase(file);
      // Nothing listed: no token is revoked (and the list's latest expiry is remembered as none).
      expect(await isAccessTokenRevoked(first, 'jti-a', now)).toBe(false);
      await recordRevokedAccessToken(first, 'jti-a', new Date(now.getTime() + 60_000), now);
      expect(await isAccessTokenRevoked(first, 'jti-a', now)).toBe(true);
      expect(await isAccessTokenRevoked(first, 'jti-b', now)).toBe(false);
      first.$client.close();
      // A new handle (a restart) reads the list's latest expiry from the store.
      const second = openDatabase(file);
      expect(await isAccessTokenRevoked(second, 'jti-a', now)).toBe(true);
      expect(await isAccessTokenRevoked(second, 'jti-a', new Date(now.getTime() + 59_999))).toBe(true);
      second.$client.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('looks revoked access tokens up by index, and sweeps them by index', () => {
    const db = openDatabase(':memory:');
    const plan = (sql: string) => db.$client.prepare(`EXPLAIN QUERY PLAN ${sql}`).all().map((r) => (r as { detail: string }).detail).join('; ');
    expect(plan("SELECT 1 FROM revoked_access_tokens WHERE jti = 'x'")).toBe('SEARCH revoked_access_tokens USING COVERING INDEX sqlite_autoindex_revoked_access_tokens_1 (jti=?)');
    expect(plan('DELETE FROM revoked_access_tokens WHERE rowid IN (SELECT rowid FROM revoked_access_tokens WHERE expires_at <= 1 LIMIT 500)')).toBe(
      'SEARCH revoked_access_tokens USING INTEGER PRIMARY KEY (rowid=?); LIST SUBQUERY 1; SEARCH revoked_access_tokens USING COVERING INDEX revoked_access_tokens_expires_idx (expires_at<?)',
    );
    db.$client.close();
  });

  it('end-session redirects only to a registered URI, ends the session and its refresh tokens', async () => {
    const { t, cookie } = await setUp();
    const tokens = await spaTokens(t, cookie);
    const end = (query: Record<string, string>) =>
      t.app.inject({ method: 'GET', url: `/api/auth/oauth2/end-session?${new URLSearchParams(query).toString()}`, headers: { cookie } });

    const unregistered = await end({ client_id: 'notes', post_logout_redirect_uri: 'https://evil.example.com/' });
    expect(unregistered.statusCode).toBe(400);
    expect(unregistered.headers.location).toBeUndefined();
    expect((await end({ post_logout_redirect_uri: SPA_REDIRECT })).statusCode).toBe(400); // no client named
    expect((await end({ id_token_hint: 'not.a.token', post_logout_redirect_uri: SPA_REDIRECT })).statusCode).toBe(400);
    expect((await end({ id_token_hint: tokens.id_token!, client_id: 'billing' })).statusCode).toBe(400);
    // Nothing ended so far.
    expect(location(await authorize(t, spaParams().params, cookie)).searchParams.get('code')).toBeTruthy();

    const res = await end({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: SPA_REDIRECT, state: 'bye' });
    const url = location(res);
    expect(url.origin + url.pathname).toBe(SPA_REDIRECT);
    expect(url.searchParams.get('state')).toBe('bye');
    expect(res.cookies.find((c) => c.name === 'gatehouse_session')?.value).toBe('');
    expect(location(await authorize(t, spaParams().params, cookie)).pathname).toBe('/sign-in');
    expectOAuthError(await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: 'notes' }), 400, 'invalid_grant');

    const page = await end({});
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('You are signed out');
  });

  it('end-session takes postLogoutRedirectUris once the application sets them; until then its redirect URIs', async () => {
    const { t, cookie } = await setUp();
    const end = (uri: string) =>
      t.app.inject({ method: 'GET', url: `/api/auth/oauth2/end-session?${new URLSearchParams({ client_id: 'notes', post_logout_redirect_uri: uri, state: 's' })}` });
    const signedOut = 'http://127.0.0.1:5173/signed-out';
    // Not set: the redirect URIs stand in (existing applications keep working), the new one is refused.
    expect(location(await end(SPA_REDIRECT)).toString()).toBe(`${SPA_REDIRECT}?state=s`);
    expect((await end(signedOut)).statusCode).toBe(400);
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { postLogoutRedirectUris: [signedOut] })).statusCode).toBe(200);
    expect(location(await end(signedOut)).toString()).toBe(`${signedOut}?state=s`);
    const refused = await end(SPA_REDIRECT);
    expect(refused.statusCode).toBe(400);
    expect(refused.headers.location).toBeUndefined();
    expect(refused.body).toContain('The post-logout address is not registered for this application.');
    // The session is untouched by the refused request, and a hinted sign-out goes to the new list too.
    const tokens = await spaTokens(t, cookie);
    const hinted = await t.app.inject({
      method: 'GET', url: `/api/auth/oauth2/end-session?${new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: signedOut })}`, headers: { cookie },
    });
    expect(location(hinted).toString()).toBe(signedOut);
  });

  it('end-session takes only an ID token as id_token_hint, not an access token carrying the same sid', async () => {
    const { t, cookie } = await setUp();
    // An audience equal to the client id makes an access token's `aud` read like an ID token's.
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { audience: 'notes' })).statusCode).toBe(200);
    const tokens = await spaTokens(t, cookie);
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: 'notes', sid: decodeJwt(tokens.id_token!).sid });
    const query = new URLSearchParams({ id_token_hint: tokens.access_token, post_logout_redirect_uri: SPA_REDIRECT }).toString();
    const res = await t.app.inject({ method: 'GET', url: `/api/auth/oauth2/end-session?${query}`, headers: { cookie } });
    expect(res.statusCode).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(location(await authorize(t, spaParams().params, cookie)).searchParams.get('code')).toBeTruthy(); // still signed in
  });

  it('end-session matches a native client\'s loopback post_logout_redirect_uri on any port, like authorize', async () => {
    const { t } = await setUp();
    expect((await t.admin('POST', '/api/admin/applications', {
      id: 'desk', name: 'Desk', audience: 'https://desk.example.com/api', clientType: 'native', redirectUris: ['http://127.0.0.1/cb'],
    })).statusCode).toBe(201);
    const end = (uri: string) => t.app.inject({
      method: 'GET', url: `/api/auth/oauth2/end-session?${new URLSearchParams({ client_id: 'desk', post_logout_redirect_uri: uri, state: 's' })}`,
    });
    expect(location(await end('http://127.0.0.1:41234/cb')).toString()).toBe('http://127.0.0.1:41234/cb?state=s');
    expect((await end('http://127.0.0.1:41234/other')).statusCode).toBe(400);
    expect((await end('http://localhost:41234/cb')).statusCode).toBe(400);
  });

  it('end-session without a hint from this session asks the person first; the confirmed form ends it', async () => {
    const { t, cookie } = await setUp();
    const other = await spaTokens(t, cookie);
    const tokens = await spaTokens(t, cookie);
    // A hint issued in another session (signed out since) is no proof this browser's person wants out.
    const staleHint = await signIn(t, { email: 'ada@example.com', applicationId: 'notes' });
    const laterCookie = `gatehouse_session=${staleHint.cookies.find((c) => c.name === 'gatehouse_session')!.value}`;
    const query = `?${new URLSearchParams({ client_id: 'notes', post_logout_redirect_uri: SPA_REDIRECT, state: 'bye' }).toString()}`;
    for (const [url, browser] of [
      [`/api/auth/oauth2/end-session${query}`, cookie],
      [`/api/auth/oauth2/end-session?id_token_hint=${other.id_token}`, laterCookie],
    ] as const) {
      const ask = await t.app.inject({ method: 'GET', url, headers: { cookie: browser } });
      expect(ask.statusCode).toBe(200);
      expect(ask.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(ask.headers['cache-control']).toBe('no-store');
      expect(ask.body).toContain('<h1>Sign out?</h1>');
      expect(ask.cookies.find((c) => c.name === 'gatehouse_session')).toBeUndefined();
    }
    // Nothing ended: both sessions still authorize silently, the refresh token still works.
    expect(location(await authorize(t, spaParams().params, cookie)).searchParams.get('code')).toBeTruthy();
    expect(location(await authorize(t, spaParams().params, laterCookie)).searchParams.get('code')).toBeTruthy();
    const stillGood = await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: 'notes' });
    expect(stillGood.statusCode).toBe(200);

    // A cross-site POST without the page's token is refused.
    const forged = await postForm(t, '/api/auth/oauth2/end-session', { client_id: 'notes' }, cookie);
    expect(forged.statusCode).toBe(200);
    expect(forged.body).toContain('<h1>Sign out?</h1>');
    const wrongToken = await postForm(t, '/api/auth/oauth2/end-session', { client_id: 'notes', csrf_token: 'x'.repeat(43) }, cookie);
    expect(wrongToken.statusCode).toBe(403);
    expect(wrongToken.body).toContain('<code>csrf_failed</code>');

    const page = await openPage(t, `/api/auth/oauth2/end-session${query}`, cookie);
    expect(page.res.headers['content-security-policy']).toContain("form-action 'self' http://127.0.0.1:5173");
    expect(csrfFrom(page.res)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const done = await signOutConfirmed(t, cookie, query);
    const back = location(done);
    expect(back.origin + back.pathname).toBe(SPA_REDIRECT);
    expect(back.searchParams.get('state')).toBe('bye');
    expect(done.cookies.find((c) => c.name === 'gatehouse_session')?.value).toBe('');
    expect(location(await authorize(t, spaParams().params, cookie)).pathname).toBe('/sign-in');
    expectOAuthError(await token(t, { grant_type: 'refresh_token', refresh_token: stillGood.json().refresh_token, client_id: 'notes' }), 400, 'invalid_grant');
  });
});

describe('failure rate limit', () => {
  it('an address with too many failed grants for a client gets 429 temporarily_unavailable for it until the minute is over', async () => {
    const t = await makeApp({ config: { env: { GATEHOUSE_TOKEN_FAILURE_LIMIT: '3' } } });
    const { cookie, web } = await setUpClients(t);
    const tokens = await spaTokens(t, cookie);
    const bad = { grant_type: 'refresh_token', refresh_token: 'ghr_unknown', client_id: 'notes' };
    for (let i = 0; i < 3; i++) expectOAuthError(await token(t, bad), 400, 'invalid_grant');
    const limited = await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: 'notes' });
    expectOAuthError(limited, 429, 'temporarily_unavailable');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another application's back end on the same address is not held back by this one's failures.
    const otherClient = await token(t, { grant_type: 'refresh_token', refresh_token: 'ghr_unknown' }, { authorization: basic('billing', web.clientSecret) });
    expectOAuthError(otherClient, 400, 'invalid_grant');
    // The same client named with percent-encoding in Basic credentials (RFC 6749 §2.3.1) shares the counter.
    const billing = (user: string) => ({ authorization: `Basic ${Buffer.from(`${user}:wrong`).toString('base64')}` });
    // billing's one failure above plus two more reach the limit of 3.
    for (let i = 0; i < 2; i++) expectOAuthError(await token(t, { grant_type: 'refresh_token', refresh_token: 'x' }, billing('billing')), 401, 'invalid_client');
    for (const spelling of ['%62illing', 'b%69lling', '%62%69%6c%6c%69%6e%67']) {
      expectOAuthError(await token(t, { grant_type: 'refresh_token', refresh_token: 'x' }, billing(spelling)), 429, 'temporarily_unavailable');
    }
    t.clock.advance(60_000);
    expect((await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: 'notes' })).statusCode).toBe(200);
  });
});
