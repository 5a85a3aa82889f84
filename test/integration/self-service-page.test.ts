/**
 * The account page `/account`: signed-out view, what a signed-in person sees (profile forms built
 * from `profile_fields`, devices, sign-in methods, provider link forms, the LAN CA link), and each
 * form: CSRF, 303 back with a notice, or the page again with the error next to the form.
 */
import { describe, expect, it } from 'vitest';
import { PAGE_CSP } from '../../server/pages/render.js';
import type { LightMyRequestResponse } from 'fastify';
import { makeApp, makeInstance } from '../helpers/app.js';
import { PASSWORD, createApplication, signIn } from '../helpers/accounts.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { me, secondDeviceCookie, signedUpCookie } from '../helpers/self-service.js';
import type { TestApp } from '../helpers/app.js';

/**
 * A refused account form answers post/redirect/get (issue 25): 303 to its section's anchor with
 * the message in the one-minute flash cookie (issue 26), and the GET shows the message there,
 * focused, once: it clears the cookie.
 */
async function refusedInSection(t: TestApp, res: LightMyRequestResponse, cookie: string, anchor: string, target: string): Promise<string> {
  expect(res.statusCode, res.body).toBe(303);
  expect(res.headers.location).toBe(`/account#${anchor}`);
  const flash = flashCookie(res);
  const page = (await openPage(t, '/account', `${cookie}; gatehouse_flash=${flash}`)).res;
  expect(page.statusCode).toBe(200);
  expect(page.body).toContain(`<p class="error" role="alert" tabindex="-1" autofocus data-error-for="${target}">`);
  expect(page.cookies.find((c) => c.name === 'gatehouse_flash')).toMatchObject({ value: '', path: '/', httpOnly: true, sameSite: 'Lax' });
  // Shown once: a reload, without the cleared cookie, no longer has it.
  expect((await openPage(t, '/account', cookie)).res.body).not.toContain('data-error-for=');
  return page.body;
}

/** The flash cookie a refused form set: one minute, HttpOnly, SameSite=Lax. */
function flashCookie(res: LightMyRequestResponse): string {
  const set = res.cookies.find((c) => c.name === 'gatehouse_flash');
  expect(set, 'the refusal travels in the flash cookie').toMatchObject({ path: '/', httpOnly: true, sameSite: 'Lax', maxAge: 60 });
  return set!.value;
}

const FIELDS = [
  { key: 'team', label: 'Team', type: 'select', options: ['red', 'blue'], required: true, user_editable: true },
  { key: 'age', label: 'Age', type: 'integer', min: 1, max: 150, required: false, user_editable: true },
  { key: 'bio', label: 'Bio', type: 'text', max_length: 300, required: false, user_editable: true, description: 'A line about you' },
  { key: 'newsletter', label: 'Newsletter', type: 'boolean', required: false, user_editable: true },
  { key: 'employeeId', label: 'Employee id', type: 'string', required: false, user_editable: false },
];

async function setUp(config: Parameters<typeof makeApp>[0] = {}) {
  const t = await makeApp(config);
  await createApplication(t, { id: 'notes', name: 'Notes <&>', authPolicy: { signup_policy: 'open', profile_fields: FIELDS } });
  const session = await signedUpCookie(t, 'ada@example.com', 'notes');
  const page = await openPage(t, '/account', session);
  return { t, session, cookie: page.cookie, page: page.res, token: csrfFrom(page.res) };
}

