import { describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication, PASSWORD, sessionCookieOf, signUp } from '../helpers/accounts.js';

const INV = '/api/admin/applications/notes/invitations';

async function setup() {
  const t = await makeApp({ clock: new Date('2026-03-01T10:00:00Z') });
  await createApplication(t, { id: 'notes', name: 'Notes <Team>', redirectUris: ['https://notes.example.com/callback'] });
  await createApplication(t, { id: 'wiki', name: 'Wiki', audience: 'https://wiki.example.com', authPolicy: { signup_policy: 'open' } });
  return t;
}

async function invite(t: TestApp, email: string) {
  const inv = (await t.admin('POST', INV, { emails: [email], role: 'admin', message: 'Hello <b>friend</b>' })).json().invitations[0];
  return { id: inv.id as string, path: new URL(inv.acceptUrl).pathname };
}

/** Cookie header carrying every cookie a page set (CSRF) plus optional extras. */
function cookiesOf(res: LightMyRequestResponse, extra: string[] = []): string {
  return [...res.cookies.map((c) => `${c.name}=${c.value}`), ...extra].join('; ');
}

function csrfOf(res: LightMyRequestResponse): string {
  return /name="csrf_token" value="([^"]+)"/.exec(res.body)![1]!;
}

function postForm(t: TestApp, url: string, form: Record<string, string>, cookie: string) {
  return t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded', cookie }, payload: new URLSearchParams(form).toString() });
}

async function members(t: TestApp) {
  return (await t.admin('GET', '/api/admin/applications/notes/users')).json().users.map((u: { email: string; role: string }) => `${u.email}:${u.role}`);
}

