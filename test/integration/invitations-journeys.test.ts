import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { people } from '../../server/db/schema.js';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication, postJson, sessionCookieOf, signIn, signUp } from '../helpers/accounts.js';
import { authorize, location, refusedBack, spaParams, SPA_REDIRECT } from '../helpers/oauth-inject.js';
import { one } from '../../server/db/store.js';

const INV = '/api/admin/applications/notes/invitations';
const DAY = 24 * 3600 * 1000;

async function setup(): Promise<TestApp> {
  const t = await makeApp({ clock: new Date('2026-03-01T10:00:00Z') });
  await createApplication(t, { id: 'notes', name: 'Notes', clientType: 'spa', redirectUris: [SPA_REDIRECT] });
  await createApplication(t, { id: 'wiki', name: 'Wiki', audience: 'https://wiki.example.com', authPolicy: { signup_policy: 'open' } });
  return t;
}

async function invite(t: TestApp, email: string, role = 'member'): Promise<{ id: string; token: string }> {
  const res = await t.admin('POST', INV, { emails: [email], role, message: 'Join Notes' });
  expect(res.statusCode).toBe(201);
  const inv = res.json().invitations[0];
  return { id: inv.id, token: inv.acceptUrl.split('/invite/')[1] };
}

const accept = (t: TestApp, token: string, cookie?: string) =>
  postJson(t, '/api/auth/invitations/accept', { token }, cookie ? { cookie: `gatehouse_session=${cookie}` } : {});

async function members(t: TestApp) {
  return (await t.admin('GET', '/api/admin/applications/notes/users')).json().users.map((u: { email: string; role: string }) => `${u.email}:${u.role}`);
}

describe('invitation journeys', () => {
  it('a new person signs up with the invitation token: joins with its role; a link not e-mailed leaves the address unverified', async () => {
    const t = await setup();
    const { id, token } = await invite(t, 'new@example.com', 'admin');
    const res = await signUp(t, { email: 'New@Example.com', name: 'New', invitationToken: token });
    expect(res.statusCode).toBe(201);
    expect(await members(t)).toEqual(['new@example.com:admin']);
    // No SMTP here: the link was only shown to the administrator, which proves nothing about the mailbox.
    expect((await one(t.db.select().from(people).where(eq(people.email, 'new@example.com'))))!.emailVerified).toBe(false);
    const listed = (await t.admin('GET', `${INV}?status=accepted`)).json().invitations;
    expect(listed).toMatchObject([{ id, status: 'accepted', acceptedAt: '2026-03-01T10:00:00.000Z' }]);
    // The link is spent.
    const again = await signUp(t, { email: 'new2@example.com', invitationToken: token });
    expect(again.statusCode).toBe(403);
    expect(again.json().code).toBe('signup_not_allowed');
  });

  it('an existing person signs in and accepts over JSON; lands on the app origin', async () => {
    const t = await setup();
    const cookie = sessionCookieOf(await signUp(t, { email: 'old@example.com', applicationId: 'wiki' }));
    const { token } = await invite(t, 'old@example.com');
    const res = await accept(t, token, cookie);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({ applicationId: 'notes', membershipId: expect.stringMatching(/^mem_/), role: 'member', redirectTo: 'http://127.0.0.1:5173/' });
    expect(await members(t)).toEqual(['old@example.com:member']);
    const twice = await accept(t, token, cookie);
    expect(twice.statusCode).toBe(409);
    expect(twice.json()).toMatchObject({ code: 'invitation_not_pending', detail: 'This invitation is accepted.' });
  });

  it('a different signed-in account is refused; signing up with another e-mail is refused', async () => {
    const t = await setup();
    const cookie = sessionCookieOf(await signUp(t, { email: 'mallory@example.com', applicationId: 'wiki' }));
    const { token } = await invite(t, 'alice@example.com');
    const res = await accept(t, token, cookie);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('invitation_wrong_account');
    const signUpOther = await signUp(t, { email: 'eve@example.com', invitationToken: token });
    expect(signUpOther.statusCode).toBe(403);
    expect(signUpOther.json().code).toBe('signup_not_allowed');
    expect(await members(t)).toEqual([]);
    expect((await t.admin('GET', `${INV}?status=pending`)).json().invitations).toHaveLength(1);
  });

  it('expired and revoked links are refused; unknown links are 404; no session is 401', async () => {
    const t = await setup();
    const cookie = sessionCookieOf(await signUp(t, { email: 'late@example.com', applicationId: 'wiki' }));
    const expired = await invite(t, 'late@example.com');
    t.clock.advance(7 * DAY);
    const res = await accept(t, expired.token, cookie);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'invitation_not_pending', detail: 'This invitation is expired.' });
    expect((await signUp(t, { email: 'late2@example.com', invitationToken: expired.token })).statusCode).toBe(403);

    // Resending revives it with a new link; the old one stays dead.
    const resent = (await t.admin('POST', `${INV}/${expired.id}/resend`)).json();
    const fresh = resent.acceptUrl.split('/invite/')[1];
    expect((await accept(t, expired.token, cookie)).statusCode).toBe(404);

    await t.admin('DELETE', `${INV}/${expired.id}`);
    const revoked = await accept(t, fresh, cookie);
    expect(revoked.statusCode).toBe(409);
    expect(revoked.json().detail).toBe('This invitation is revoked.');

    const unknown = await accept(t, 'ghi_nope', cookie);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('invitation_not_found');
    const anon = await accept(t, fresh);
    expect(anon.statusCode).toBe(401);
    expect(anon.json().code).toBe('unauthorized');
    const crossSite = await postJson(t, '/api/auth/invitations/accept', { token: fresh }, { cookie: `gatehouse_session=${cookie}`, origin: 'https://evil.example' });
    expect(crossSite.statusCode).toBe(403);
    expect(crossSite.json().code).toBe('csrf_failed');
    expect(await members(t)).toEqual([]);
  });

  it('an invite-only app reached directly refuses uninvited people', async () => {
    const t = await setup();
    const direct = await signUp(t, { email: 'walkin@example.com', applicationId: 'notes' });
    expect(direct.statusCode).toBe(403);
    expect(direct.json().code).toBe('signup_not_allowed');
    expect((await signUp(t, { email: 'walkin@example.com', applicationId: 'wiki' })).statusCode).toBe(201);
    const signedIn = await signIn(t, { email: 'walkin@example.com', applicationId: 'notes' });
    expect(signedIn.statusCode).toBe(200);
    const res = await authorize(t, spaParams().params, `gatehouse_session=${sessionCookieOf(signedIn)}`);
    const url = refusedBack(res, 'invite_only');
    expect(url.origin + url.pathname).toBe(SPA_REDIRECT);
    expect(url.searchParams.get('error')).toBe('access_denied');
    expect(url.searchParams.get('error_description')).toBe('Notes is open to invited people only.');
    expect(await members(t)).toEqual([]);
  });
});

