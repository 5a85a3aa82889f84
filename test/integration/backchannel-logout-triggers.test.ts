/**
 * Every way a sign-in ends queues back-channel logout tokens (spec grants-and-logout.md), through
 * the one session-ending function (accounts/session.ts, `endSessions`): sign-out, end-session,
 * DELETE /api/me/sessions/:sid, sign-out elsewhere, password change and reset, another person
 * signing in on the browser, and an administrator suspending or removing a member (then `sub`
 * only, to the realm's applications the person is a member of). Only applications that received
 * tokens from the ended session and have a `backchannelLogoutUri` are told, once. Workers do not
 * run here (inject tests), so the queued rows are read as written; delivery is tested over real
 * HTTP in backchannel-logout.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { asc } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication, postJson, sessionCookieOf, signIn, signUp } from '../helpers/accounts.js';
import { authorize, location, refusedBack, SPA_REDIRECT, spaParams, token, WEB_REDIRECT } from '../helpers/oauth-inject.js';
import { me, secondDeviceCookie } from '../helpers/self-service.js';
import { backchannelLogouts, sessionClients } from '../../server/db/schema.js';
import { issueToken } from '../../server/accounts/one-time-tokens.js';
import { many, transaction } from '../../server/db/store.js';

const NOTES_BCL = 'https://notes.example.com/backchannel-logout';
const BILLING_BCL = 'http://billing.lan:8080/logout';

/** notes (spa) and billing (web) with logout URIs, wiki (spa) without; Ada signed up to all three. */
async function setUp(options: { group?: boolean } = {}) {
  const t = await makeApp();
  if (options.group) expect((await t.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: 'Suite' })).statusCode).toBe(201);
  const ssoGroupId = options.group ? 'suite' : undefined;
  await createApplication(t, {
    id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: [SPA_REDIRECT],
    authPolicy: { signup_policy: 'open' }, backchannelLogoutUri: NOTES_BCL, ssoGroupId,
  });
  const billing = await createApplication(t, {
    id: 'billing', name: 'Billing', audience: 'https://billing.example.com/api', clientType: 'web', redirectUris: [WEB_REDIRECT],
    authPolicy: { signup_policy: 'open' }, backchannelLogoutUri: BILLING_BCL, ssoGroupId,
  });
  await createApplication(t, {
    id: 'wiki', name: 'Wiki', audience: 'https://wiki.example.com/api', clientType: 'spa', redirectUris: [SPA_REDIRECT],
    authPolicy: { signup_policy: 'open' },
  });
  const res = await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: 'notes' });
  expect(res.statusCode).toBe(201);
  const cookie = `gatehouse_session=${sessionCookieOf(res)}`;
  for (const app of ['billing', 'wiki']) expect((await signIn(t, { email: 'ada@example.com', applicationId: app }, { cookie })).statusCode).toBe(200);
  return { t, cookie, billingSecret: billing.clientSecret as string };
}

/** A code flow for `clientId` in the session of `cookie`; returns the ID token's claims. */
async function signInTo(t: TestApp, cookie: string, clientId: string, billingSecret: string) {
  const web = clientId === 'billing';
  const { pkce, params } = spaParams({ client_id: clientId, redirect_uri: web ? WEB_REDIRECT : SPA_REDIRECT, scope: 'openid offline_access' });
  const code = location(await authorize(t, params, cookie)).searchParams.get('code')!;
  const res = await token(t, {
    grant_type: 'authorization_code', code, redirect_uri: web ? WEB_REDIRECT : SPA_REDIRECT, client_id: clientId,
    code_verifier: pkce.verifier, ...(web ? { client_secret: billingSecret } : {}),
  });
  expect(res.statusCode, res.body).toBe(200);
  return decodeJwt(res.json().id_token) as { sub: string; sid: string };
}

async function queued(t: TestApp) {
  return await many(t.db
    .select({ app: backchannelLogouts.applicationId, sub: backchannelLogouts.subject, sid: backchannelLogouts.sessionId, reason: backchannelLogouts.reason, status: backchannelLogouts.status })
    .from(backchannelLogouts)
    .orderBy(asc(backchannelLogouts.applicationId), asc(backchannelLogouts.createdAt)));
}