describe('invitation page /invite/:token', () => {
  it('shows the app and message (escaped) and lets a new person sign up with the e-mail fixed', async () => {
    const t = await setup();
    const { path } = await invite(t, 'new@example.com');
    const page = await t.app.inject({ method: 'GET', url: path });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('Join Notes &lt;Team&gt;');
    expect(page.body).toContain('Hello &lt;b&gt;friend&lt;/b&gt;');
    expect(page.body).toContain('<input type="email" name="email" value="new@example.com" readonly>');
    expect(page.body).toContain(`action="${path}/sign-up"`);

    // The e-mail in the form is ignored: the invited address is used.
    const res = await postForm(t, `${path}/sign-up`, { csrf_token: csrfOf(page), name: 'New', email: 'other@example.com', password: PASSWORD }, cookiesOf(page));
    expect(res.statusCode).toBe(303);
    // Not straight to the application's address (it may not be running): a page saying so, with a button (issue 33).
    expect(res.headers.location).toBe('/invite/joined/notes');
    expect(res.cookies.find((c) => c.name === 'gatehouse_session')).toBeTruthy();
    expect(await members(t)).toEqual(['new@example.com:admin']);
    const joined = await t.app.inject({ method: 'GET', url: '/invite/joined/notes', headers: { cookie: `gatehouse_session=${res.cookies.find((c) => c.name === 'gatehouse_session')!.value}` } });
    expect(joined.statusCode).toBe(200);
    expect(joined.body).toContain('<h1>You have joined Notes &lt;Team&gt;</h1>');
    expect(joined.body).toContain('<a class="button" href="https://notes.example.com/">Open Notes &lt;Team&gt;</a>');
    // Nobody else sees it: without a session, or for an application they are not in, the account page.
    const stranger = await t.app.inject({ method: 'GET', url: '/invite/joined/notes' });
    expect([stranger.statusCode, stranger.headers.location]).toEqual([303, '/account']);

    const used = await t.app.inject({ method: 'GET', url: path });
    expect(used.statusCode).toBe(410);
    expect(used.body).toContain('This invitation was already used');
  });

  it('finishes the application\'s authorization request after joining: given with the link, or remembered by the sign-in page (issue 25)', async () => {
    const t = await setup();
    const { path } = await invite(t, 'new@example.com');
    const request = `/api/auth/oauth2/authorize?${new URLSearchParams({
      response_type: 'code', client_id: 'notes', redirect_uri: 'https://notes.example.com/callback', scope: 'openid', state: 'joined',
    }).toString()}`;
    // The invite-only application's sign-in page remembers the request for the invitation pages.
    const signInPage = await t.app.inject({ method: 'GET', url: `/sign-in?${new URLSearchParams({ client_id: 'notes', return_to: request }).toString()}` });
    const resume = signInPage.cookies.find((c) => c.name === 'gatehouse_resume');
    expect(resume).toMatchObject({ value: request, path: '/invite/', httpOnly: true, sameSite: 'Lax', maxAge: 3600 });
    const page = await t.app.inject({ method: 'GET', url: path, cookies: { gatehouse_resume: request } });
    expect(page.body).toContain(`<input type="hidden" name="return_to" value="${request.replaceAll('&', '&amp;')}">`);
    const joined = await postForm(t, `${path}/sign-up`, { csrf_token: csrfOf(page), name: 'New', password: PASSWORD, return_to: request }, cookiesOf(page));
    expect(joined.statusCode).toBe(303);
    expect(joined.headers.location).toBe(request);
    // Signed in and a member now: the request completes with a code.
    const session = joined.cookies.find((c) => c.name === 'gatehouse_session')!.value;
    const done = await t.app.inject({ method: 'GET', url: request, headers: { cookie: `gatehouse_session=${session}` } });
    expect(done.statusCode).toBe(302);
    const landed = new URL(String(done.headers.location));
    expect(landed.origin + landed.pathname).toBe('https://notes.example.com/callback');
    expect(landed.searchParams.get('state')).toBe('joined');
    expect(landed.searchParams.get('code')).toBeTruthy();

    // A request of another application is never followed from an invitation.
    const { path: other } = await invite(t, 'two@example.com');
    const foreign = request.replace('client_id=notes', 'client_id=wiki');
    const page2 = await t.app.inject({ method: 'GET', url: other });
    const res = await postForm(t, `${other}/sign-up`, { csrf_token: csrfOf(page2), name: 'Two', password: PASSWORD, return_to: foreign }, cookiesOf(page2));
    expect(res.headers.location).toBe('/invite/joined/notes');
  });

  it('an existing person signs in on the page and joins', async () => {
    const t = await setup();
    await signUp(t, { email: 'old@example.com', applicationId: 'wiki' });
    const { path } = await invite(t, 'old@example.com');
    const page = await t.app.inject({ method: 'GET', url: path });
    expect(page.body).toContain(`action="${path}/sign-in"`);
    const wrong = await postForm(t, `${path}/sign-in`, { csrf_token: csrfOf(page), password: 'wrong password!' }, cookiesOf(page));
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('class="error"');
    expect(await members(t)).toEqual([]);
    const res = await postForm(t, `${path}/sign-in`, { csrf_token: csrfOf(page), password: PASSWORD }, cookiesOf(page));
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/invite/joined/notes');
    expect(await members(t)).toEqual(['old@example.com:admin']);
  });

  it('a signed-in invitee confirms with one click; the wrong account gets a clear page', async () => {
    const t = await setup();
    const ann = sessionCookieOf(await signUp(t, { email: 'ann@example.com', applicationId: 'wiki' }));
    const eve = sessionCookieOf(await signUp(t, { email: 'eve@example.com', applicationId: 'wiki' }));
    const { path } = await invite(t, 'ann@example.com');

    const wrong = await t.app.inject({ method: 'GET', url: path, headers: { cookie: `gatehouse_session=${eve}` } });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.body).toContain('This invitation is for another account');
    expect(wrong.body).toContain('signed in as eve@example.com');

    const page = await t.app.inject({ method: 'GET', url: path, headers: { cookie: `gatehouse_session=${ann}` } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Signed in as <strong>ann@example.com</strong>');
    const noCsrf = await postForm(t, `${path}/accept`, {}, `gatehouse_session=${ann}`);
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.headers['content-type']).toBe('text/html; charset=utf-8');
    const res = await postForm(t, `${path}/accept`, { csrf_token: csrfOf(page) }, cookiesOf(page, [`gatehouse_session=${ann}`]));
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/invite/joined/notes');
    expect(await members(t)).toEqual(['ann@example.com:admin']);
  });

  it('expired, revoked and unknown links get their own pages', async () => {
    const t = await setup();
    const a = await invite(t, 'a@example.com');
    const b = await invite(t, 'b@example.com');
    await t.admin('DELETE', `${INV}/${b.id}`);
    const revoked = await t.app.inject({ method: 'GET', url: b.path });
    expect(revoked.statusCode).toBe(410);
    expect(revoked.body).toContain('This invitation was withdrawn');
    t.clock.advance(7 * 24 * 3600 * 1000);
    const expired = await t.app.inject({ method: 'GET', url: a.path });
    expect(expired.statusCode).toBe(410);
    expect(expired.body).toContain('This invitation has expired');
    const unknown = await t.app.inject({ method: 'GET', url: '/invite/ghi_unknown' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('Invitation not found');
  });
});