describe('invitations and the membership they stand for', () => {
  it('joining another way spends the pending invitation, so it cannot bring a removed member back with its role', async () => {
    const t = await setup();
    expect((await t.admin('PATCH', '/api/admin/applications/notes/auth-policy', { signup_policy: 'open' })).statusCode).toBe(200);
    const { id, token } = await invite(t, 'z@example.com', 'admin');
    const joined = await signUp(t, { email: 'z@example.com', applicationId: 'notes' });
    expect(joined.statusCode).toBe(201);
    expect(await members(t)).toEqual(['z@example.com:member']);
    const listed = (await t.admin('GET', `${INV}?status=accepted`)).json().invitations;
    expect(listed).toMatchObject([{ id, status: 'accepted', acceptedAt: '2026-03-01T10:00:00.000Z' }]);
    expect((await t.admin('GET', `${INV}?status=pending`)).json().invitations).toEqual([]);

    const uid = (await t.admin('GET', '/api/admin/applications/notes/users')).json().users[0].id;
    expect((await t.admin('DELETE', `/api/admin/applications/notes/users/${uid}`)).statusCode).toBe(204);
    expect((await t.admin('PATCH', '/api/admin/applications/notes/auth-policy', { signup_policy: 'invite_only' })).statusCode).toBe(200);
    const back = await accept(t, token, sessionCookieOf(joined));
    expect(back.statusCode).toBe(409);
    expect(back.json()).toMatchObject({ code: 'invitation_not_pending', detail: 'This invitation is accepted.' });
    expect(await members(t)).toEqual([]);
  });

  it('a closed application takes no new members, invited or not; the invitation waits', async () => {
    const t = await setup();
    const newcomer = await invite(t, 'new@example.com', 'admin');
    const existing = await invite(t, 'old@example.com');
    const oldCookie = sessionCookieOf(await signUp(t, { email: 'old@example.com', applicationId: 'wiki' }));
    expect((await t.admin('PATCH', '/api/admin/applications/notes/auth-policy', { signup_policy: 'closed' })).statusCode).toBe(200);

    const signedUp = await signUp(t, { email: 'new@example.com', invitationToken: newcomer.token });
    expect(signedUp.statusCode).toBe(403);
    expect(signedUp.json()).toMatchObject({ code: 'signup_not_allowed', detail: 'Notes does not accept new members.' });
    expect(await one(t.db.select().from(people).where(eq(people.email, 'new@example.com')))).toBeUndefined();
    const accepted = await accept(t, existing.token, oldCookie);
    expect(accepted.statusCode).toBe(403);
    expect(accepted.json()).toMatchObject({ code: 'signup_not_allowed', detail: 'Notes does not accept new members.' });
    expect(await members(t)).toEqual([]);
    expect((await t.admin('GET', `${INV}?status=pending`)).json().invitations).toHaveLength(2);

    expect((await t.admin('PATCH', '/api/admin/applications/notes/auth-policy', { signup_policy: 'invite_only' })).statusCode).toBe(200);
    expect((await signUp(t, { email: 'new@example.com', invitationToken: newcomer.token })).statusCode).toBe(201);
    expect((await accept(t, existing.token, oldCookie)).statusCode).toBe(200);
    expect((await members(t)).sort()).toEqual(['new@example.com:admin', 'old@example.com:member']);
  });
});
