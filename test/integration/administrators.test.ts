/**
 * The administrators API, the panel's tokens and first run (spec administrators-and-people.md):
 * roles given and taken by the owner only, the last owner kept (409 last_owner), changes audited
 * under the acting person; panel access tokens live ≤ 15 minutes, renew with their refresh token,
 * and stop working within a minute of the session ending or the role going; the owner created at
 * first run under the password policy; the password policy's settings.
 */
import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { makeApp, type TestApp } from '../helpers/app.js';
import { administrator, asBearer, multiFactorSession, panelSignIn, panelRedirect, personWithTotp } from '../helpers/admins.js';
import { pkcePair } from '../helpers/oauth-server.js';
import { postJson } from '../helpers/accounts.js';
import { authorize, location, token } from '../helpers/oauth-inject.js';
import { auditLog } from '../../server/db/schema.js';
import { many } from '../../server/db/store.js';
import { PANEL_CLIENT_ID } from '../../server/administrators/panel-client.js';
import { GRANT_CACHE_MS } from '../../server/administrators/panel-access.js';

const app = () => makeApp({ config: { env: { GATEHOUSE_SIGN_UP_RATE_LIMIT: '100' } } });

function decode(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

async function auditOf(t: TestApp, action: string) {
  return await many(t.db.select().from(auditLog).where(eq(auditLog.action, action)));
}

describe('administrators', () => {
  it('are named, listed and changed by the owner only, and the last owner stays', async () => {
    const t = await app();
    const owner = await administrator(t, 'olive@example.com', 'owner');
    const amy = await personWithTotp(t, 'amy@example.com');
    const { access_token: ownerToken } = await panelSignIn(t, owner);

    const put = await asBearer(t, ownerToken, 'PUT', `/api/admin/administrators/${amy.personId}`, { role: 'app_manager', applications: ['lobby'] });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ personId: amy.personId, email: 'amy@example.com', name: 'amy', role: 'app_manager', applications: ['lobby'], grantedBy: `person:${owner.personId}` });

    const list = (await t.admin('GET', '/api/admin/administrators')).json();
    expect(list.administrators.map((a: { email: string; role: string }) => [a.email, a.role])).toEqual([['olive@example.com', 'owner'], ['amy@example.com', 'app_manager']]);

    // An app manager may neither read nor raise roles, their own included.
    const { access_token: amyToken } = await panelSignIn(t, amy);
    for (const [method, url, body] of [
      ['GET', '/api/admin/administrators', undefined],
      ['PUT', `/api/admin/administrators/${amy.personId}`, { role: 'owner' }],
    ] as const) {
      const res = await asBearer(t, amyToken, method, url, body);
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('forbidden');
    }

    // Bad grants: unknown applications, applications for another role, none for an app manager.
    for (const [body, detail] of [
      [{ role: 'app_manager', applications: ['nope'] }, 'No such application: nope.'],
      [{ role: 'app_manager', applications: [PANEL_CLIENT_ID] }, `No such application: ${PANEL_CLIENT_ID}.`],
      [{ role: 'people_manager', applications: ['lobby'] }, 'Only an app_manager has applications.'],
      [{ role: 'app_manager' }, 'An app_manager needs at least one application.'],
    ] as const) {
      const res = await t.admin('PUT', `/api/admin/administrators/${amy.personId}`, body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'validation_failed', detail });
    }
    expect((await t.admin('PUT', '/api/admin/administrators/usr_nobody', { role: 'owner' })).json().code).toBe('person_not_found');

    // The last owner can be neither demoted nor removed; with a second owner, either can.
    for (const res of [
      await t.admin('PUT', `/api/admin/administrators/${owner.personId}`, { role: 'people_manager' }),
      await t.admin('DELETE', `/api/admin/administrators/${owner.personId}`),
    ]) {
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: 'last_owner', detail: 'This is the last owner: name another owner first, then change or remove this one.' });
    }
    expect((await asBearer(t, ownerToken, 'PUT', `/api/admin/administrators/${amy.personId}`, { role: 'owner' })).statusCode).toBe(200);
    const removed = await asBearer(t, ownerToken, 'DELETE', `/api/admin/administrators/${owner.personId}`);
    expect(removed.statusCode).toBe(204);
    expect((await t.admin('DELETE', `/api/admin/administrators/${owner.personId}`)).json().code).toBe('administrator_not_found');

    const changes = [...(await auditOf(t, 'administrator.added')), ...(await auditOf(t, 'administrator.role_changed')), ...(await auditOf(t, 'administrator.removed'))];
    expect(changes.map((e) => [e.action, e.actor, e.target, e.details.role ?? e.details.previousRole])).toEqual([
      ['administrator.added', 'admin', owner.personId, 'owner'],
      ['administrator.added', `person:${owner.personId}`, amy.personId, 'app_manager'],
      ['administrator.role_changed', `person:${owner.personId}`, amy.personId, 'owner'],
      ['administrator.removed', `person:${owner.personId}`, owner.personId, 'owner'],
    ]);
  });

  it('tells the panel who is calling and what their role covers', async () => {
    const t = await app();
    const pat = await administrator(t, 'pat@example.com', 'people_manager');
    const { access_token } = await panelSignIn(t, pat);
    // Capabilities come from the route table (admin-roles.test.ts proves them route by route, for each role).
    const me = (await asBearer(t, access_token, 'GET', '/api/admin/me')).json();
    expect(me).toEqual({
      via: 'panel', personId: pat.personId, email: 'pat@example.com', name: 'pat', role: 'people_manager', applications: [],
      capabilities: { everything: false, routes: expect.any(Array) },
    });
    expect(me.capabilities.routes).toContainEqual({ route: 'GET /people', applications: 'all' });
    expect(me.capabilities.routes).not.toContainEqual(expect.objectContaining({ route: 'DELETE /applications/:id' }));
    expect((await t.admin('GET', '/api/admin/me')).json()).toEqual({
      via: 'admin_token', personId: null, email: null, name: null, role: 'owner', applications: [], capabilities: { everything: true, routes: [] },
    });
  });
});

