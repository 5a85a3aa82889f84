/**
 * Sessions through the self-service API: listing (current flag, device, recently ended ones),
 * signing out one device (its cookie and the refresh tokens born of it die), signing out
 * everywhere else, and password change (back-off, other sessions and their tokens end).
 */
import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { sessions } from '../../server/db/schema.js';
import { makeApp } from '../helpers/app.js';
import { PASSWORD, signIn } from '../helpers/accounts.js';
import { expectOAuthError, setUpClients, spaTokens, token } from '../helpers/oauth-inject.js';
import { expectProblem, expectValidation } from '../helpers/problem.js';
import { me, secondDeviceCookie, signedUpCookie } from '../helpers/self-service.js';

const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1';

/** Ada signed in on two devices (laptop = the first cookie, phone), each holding a refresh token. */
async function twoDevices() {
  const t = await makeApp();
  const clients = await setUpClients(t);
  const laptop = clients.cookie;
  t.clock.advance(60_000);
  const phone = await secondDeviceCookie(t, 'ada@example.com', 'notes', SAFARI_IPHONE);
  const laptopTokens = await spaTokens(t, laptop, { scope: 'openid offline_access' });
  const phoneTokens = await spaTokens(t, phone, { scope: 'openid offline_access' });
  const sessions = (await me(t, 'GET', '/api/me/sessions', laptop)).json().sessions as { id: string; current: boolean }[];
  const phoneSid = sessions.find((s) => !s.current)!.id;
  const laptopSid = sessions.find((s) => s.current)!.id;
  return { t, laptop, phone, laptopTokens, phoneTokens, phoneSid, laptopSid };
}

const refresh = (t: Awaited<ReturnType<typeof makeApp>>, refreshToken: string) =>
  token(t, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'notes' });

describe('listing sessions', () => {
  it('lists live sessions newest first with spec fields, the caller marked current, devices described', async () => {
    const t = await makeApp();
    const { cookie } = await setUpClients(t);
    const created = t.clock.now();
    t.clock.advance(60_000);
    const phone = await secondDeviceCookie(t, 'ada@example.com', undefined, SAFARI_IPHONE);
    const res = await me(t, 'GET', '/api/me/sessions', phone, undefined, { 'user-agent': FIREFOX_LINUX });
    expect(res.statusCode).toBe(200);
    const [first, second] = res.json().sessions;
    expect(res.json().sessions).toHaveLength(2);
    expect(first).toEqual({
      id: expect.stringMatching(/^ses_/), device: 'Mobile Safari 17 on iOS 17.1', ip: '127.0.0.1',
      created_at: t.clock.now().toISOString(), expires_at: new Date(t.clock.now().getTime() + 30 * 86400_000).toISOString(),
      last_seen_at: t.clock.now().toISOString(), is_active: true, current: true,
    });
    // inject's own User-Agent is not a browser, so it is shown as sent.
    expect(second).toMatchObject({ device: 'lightMyRequest', created_at: created.toISOString(), is_active: true, current: false });
    // The first device sees the same two, with itself as current.
    const fromFirst = (await me(t, 'GET', '/api/me/sessions', cookie)).json().sessions;
    expect(fromFirst.map((s: { id: string; current: boolean }) => [s.id, s.current])).toEqual([[first.id, false], [second.id, true]]);
    // A sign-in stores the User-Agent, not a description: it is described as the list is read (decision 0484).
    const stored = await t.db.select({ device: sessions.device, userAgent: sessions.userAgent }).from(sessions).where(eq(sessions.id, first.id));
    expect(stored).toEqual([{ device: '', userAgent: SAFARI_IPHONE }]);
  });

  it('lists sessions ended in the last 7 days after the live ones, and forgets older ones', async () => {
    const { t, laptop, phoneSid } = await twoDevices();
    expect((await me(t, 'DELETE', `/api/me/sessions/${phoneSid}`, laptop)).statusCode).toBe(204);
    let sessions = (await me(t, 'GET', '/api/me/sessions', laptop)).json().sessions;
    expect(sessions.map((s: { id: string; is_active: boolean }) => [s.id === phoneSid, s.is_active])).toEqual([[false, true], [true, false]]);
    t.clock.advance(7 * 86400_000 + 1000);
    // The laptop's own session is still live (30 days); the ended one is now too old to show.
    sessions = (await me(t, 'GET', '/api/me/sessions', laptop)).json().sessions;
    expect(sessions.map((s: { id: string }) => s.id === phoneSid)).toEqual([false]);
  });
});