describe('a session that received tokens', () => {
  it('records which applications received tokens from it, once each', async () => {
    const { t, cookie, billingSecret } = await setUp();
    const first = await signInTo(t, cookie, 'notes', billingSecret);
    await signInTo(t, cookie, 'notes', billingSecret);
    await signInTo(t, cookie, 'billing', billingSecret);
    const rows = await many(t.db.select().from(sessionClients).orderBy(asc(sessionClients.applicationId)));
    expect(rows.map((r) => [r.sessionId, r.applicationId])).toEqual([[first.sid, 'billing'], [first.sid, 'notes']]);
  });

  it('sign-out tells every application with a logout URI that got tokens from it: sub and sid, once', async () => {
    const { t, cookie, billingSecret } = await setUp();
    const idNotes = await signInTo(t, cookie, 'notes', billingSecret);
    const idBilling = await signInTo(t, cookie, 'billing', billingSecret);
    await signInTo(t, cookie, 'wiki', billingSecret); // no logout URI: nothing to send
    expect(idBilling.sid).toBe(idNotes.sid);

    expect((await postJson(t, '/api/auth/sign-out', undefined, { cookie })).statusCode).toBe(204);
    expect((await queued(t))).toEqual([
      { app: 'billing', sub: idNotes.sub, sid: idNotes.sid, reason: 'sign_out', status: 'pending' },
      { app: 'notes', sub: idNotes.sub, sid: idNotes.sid, reason: 'sign_out', status: 'pending' },
    ]);
    // Signing out again (the cookie is dead) queues nothing more.
    expect((await postJson(t, '/api/auth/sign-out', undefined, { cookie })).statusCode).toBe(204);
    expect((await queued(t))).toHaveLength(2);
  });

  it('an application that got no tokens from the ended session is not told', async () => {
    const { t, cookie, billingSecret } = await setUp();
    await signInTo(t, cookie, 'notes', billingSecret);
    expect((await postJson(t, '/api/auth/sign-out', undefined, { cookie })).statusCode).toBe(204);
    expect((await queued(t)).map((r) => r.app)).toEqual(['notes']);
  });

  it('end-session with an id_token_hint of this session ends it and tells the applications', async () => {
    const { t, cookie, billingSecret } = await setUp();
    const { pkce, params } = spaParams({ scope: 'openid' });
    const code = location(await authorize(t, params, cookie)).searchParams.get('code')!;
    const tokens = (await token(t, { grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: 'notes', code_verifier: pkce.verifier })).json();
    await signInTo(t, cookie, 'billing', billingSecret);
    const res = await t.app.inject({ method: 'GET', url: `/api/auth/oauth2/end-session?id_token_hint=${tokens.id_token}`, headers: { cookie } });
    expect(res.statusCode).toBe(200);
    const sid = decodeJwt(tokens.id_token).sid;
    expect((await queued(t)).map((r) => [r.app, r.sid, r.reason])).toEqual([['billing', sid, 'end_session'], ['notes', sid, 'end_session']]);
  });
});