describe('panel tokens', () => {
  it('are short-lived access tokens for the panel audience, renewed with the refresh token', async () => {
    const t = await makeApp({ config: { accessTokenTtl: 3600, env: { GATEHOUSE_SIGN_UP_RATE_LIMIT: '100' } } });
    const owner = await administrator(t, 'olive@example.com', 'owner');
    const tokens = await panelSignIn(t, owner);
    expect(tokens.expires_in).toBe(600);
    const claims = decode(tokens.access_token);
    expect(claims).toMatchObject({ aud: 'urn:gatehouse:admin-panel', client_id: PANEL_CLIENT_ID, sub: owner.personId });
    expect((claims.exp as number) - (claims.iat as number)).toBe(600);
    expect(tokens.refresh_token).toBeTruthy();

    t.clock.advance(601_000);
    const expired = await asBearer(t, tokens.access_token, 'GET', '/api/admin/overview');
    expect(expired.statusCode).toBe(401);
    expect(expired.headers['www-authenticate']).toBe('Bearer');
    const renewed = await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: PANEL_CLIENT_ID });
    expect(renewed.statusCode, renewed.body).toBe(200);
    expect(renewed.json().expires_in).toBe(600);
    expect((await asBearer(t, renewed.json().access_token, 'GET', '/api/admin/overview')).statusCode).toBe(200);
  });

  it('stop working within a minute of the session ending, or of the role being removed', async () => {
    const t = await app();
    const owner = await administrator(t, 'olive@example.com', 'owner');
    const pat = await administrator(t, 'pat@example.com', 'people_manager');

    // Signing out of Gatehouse ends the session the panel token came from.
    const own = await panelSignIn(t, owner);
    expect((await asBearer(t, own.access_token, 'GET', '/api/admin/overview')).statusCode).toBe(200);
    expect((await postJson(t, '/api/auth/sign-out', undefined, { cookie: own.cookie })).statusCode).toBe(204);
    t.clock.advance(GRANT_CACHE_MS + 1);
    const afterSignOut = await asBearer(t, own.access_token, 'GET', '/api/admin/overview');
    expect(afterSignOut.statusCode).toBe(401);
    expect(afterSignOut.json().code).toBe('unauthorized');
    const refreshAfterSignOut = await token(t, { grant_type: 'refresh_token', refresh_token: own.refresh_token, client_id: PANEL_CLIENT_ID });
    expect(refreshAfterSignOut.json().error).toBe('invalid_grant');

    // Removing the role: refused at once on this instance, and the refresh token is dead.
    const theirs = await panelSignIn(t, pat);
    expect((await asBearer(t, theirs.access_token, 'GET', '/api/admin/people')).statusCode).toBe(200);
    expect((await t.admin('DELETE', `/api/admin/administrators/${pat.personId}`)).statusCode).toBe(204);
    expect((await asBearer(t, theirs.access_token, 'GET', '/api/admin/people')).statusCode).toBe(401);
    expect((await token(t, { grant_type: 'refresh_token', refresh_token: theirs.refresh_token, client_id: PANEL_CLIENT_ID })).json().error).toBe('invalid_grant');
    // And the panel's sign-in refuses them from now on.
    const again = await t.app.inject({
      method: 'GET',
      url: `/api/auth/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: PANEL_CLIENT_ID, redirect_uri: panelRedirect(t), scope: 'openid', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', prompt: 'none' })}`,
      headers: { cookie: theirs.cookie },
    });
    expect(again.statusCode).toBe(302);
    expect(new URL(again.headers.location as string).searchParams.get('error')).toBe('access_denied');
  });
});