describe('account page', () => {
  it('offers sign-in when signed out, with the page CSP and no caching', async () => {
    const t = await makeApp();
    const { res } = await openPage(t, '/account');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(PAGE_CSP);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain('<a class="button" href="/sign-in">Sign in</a>');
    const bad = await openPage(t, '/account', 'gatehouse_session=forged');
    expect(bad.res.body).toContain('href="/sign-in"');
    // A notice code shows its fixed message; anything else shows nothing.
    expect((await openPage(t, '/account?notice=signed_out')).res.body).toContain('<p class="notice" role="status">You are signed out.</p>');
    expect((await openPage(t, '/account?notice=%3Cscript%3E')).res.body).not.toContain('class="notice"');
  });

  it('shows the person, a profile form per application from its fields, devices and sign-in methods', async () => {
    const { page } = await setUp();
    const body = page.body;
    expect(page.statusCode).toBe(200);
    expect(body).toContain('<h1>ada</h1>');
    expect(body).toContain('<span class="badge">not verified</span>');
    expect(body).toContain('<h3>Notes &lt;&amp;&gt;</h3>');
    expect(body).toContain('action="/account/profile/notes"');
    expect(body).toMatch(/<select id="f-team" name="profile.team" required>\s*<option value="red">red<\/option><option value="blue">blue<\/option>/);
    expect(body).toContain('<input type="number" id="f-age" name="profile.age" value="" min="1" max="150" step="1">');
    expect(body).toContain('<textarea id="f-bio" name="profile.bio" rows="3" maxlength="300"></textarea>');
    expect(body).toContain('<small class="muted">A line about you</small>');
    expect(body).toContain('<input type="checkbox" id="f-newsletter" name="profile.newsletter" value="true">');
    // Not user-editable: shown, never submitted.
    expect(body).toContain('<input type="text" id="f-employeeId" value="" readonly>');
    expect(body).toContain('<span class="badge ok">this device</span>');
    expect(body).not.toContain('Sign out everywhere else');
    expect(body).toContain('<strong>E-mail and password</strong>');
    expect(body).not.toContain('Unlink'); // the only way in
    expect(body).toContain('action="/account/password"');
    expect(body).not.toContain('/ca.pem');
    expect(body).not.toContain('/account/link/');
  });

  it('offers "Link <Name>" for configured providers not yet linked, and the CA certificate in LAN TLS mode', async () => {
    const { page } = await setUp({
      config: { env: { GITHUB_CLIENT_ID: 'id', GITHUB_CLIENT_SECRET: 's', OIDC_ISSUER: 'https://idp.example', OIDC_CLIENT_ID: 'i', OIDC_CLIENT_SECRET: 's', OIDC_NAME: 'Corp SSO' }, tls: { mode: 'auto', extraNames: [] } },
    });
    expect(page.body).toMatch(/<form method="post" action="\/account\/link\/github">\s*<input type="hidden" name="csrf_token" value="[^"]+">\s*<button type="submit" class="secondary">Link GitHub<\/button>/);
    expect(page.body).toContain('<button type="submit" class="secondary">Link Corp SSO</button>');
    expect(page.body).not.toContain('/account/link/google');
    expect(page.body).toContain('<a href="/ca.pem">the local certificate authority</a>');
  });

  it('saves a profile form (typed values, unticked box = false, empty clears) and 303s back with a notice', async () => {
    const { t, session, cookie, token } = await setUp();
    const res = await postForm(t, '/account/profile/notes', { csrf_token: token, 'profile.team': 'blue', 'profile.age': '42', 'profile.bio': 'Hi', 'profile.newsletter': 'true' }, cookie);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe('/account?notice=profile_saved#app-notes');
    expect((await me(t, 'GET', '/api/me/memberships', session)).json().memberships[0].profile).toEqual({ team: 'blue', age: 42, bio: 'Hi', newsletter: true });
    const again = await postForm(t, '/account/profile/notes', { csrf_token: token, 'profile.team': 'blue', 'profile.age': '', 'profile.bio': 'Hi' }, cookie);
    expect(again.statusCode).toBe(303);
    expect((await me(t, 'GET', '/api/me/memberships', session)).json().memberships[0].profile).toEqual({ team: 'blue', bio: 'Hi', newsletter: false });
    const shown = (await openPage(t, '/account?notice=profile_saved', cookie)).res.body;
    expect(shown).toContain('Your profile was saved.');
    expect(shown).toContain('<option value="blue" selected>blue</option>');
  });

  it('shows the field errors in words and the submitted values in the section of the application (post/redirect/get)', async () => {
    const { t, cookie, token } = await setUp();
    const res = await postForm(t, '/account/profile/notes', { csrf_token: token, 'profile.team': 'blue', 'profile.age': 'many', 'profile.employeeId': 'E7' }, cookie);
    const body = await refusedInSection(t, res, cookie, 'app-notes', 'profile:notes');
    expect(body).toContain('data-error-for="profile:notes">Age: must be a number; Employee id: cannot be changed by the user</p>');
    expect(body).toContain('name="profile.age" value="many"');
    const unknownApp = await postForm(t, '/account/profile/wiki', { csrf_token: token, 'profile.x': '1' }, cookie);
    expect(unknownApp.statusCode).toBe(303);
    expect(unknownApp.headers.location).toBe('/account#app-wiki');
    expect((await openPage(t, '/account', `${cookie}; gatehouse_flash=${flashCookie(unknownApp)}`)).res.body).toContain('You are not a member of an application');
  });

  it('shows a refusal on another instance (no process memory), to its own session only, within a minute, unaltered', async () => {
    const { t, cookie, token } = await setUp();
    const other = await makeInstance(t);
    const res = await postForm(t, '/account/profile/notes', { csrf_token: token, 'profile.team': 'blue', 'profile.age': 'many' }, cookie);
    expect(res.statusCode).toBe(303);
    const flash = flashCookie(res);
    const error = 'data-error-for="profile:notes">Age: must be a number</p>';
    // The redirect's GET lands on the other instance, which shows the message and the typed value.
    const shown = (await openPage(other, '/account', `${cookie}; gatehouse_flash=${flash}`)).res.body;
    expect(shown).toContain(error);
    expect(shown).toContain('name="profile.age" value="many"');

    // Copied into another person's browser, it is not theirs: nothing shown, the cookie cleared.
    const bob = await signedUpCookie(t, 'bob@example.com', 'notes');
    const copied = (await openPage(other, '/account', `${bob}; gatehouse_flash=${flash}`)).res;
    expect(copied.body).not.toContain('data-error-for=');
    expect(copied.cookies.find((c) => c.name === 'gatehouse_flash')?.value).toBe('');
    // Altered (another message under the old signature), or signed-out: nothing.
    const [body, signature] = flash.split('.') as [string, string];
    const forged = Buffer.from(Buffer.from(body, 'base64url').toString().replace('must be a number', 'call 555-0100')).toString('base64url');
    expect((await openPage(t, '/account', `${cookie}; gatehouse_flash=${forged}.${signature}`)).res.body).not.toContain('data-error-for=');
    expect((await openPage(t, '/account', `gatehouse_flash=${flash}`)).res.body).not.toContain('data-error-for=');
    // Kept a minute: past it, the same cookie shows nothing.
    t.clock.advance(60_001);
    expect((await openPage(t, '/account', `${cookie}; gatehouse_flash=${flash}`)).res.body).not.toContain('data-error-for=');
  });

  it('refuses every form without the CSRF token (403 page), and sends signed-out browsers back to /account', async () => {
    const { t, session, cookie, token } = await setUp();
    const forms: [string, Record<string, string>][] = [
      ['/account/profile/notes', { 'profile.team': 'red' }],
      ['/account/sessions/ses_x/sign-out', {}],
      ['/account/sessions/sign-out-others', {}],
      ['/account/linked-accounts/credential/unlink', {}],
      ['/account/password', { current_password: PASSWORD, new_password: 'x'.repeat(12), confirm_password: 'x'.repeat(12) }],
      ['/account/sign-out', {}],
    ];
    for (const [url, fields] of forms) {
      for (const csrf of [undefined, 'A'.repeat(43)]) {
        const res = await postForm(t, url, csrf ? { ...fields, csrf_token: csrf } : fields, cookie);
        expect(res.statusCode, url).toBe(403);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.body).toContain('The form has expired or did not come from this site.');
      }
    }
    expect((await me(t, 'GET', '/api/me/sessions', session)).statusCode).toBe(200);
    // With the token but no session: back to the (signed-out) account page.
    const csrfOnly = cookie.split('; ').find((c) => c.startsWith('gatehouse_csrf='))!;
    const res = await postForm(t, '/account/sessions/sign-out-others', { csrf_token: token }, csrfOnly);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account?notice=signed_out');
  });

  it('signs out another device, then everywhere else, from the devices list', async () => {
    const { t, session, cookie, token } = await setUp();
    const phone = await secondDeviceCookie(t, 'ada@example.com');
    const tablet = await secondDeviceCookie(t, 'ada@example.com');
    const body = (await openPage(t, '/account', cookie)).res.body;
    expect(body.match(/Sign out this device/g)).toHaveLength(2);
    const [phoneSid] = (await me(t, 'GET', '/api/me/sessions', phone)).json().sessions.filter((s: { current: boolean }) => s.current).map((s: { id: string }) => s.id);
    const res = await postForm(t, `/account/sessions/${phoneSid}/sign-out`, { csrf_token: token }, cookie);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account?notice=session_ended#devices');
    expect((await me(t, 'GET', '/api/me/sessions', phone)).statusCode).toBe(401);
    expect((await me(t, 'GET', '/api/me/sessions', tablet)).statusCode).toBe(200);
    const unknown = await postForm(t, '/account/sessions/ses_nope/sign-out', { csrf_token: token }, cookie);
    expect(await refusedInSection(t, unknown, cookie, 'devices', 'sessions')).toContain('data-error-for="sessions">You have no such session.</p>');
    const others = await postForm(t, '/account/sessions/sign-out-others', { csrf_token: token }, cookie);
    expect(others.headers.location).toBe('/account?notice=others_signed_out#devices');
    expect((await me(t, 'GET', '/api/me/sessions', tablet)).statusCode).toBe(401);
    expect((await me(t, 'GET', '/api/me/sessions', session)).statusCode).toBe(200);
  });

  it('refuses to unlink the only sign-in method, in the sign-in methods section', async () => {
    const { t, cookie, token } = await setUp();
    const res = await postForm(t, '/account/linked-accounts/credential/unlink', { csrf_token: token }, cookie);
    expect(await refusedInSection(t, res, cookie, 'sign-in-methods', 'accounts')).toContain('This is the only way you can sign in; link another account before removing it.');
  });

  it('changes the password: mismatch, wrong current and too short are shown; success signs out other devices', async () => {
    const { t, cookie, token } = await setUp();
    const phone = await secondDeviceCookie(t, 'ada@example.com');
    const post = (current: string, next: string, confirm = next) =>
      postForm(t, '/account/password', { csrf_token: token, current_password: current, new_password: next, confirm_password: confirm }, cookie);
    const mismatch = await post(PASSWORD, 'a long new password', 'another one');
    expect(await refusedInSection(t, mismatch, cookie, 'password', 'password')).toContain('The new password and its confirmation differ.');
    const wrong = await post('wrong password', 'a long new password');
    expect(await refusedInSection(t, wrong, cookie, 'password', 'password')).toContain('data-error-for="password">The current password is not correct.</p>');
    const short = await post(PASSWORD, 'short');
    const shortPage = await refusedInSection(t, short, cookie, 'password', 'password');
    expect(shortPage).toContain('New password: must be 8 to 256 characters long');
    expect(shortPage).not.toContain(PASSWORD);
    const ok = await post(PASSWORD, 'a long new password');
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/account?notice=password_changed#password');
    expect((await me(t, 'GET', '/api/me/sessions', phone)).statusCode).toBe(401);
    expect((await signIn(t, { email: 'ada@example.com', password: 'a long new password' })).statusCode).toBe(200);
  });

  it('signs out from the page: the cookie is cleared and the session ends', async () => {
    const { t, session, cookie, token } = await setUp();
    const res = await postForm(t, '/account/sign-out', { csrf_token: token }, cookie);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account?notice=signed_out');
    expect(String(res.headers['set-cookie'])).toMatch(/^gatehouse_session=; Max-Age=0;/);
    expect((await me(t, 'GET', '/api/me/sessions', session)).statusCode).toBe(401);
  });
});