describe('self-service session ends', () => {
  it('DELETE /api/me/sessions/:sid tells the applications of that session only', async () => {
    const { t, cookie, billingSecret } = await setUp();
    await signInTo(t, cookie, 'billing', billingSecret);
    const phone = await secondDeviceCookie(t, 'ada@example.com', 'notes');
    const phoneId = await signInTo(t, phone, 'notes', billingSecret);
    expect((await me(t, 'DELETE', `/api/me/sessions/${phoneId.sid}`, cookie)).statusCode).toBe(204);
    expect((await queued(t))).toEqual([{ app: 'notes', sub: phoneId.sub, sid: phoneId.sid, reason: 'session_revoked', status: 'pending' }]);
  });

  it('sign-out elsewhere and a password change tell the applications of every other session', async () => {
    const { t, cookie, billingSecret } = await setUp();
    await signInTo(t, cookie, 'notes', billingSecret);
    const phone = await secondDeviceCookie(t, 'ada@example.com', 'notes');
    const phoneId = await signInTo(t, phone, 'notes', billingSecret);
    const res = await me(t, 'POST', '/api/me/sessions/sign-out-all', cookie);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ revoked: 1 });
    expect((await queued(t))).toEqual([{ app: 'notes', sub: phoneId.sub, sid: phoneId.sid, reason: 'signed_out_elsewhere', status: 'pending' }]);

    const tablet = await secondDeviceCookie(t, 'ada@example.com', 'billing');
    const tabletId = await signInTo(t, tablet, 'billing', billingSecret);
    const change = await me(t, 'POST', '/api/me/password', cookie, { currentPassword: 'correct horse battery', newPassword: 'a brand new passphrase' });
    expect(change.statusCode, change.body).toBe(204);
    expect((await queued(t)).filter((r) => r.reason === 'password_changed')).toEqual([
      { app: 'billing', sub: tabletId.sub, sid: tabletId.sid, reason: 'password_changed', status: 'pending' },
    ]);
  });

  it('a password reset tells the applications of every session of the person', async () => {
    const { t, cookie, billingSecret } = await setUp();
    const laptopId = await signInTo(t, cookie, 'notes', billingSecret);
    const phone = await secondDeviceCookie(t, 'ada@example.com', 'billing');
    const phoneId = await signInTo(t, phone, 'billing', billingSecret);
    const resetToken = await transaction(t.db, async (tx) => issueToken(tx, t.clock.now(), laptopId.sub, 'password_reset'));
    const res = await postJson(t, '/api/auth/password-reset/confirm', { token: resetToken, password: 'a brand new passphrase' });
    expect(res.statusCode, res.body).toBe(204);
    expect((await queued(t))).toEqual([
      { app: 'billing', sub: phoneId.sub, sid: phoneId.sid, reason: 'password_reset', status: 'pending' },
      { app: 'notes', sub: laptopId.sub, sid: laptopId.sid, reason: 'password_reset', status: 'pending' },
    ]);
  });

  it("another person signing in on the browser ends the first person's session", async () => {
    const { t, cookie, billingSecret } = await setUp();
    const adaId = await signInTo(t, cookie, 'notes', billingSecret);
    expect((await signUp(t, { email: 'grace@example.com', name: 'Grace', applicationId: 'notes' }, { cookie })).statusCode).toBe(201);
    expect((await queued(t))).toEqual([{ app: 'notes', sub: adaId.sub, sid: adaId.sid, reason: 'replaced_by_other_person', status: 'pending' }]);
  });
});

describe('an administrator suspending or removing a member', () => {
  it('suspension tells each realm application the person is a member of, sub only', async () => {
    const { t, cookie, billingSecret } = await setUp({ group: true });
    const id = await signInTo(t, cookie, 'notes', billingSecret);
    await signInTo(t, cookie, 'billing', billingSecret); // joins billing too (same realm)
    await signInTo(t, cookie, 'wiki', billingSecret); // another realm: not told
    const member = (await t.admin('GET', '/api/admin/applications/notes/users')).json().users[0];
    const res = await t.admin('PATCH', `/api/admin/applications/notes/users/${member.id}`, { status: 'suspended' });
    expect(res.statusCode).toBe(200);
    expect((await queued(t))).toEqual([
      { app: 'billing', sub: id.sub, sid: null, reason: 'membership_suspended', status: 'pending' },
      { app: 'notes', sub: id.sub, sid: null, reason: 'membership_suspended', status: 'pending' },
    ]);
    // The browser session lives on for the person's other applications; notes itself refuses them.
    expect(refusedBack(await authorize(t, spaParams().params, cookie), 'suspended').searchParams.get('error')).toBe('access_denied');
    // A PATCH that leaves it suspended (a role change) does not tell them again.
    expect((await t.admin('PATCH', `/api/admin/applications/notes/users/${member.id}`, { role: 'admin' })).statusCode).toBe(200);
    expect((await queued(t))).toHaveLength(2);
  });

  it('removal tells the application itself (its membership is gone) and only that, outside a group', async () => {
    const { t, cookie, billingSecret } = await setUp();
    const id = await signInTo(t, cookie, 'billing', billingSecret);
    const member = (await t.admin('GET', '/api/admin/applications/billing/users')).json().users[0];
    expect((await t.admin('DELETE', `/api/admin/applications/billing/users/${member.id}`)).statusCode).toBe(204);
    expect((await queued(t))).toEqual([{ app: 'billing', sub: id.sub, sid: null, reason: 'membership_deleted', status: 'pending' }]);
    // The audit entry still counts the refresh-token families it revoked.
    const audit = (await t.admin('GET', '/api/admin/audit-log?action=membership.deleted')).json();
    expect(audit.entries[0].details).toMatchObject({ refreshFamiliesRevoked: 1 });
  });
});