describe('first run', () => {
  it('creates the owner once, with the admin token and under the password policy, and signs the browser in', async () => {
    const t = await app();
    expect((await t.app.inject({ method: 'GET', url: '/api/setup' })).json()).toEqual({
      ownerExists: false,
      passwordHint: 'At least 10 characters, rated at least “fair”, not one of the most common passwords. A few unrelated words work well.',
      panelSignIn: { issuer: t.config.issuer, clientId: PANEL_CLIENT_ID, redirectUri: `${t.config.issuer}/admin/signed-in`, audience: 'urn:gatehouse:admin-panel', scope: 'openid offline_access' },
    });
    const body = { email: 'Olive@Example.com', name: 'Olive Owner', password: 'correct horse battery' };
    const stranger = await t.app.inject({ method: 'POST', url: '/api/admin/setup/owner', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    expect(stranger.statusCode).toBe(401);

    const weak = await t.admin('POST', '/api/admin/setup/owner', { ...body, password: 'password123' });
    expect(weak.statusCode).toBe(400);
    expect(weak.json()).toMatchObject({ code: 'weak_password', detail: 'This password is one of the most common passwords, which attackers try first: choose another.' });
    const short = await t.admin('POST', '/api/admin/setup/owner', { ...body, password: 'Zq8#vLm2' });
    expect(short.json()).toMatchObject({ code: 'weak_password', detail: 'The password is too short: use at least 10 characters.' });

    const created = await t.admin('POST', '/api/admin/setup/owner', body);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().user).toMatchObject({ email: 'olive@example.com', name: 'Olive Owner', emailVerified: true });
    expect(created.cookies.find((c) => c.name === 'gatehouse_session')).toBeDefined();
    expect((await t.app.inject({ method: 'GET', url: '/api/setup' })).json().ownerExists).toBe(true);
    const twice = await t.admin('POST', '/api/admin/setup/owner', { ...body, email: 'other@example.com' });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().code).toBe('owner_exists');
    const admins = (await t.admin('GET', '/api/admin/administrators')).json().administrators;
    expect(admins).toMatchObject([{ email: 'olive@example.com', role: 'owner', grantedBy: 'admin' }]);

    // The owner is an admin member of every application created afterwards.
    const app1 = await t.admin('POST', '/api/admin/applications', { id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', redirectUris: ['https://notes.example.com/cb'] });
    expect(app1.statusCode).toBe(201);
    const members = (await t.admin('GET', '/api/admin/applications/notes/users')).json().users;
    expect(members.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([['olive@example.com', 'admin']]);
  });
});

describe('password policy settings', () => {
  it('reads for every administrator, changes for the owner, and applies to the next password', async () => {
    const t = await app();
    expect((await t.admin('GET', '/api/admin/settings/password-policy')).json()).toEqual({
      minLength: 10, minStrength: 2, rejectBreached: true,
      hint: 'At least 10 characters, rated at least “fair”, not one of the most common passwords. A few unrelated words work well.',
    });
    for (const body of [{ minLength: 7 }, { minLength: 129 }, { minStrength: 5 }, { rejectBreached: 'yes' }, { other: 1 }]) {
      const res = await t.admin('PATCH', '/api/admin/settings/password-policy', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('validation_failed');
    }
    const changed = await t.admin('PATCH', '/api/admin/settings/password-policy', { minLength: 12, minStrength: 0, rejectBreached: false });
    expect(changed.json()).toMatchObject({ minLength: 12, minStrength: 0, rejectBreached: false, hint: 'At least 12 characters. A few unrelated words work well.' });
    const [entry] = await auditOf(t, 'settings.password_policy_changed');
    expect(entry!.details).toEqual({ before: { minLength: 10, minStrength: 2, rejectBreached: true }, after: { minLength: 12, minStrength: 0, rejectBreached: false } });
    await t.admin('POST', '/api/admin/applications', { id: 'open', name: 'Open', audience: 'https://open.example.com', redirectUris: ['https://open.example.com/cb'], authPolicy: { signup_policy: 'open' } });
    const accepted = await postJson(t, '/api/auth/sign-up/email', { email: 'ann@example.com', password: 'password1234', applicationId: 'open' });
    expect(accepted.statusCode, accepted.body).toBe(201);
    const refused = await postJson(t, '/api/auth/sign-up/email', { email: 'bob@example.com', password: 'password123', applicationId: 'open' });
    expect(refused.json()).toMatchObject({ status: 400, code: 'weak_password', detail: 'The password is too short: use at least 12 characters.' });
  });
});

describe('test sign-in through the admin API', () => {
  it('exchanges the test flow code without the client secret, for administrators who may manage the application', async () => {
    const t = await app();
    const owner = await administrator(t, 'olive@example.com', 'owner');
    // Created after the owner: the owner is its admin member, so the test sign-in admits them at once.
    const created = await t.admin('POST', '/api/admin/applications', {
      id: 'billing', name: 'Billing', audience: 'https://billing.example.com/api', clientType: 'web',
      redirectUris: ['https://billing.example.com/cb', `${t.config.issuer}/admin/callback`],
    });
    expect(created.statusCode).toBe(201);
    const amy = await administrator(t, 'amy@example.com', 'app_manager', ['lobby']);
    const cookie = await multiFactorSession(t, owner, 'billing');
    const pkce = pkcePair();
    const authorized = await authorize(t, {
      response_type: 'code', client_id: 'billing', redirect_uri: `${t.config.issuer}/admin/callback`, scope: 'openid profile',
      state: 'st', code_challenge: pkce.challenge, code_challenge_method: 'S256',
    }, cookie);
    const code = location(authorized).searchParams.get('code')!;
    expect(code).toBeTruthy();

    const { access_token: amyToken } = await panelSignIn(t, amy);
    const refused = await asBearer(t, amyToken, 'POST', '/api/admin/applications/billing/test-sign-in', { code, codeVerifier: pkce.verifier });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('forbidden');

    const exchanged = await t.admin('POST', '/api/admin/applications/billing/test-sign-in', { code, codeVerifier: pkce.verifier });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    expect(exchanged.headers['cache-control']).toBe('no-store');
    expect(decode(exchanged.json().access_token)).toMatchObject({ aud: 'https://billing.example.com/api', sub: owner.personId, app_user: { role: 'admin' } });
    const again = await t.admin('POST', '/api/admin/applications/billing/test-sign-in', { code, codeVerifier: pkce.verifier });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ code: 'test_sign_in_failed', detail: 'The code exchange was refused (invalid_grant): The authorization code has already been used.' });
  });

  it("reuses the administrator's own panel session: after test-sign-in/session the test's authorize answers a code at once", async () => {
    const t = await app();
    const owner = await administrator(t, 'olive@example.com', 'owner');
    const callback = `${t.config.issuer}/admin/callback`;
    expect((await t.admin('POST', '/api/admin/applications', {
      id: 'billing', name: 'Billing', audience: 'https://billing.example.com/api', clientType: 'web', redirectUris: ['https://billing.example.com/cb', callback],
    })).statusCode).toBe(201);
    const amy = await administrator(t, 'amy@example.com', 'app_manager', ['lobby']);
    const signedInAt = Math.floor(t.clock.now().getTime() / 1000);
    const { access_token: panelToken, cookie } = await panelSignIn(t, owner);
    const pkce = pkcePair();
    const request = { response_type: 'code', client_id: 'billing', redirect_uri: callback, scope: 'openid profile', state: 'st', code_challenge: pkce.challenge, code_challenge_method: 'S256' };

    // Signed in to the panel only: the application's own sign-in is asked for.
    expect(location(await authorize(t, request, cookie)).pathname).toBe('/sign-in');
    const reused = await asBearer(t, panelToken, 'POST', '/api/admin/applications/billing/test-sign-in/session');
    expect(reused.statusCode, reused.body).toBe(200);
    expect(reused.json()).toEqual({ sessionReused: true });
    const answered = location(await authorize(t, request, cookie));
    expect(`${answered.origin}${answered.pathname}`).toBe(callback);
    const code = answered.searchParams.get('code')!;
    const exchanged = await asBearer(t, panelToken, 'POST', '/api/admin/applications/billing/test-sign-in', { code, codeVerifier: pkce.verifier });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    // auth_time is the panel sign-in's, not the moment of the test.
    const idToken = decode(exchanged.json().id_token);
    expect(idToken).toMatchObject({ sub: owner.personId, amr: ['pwd', 'otp', 'mfa'], auth_time: signedInAt });
    expect(idToken.iat).toBeGreaterThan(signedInAt);

    // The admin token has no session to reuse; an app manager of another application may not.
    expect((await t.admin('POST', '/api/admin/applications/billing/test-sign-in/session')).json()).toEqual({ sessionReused: false });
    const refused = await asBearer(t, (await panelSignIn(t, amy)).access_token, 'POST', '/api/admin/applications/billing/test-sign-in/session');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('forbidden');
  });
});