describe('signing out a device', () => {
  it('ends that session: its cookie gets 401 and its refresh tokens die; the other device is untouched', async () => {
    const { t, laptop, phone, laptopTokens, phoneTokens, phoneSid, laptopSid } = await twoDevices();
    const res = await me(t, 'DELETE', `/api/me/sessions/${phoneSid}`, laptop);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(res.headers['set-cookie']).toBeUndefined();
    expectProblem(await me(t, 'GET', '/api/me/sessions', phone), 401, 'unauthorized');
    expectOAuthError(await refresh(t, phoneTokens.refresh_token!), 400, 'invalid_grant');
    // The laptop keeps its session and its refresh token.
    expect((await me(t, 'GET', '/api/me/memberships', laptop)).statusCode).toBe(200);
    expect((await refresh(t, laptopTokens.refresh_token!)).statusCode).toBe(200);
    // Audited as the person; deleting it again is a no-op.
    const audit = (await t.admin('GET', '/api/admin/audit-log?action=session.revoked')).json().entries;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: expect.stringMatching(/^person:usr_/), target: phoneSid });
    expect((await me(t, 'DELETE', `/api/me/sessions/${phoneSid}`, laptop)).statusCode).toBe(204);
    expect((await t.admin('GET', '/api/admin/audit-log?action=session.revoked')).json().entries).toHaveLength(1);
    expect(laptopSid).not.toBe(phoneSid);
  });

  it('signing out the current session clears the cookie', async () => {
    const { t, laptop, laptopSid } = await twoDevices();
    const res = await me(t, 'DELETE', `/api/me/sessions/${laptopSid}`, laptop);
    expect(res.statusCode).toBe(204);
    expect(String(res.headers['set-cookie'])).toMatch(/^gatehouse_session=; Max-Age=0; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax$/);
    expectProblem(await me(t, 'GET', '/api/me/sessions', laptop), 401, 'unauthorized');
  });

  it("answers 404 session_not_found for an unknown id and for someone else's session", async () => {
    const { t, laptop } = await twoDevices();
    const bob = await signedUpCookie(t, 'bob@example.com', 'notes');
    const bobSid = (await me(t, 'GET', '/api/me/sessions', bob)).json().sessions[0].id;
    expectProblem(await me(t, 'DELETE', `/api/me/sessions/${bobSid}`, laptop), 404, 'session_not_found');
    expectProblem(await me(t, 'DELETE', '/api/me/sessions/ses_unknown', laptop), 404, 'session_not_found');
    expect((await me(t, 'GET', '/api/me/sessions', bob)).statusCode).toBe(200);
    expectProblem(await me(t, 'DELETE', `/api/me/sessions/${'x'.repeat(201)}`, laptop), 414, 'uri_too_long');
  });

  it('signs out everywhere else: other sessions and all their refresh tokens end, this one stays', async () => {
    const { t, laptop, phone, laptopTokens, phoneTokens } = await twoDevices();
    const third = await secondDeviceCookie(t, 'ada@example.com', 'notes', FIREFOX_LINUX);
    const res = await me(t, 'POST', '/api/me/sessions/sign-out-all', laptop);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ revoked: 2 });
    for (const c of [phone, third]) expectProblem(await me(t, 'GET', '/api/me/sessions', c), 401, 'unauthorized');
    expectOAuthError(await refresh(t, phoneTokens.refresh_token!), 400, 'invalid_grant');
    expect((await refresh(t, laptopTokens.refresh_token!)).statusCode).toBe(200);
    const live = (await me(t, 'GET', '/api/me/sessions', laptop)).json().sessions.filter((s: { is_active: boolean }) => s.is_active);
    expect(live).toHaveLength(1);
    expect((await me(t, 'POST', '/api/me/sessions/sign-out-all', laptop)).json()).toEqual({ revoked: 0 });
  });
});

describe('changing the password', () => {
  const change = (t: Awaited<ReturnType<typeof makeApp>>, cookie: string, currentPassword: string, newPassword = 'a brand new passphrase') =>
    me(t, 'POST', '/api/me/password', cookie, { currentPassword, newPassword });

  it('needs the current password and ends the other sessions with their refresh tokens', async () => {
    const { t, laptop, phone, laptopTokens, phoneTokens } = await twoDevices();
    expectProblem(await change(t, laptop, 'not my password'), 403, 'invalid_current_password');
    expectValidation(await change(t, laptop, PASSWORD, 'short'), ['body.newPassword']);
    expectValidation(await me(t, 'POST', '/api/me/password', laptop, { currentPassword: PASSWORD }), ['body.newPassword']);
    expectValidation(await me(t, 'POST', '/api/me/password', laptop, { currentPassword: PASSWORD, newPassword: 'long enough!', extra: 1 }), ['body.extra']);
    const res = await change(t, laptop, PASSWORD);
    expect(res.statusCode, res.body).toBe(204);
    expectProblem(await me(t, 'GET', '/api/me/sessions', phone), 401, 'unauthorized');
    expectOAuthError(await refresh(t, phoneTokens.refresh_token!), 400, 'invalid_grant');
    expect((await refresh(t, laptopTokens.refresh_token!)).statusCode).toBe(200);
    expect((await me(t, 'GET', '/api/me/sessions', laptop)).statusCode).toBe(200);
    expectProblem(await signIn(t, { email: 'ada@example.com' }), 401, 'invalid_credentials');
    expect((await signIn(t, { email: 'ada@example.com', password: 'a brand new passphrase' })).statusCode).toBe(200);
    const audit = (await t.admin('GET', '/api/admin/audit-log?action=person.password_changed')).json().entries;
    expect(audit).toHaveLength(1);
    expect(audit[0].details).toEqual({ sessionsEnded: 1 });
  });

  it('counts wrong current passwords toward the per-account back-off (429 with Retry-After)', async () => {
    const t = await makeApp();
    const { cookie } = await setUpClients(t);
    // Asked in the person's own session, the first five count against that session (issue 22:
    // strangers cannot lock the owner out), then it is counted like anyone: four more, the fifth locks.
    for (let i = 0; i < 5; i++) expectProblem(await change(t, cookie, `own session ${i}`), 403, 'invalid_current_password');
    for (let i = 0; i < 4; i++) expectProblem(await change(t, cookie, `wrong ${i}`), 403, 'invalid_current_password');
    expectProblem(await change(t, cookie, 'wrong 5'), 403, 'invalid_current_password'); // the 5th locks
    const locked = await change(t, cookie, PASSWORD);
    expectProblem(locked, 429, 'rate_limited');
    expect(locked.headers['retry-after']).toBe('30');
    expectProblem(await signIn(t, { email: 'ada@example.com' }), 429, 'rate_limited');
    // The session itself is not touched by the lock.
    expect((await me(t, 'GET', '/api/me/memberships', cookie)).statusCode).toBe(200);
    t.clock.advance(31_000);
    expect((await change(t, cookie, PASSWORD)).statusCode).toBe(204);
  });
});
