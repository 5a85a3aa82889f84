/**
 * Password reset and e-mail verification through a real SMTP server (smtp-server): the links
 * arrive by e-mail, work once, expire after an hour (fixed clock), a reset ends every session and
 * refresh token, and asking about an unknown address gets the same answer and sends nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { auditLog, linkedAccounts, people } from '../../server/db/schema.js';
import { makeApp, type TestApp } from '../helpers/app.js';
import { expectPage } from '../helpers/browser-jar.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { cookieValue, insertInvitation, postJson, sessionCookieOf, signIn, signUp } from '../helpers/accounts.js';
import { expectProblem } from '../helpers/problem.js';
import { decodeQuotedPrintable, startSmtp, type ReceivedMail } from '../helpers/smtp.js';
import { expectOAuthError, setUpClients, spaTokens, token } from '../helpers/oauth-inject.js';
import { exec, one, many } from '../../server/db/store.js';

const NEW_PASSWORD = 'a brand new password';
let smtp: Awaited<ReturnType<typeof startSmtp>> | undefined;
afterEach(async () => {
  await smtp?.close();
  smtp = undefined;
});

async function withMail(): Promise<TestApp> {
  smtp = await startSmtp();
  return makeApp({ config: { smtpUrl: smtp.url } });
}

const subjectOf = (mail: ReceivedMail) => /^Subject: (.*)$/m.exec(mail.raw)?.[1];

/** Waits for the `n`-th message with `subject` and returns the link to `path` in it. */
async function mailedLink(subject: string, path: string, n = 1): Promise<{ url: URL; mail: ReceivedMail }> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const found = smtp!.received.filter((m) => subjectOf(m) === subject);
    if (found.length >= n) {
      const mail = found[n - 1]!;
      const href = new RegExp(`http://127\\.0\\.0\\.1:8787${path}\\?token=[A-Za-z0-9_%-]+`).exec(decodeQuotedPrintable(mail.raw))![0];
      return { url: new URL(href), mail };
    }
    if (Date.now() > deadline) throw new Error(`no "${subject}" e-mail #${n}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const RESET = 'Reset your Gatehouse password';
const VERIFY = 'Confirm your e-mail address';
const count = (subject: string) => smtp!.received.filter((m) => subjectOf(m) === subject).length;
/** Long enough for a message that was going to be sent to have arrived. */
const settle = () => new Promise((r) => setTimeout(r, 300));

const askReset = (t: TestApp, email: string) => postJson(t, '/api/auth/password-reset', { email });
const confirm = (t: TestApp, tokenValue: string, password = NEW_PASSWORD) => postJson(t, '/api/auth/password-reset/confirm', { token: tokenValue, password });


describe('password reset by e-mail', () => {
  it('resets once through the e-mailed link and ends every session and refresh token', async () => {
    const t = await withMail();
    const { cookie } = await setUpClients(t); // ada@example.com, signed in to the spa app
    const otherDevice = `gatehouse_session=${sessionCookieOf(await signIn(t, { email: 'ada@example.com' }))}`;
    const { refresh_token: refresh } = await spaTokens(t, cookie);

    const asked = await askReset(t, 'Ada@Example.com');
    expect(asked.statusCode).toBe(202);
    expect(asked.body).toBe('');
    const { url, mail } = await mailedLink(RESET, '/reset-password');
    expect(mail.to).toEqual(['ada@example.com']);
    const raw = url.searchParams.get('token')!;

    const form = await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
    await expectPage(form, 200, 'For <strong>ada@example.com</strong>.');
    expect(await confirm(t, raw).then((r) => r.statusCode)).toBe(204);
    expect(expectProblem(await confirm(t, raw), 410, 'token_used').title).toBe('Gone');

    for (const c of [cookie, otherDevice]) {
      expectProblem(await t.app.inject({ method: 'GET', url: '/api/me/sessions', headers: { cookie: c } }), 401, 'unauthorized');
    }
    expectOAuthError(await token(t, { grant_type: 'refresh_token', refresh_token: refresh!, client_id: 'notes' }), 400, 'invalid_grant');
    expectProblem(await signIn(t, { email: 'ada@example.com' }), 401, 'invalid_credentials');
    expect((await signIn(t, { email: 'ada@example.com', password: NEW_PASSWORD })).statusCode).toBe(200);
    expect(await one(t.db.select({ v: people.emailVerified }).from(people).where(eq(people.email, 'ada@example.com')))).toEqual({ v: true });
  });

  it('gives a person who only had an external provider a password sign-in', async () => {
    const t = await withMail();
    const now = t.clock.now();
    await exec(t.db.insert(people).values({ id: 'usr_gh', email: 'octo@example.com', username: 'octo', emailVerified: true, createdAt: now, updatedAt: now }));
    await exec(t.db.insert(linkedAccounts).values({ id: 'acc_gh', personId: 'usr_gh', provider: 'github', providerAccountId: '1', email: 'octo@example.com', linkedAt: now }));
    await askReset(t, 'octo@example.com');
    expect((await confirm(t, (await mailedLink(RESET, '/reset-password')).url.searchParams.get('token')!)).statusCode).toBe(204);
    const methods = await many(t.db.select({ p: linkedAccounts.provider }).from(linkedAccounts).where(eq(linkedAccounts.personId, 'usr_gh')));
    expect(methods.map((m) => m.p).sort()).toEqual(['credential', 'github']);
    expect((await signIn(t, { email: 'octo@example.com', password: NEW_PASSWORD })).statusCode).toBe(200);
  });

  it('answers an unknown address exactly like a known one and sends at most one e-mail a minute', async () => {
    const t = await withMail();
    await setUpClients(t);
    const unknown = await askReset(t, 'nobody@example.com');
    const known = await askReset(t, 'ada@example.com');
    const again = await askReset(t, 'ada@example.com');
    for (const res of [unknown, known, again]) {
      expect({ status: res.statusCode, body: res.body, type: res.headers['content-type'] }).toEqual({ status: 202, body: '', type: undefined });
    }
    await mailedLink(RESET, '/reset-password');
    await settle();
    expect(count(RESET)).toBe(1);
    expect(smtp!.received.some((m) => m.to.includes('nobody@example.com'))).toBe(false);

    t.clock.advance(61_000);
    const first = (await mailedLink(RESET, '/reset-password')).url.searchParams.get('token')!;
    expect((await askReset(t, 'ada@example.com')).statusCode).toBe(202);
    const second = (await mailedLink(RESET, '/reset-password', 2)).url.searchParams.get('token')!;
    expectProblem(await confirm(t, first), 400, 'token_invalid'); // a newer link retires the older one
    expect((await confirm(t, second)).statusCode).toBe(204);
  });

  it('lets a link expire after one hour', async () => {
    const t = await withMail();
    await setUpClients(t);
    await askReset(t, 'ada@example.com');
    const { url } = await mailedLink(RESET, '/reset-password');
    t.clock.advance(60 * 60_000);
    await expectPage(await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` }), 410, 'This link has expired (links work for one hour).');
    expectProblem(await confirm(t, url.searchParams.get('token')!), 410, 'token_expired');
    expectProblem(await confirm(t, 'made-up'), 400, 'token_invalid');
    expect((await signIn(t, { email: 'ada@example.com' })).statusCode).toBe(200);
  });

  it('works through the hosted pages with the form token, and the sign-in page offers it', async () => {
    const t = await withMail();
    await setUpClients(t);
    const signInPage = await t.app.inject({ method: 'GET', url: '/sign-in' });
    expect(signInPage.body).toContain('<a href="/forgot-password">Forgot password?</a>');
    const csrf = cookieValue(signInPage, 'gatehouse_csrf')!;
    const form = (url: string, fields: Record<string, string>) =>
      t.app.inject({ method: 'POST', url, cookies: { gatehouse_csrf: csrf }, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString() });

    await expectPage(await t.app.inject({ method: 'GET', url: '/forgot-password' }), 200, 'Send the link');
    await expectPage(await form('/forgot-password', { csrf_token: 'forged', email: 'ada@example.com' }), 403, 'The form has expired');
    const forKnown = await form('/forgot-password', { csrf_token: csrf, email: 'ada@example.com' });
    const forUnknown = await form('/forgot-password', { csrf_token: csrf, email: 'eve@example.com' });
    await expectPage(forKnown, 200, 'If ada@example.com has an account here, we sent it a link');
    expect(forUnknown.body.replace('eve@example.com', 'ada@example.com')).toBe(forKnown.body);

    const raw = (await mailedLink(RESET, '/reset-password')).url.searchParams.get('token')!;
    await expectPage(await form('/reset-password', { csrf_token: csrf, token: raw, password: NEW_PASSWORD, confirm_password: 'different one' }), 400, 'The two passwords are not the same.');
    await expectPage(await form('/reset-password', { csrf_token: csrf, token: raw, password: 'short', confirm_password: 'short' }), 400, 'The password must be 8 to 256 characters long.');
    const done = await form('/reset-password', { csrf_token: csrf, token: raw, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD });
    await expectPage(done, 200, 'every device that was signed in to your account has been signed out');
    expect(done.cookies.find((c) => c.name === 'gatehouse_session')).toMatchObject({ value: '' });
    await expectPage(await form('/reset-password', { csrf_token: csrf, token: raw, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }), 410, 'This link was already used.');
  });

  it('carries the application and its authorization request through the reset, back to its sign-in (issue 25)', async () => {
    const t = await withMail();
    await setUpClients(t);
    const request = '/api/auth/oauth2/authorize?client_id=notes&response_type=code&state=s1';
    const flow = new URLSearchParams({ client_id: 'notes', return_to: request }).toString();
    const signInPage = await t.app.inject({ method: 'GET', url: `/sign-in?${flow}` });
    expect(signInPage.body).toContain(`<a href="/forgot-password?${flow.replaceAll('&', '&amp;')}">Forgot password?</a>`);
    const forgot = await openPage(t, `/forgot-password?${flow}`);
    expect(forgot.res.body).toContain('<title>Reset your password · Notes · Gatehouse</title>');
    const sent = await postForm(t, '/forgot-password', { csrf_token: csrfFrom(forgot.res), email: 'ada@example.com', client_id: 'notes', return_to: request }, forgot.cookie);
    expect(sent.statusCode).toBe(200);
    const { mail } = await mailedLink(RESET, '/reset-password');
    // The text part's link, in full.
    const url = new URL(/http:\/\/127\.0\.0\.1:8787\/reset-password\?[^\s"<]+/.exec(decodeQuotedPrintable(mail.raw))![0]);
    expect(url.searchParams.get('client_id')).toBe('notes');
    expect(url.searchParams.get('return_to')).toBe(request);
    const reset = await openPage(t, `${url.pathname}${url.search}`);
    const done = await postForm(t, '/reset-password', {
      csrf_token: csrfFrom(reset.res), token: url.searchParams.get('token')!, password: NEW_PASSWORD, confirm_password: NEW_PASSWORD, client_id: 'notes', return_to: request,
    }, reset.cookie);
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain(`<a class="button" href="/sign-in?${flow.replaceAll('&', '&amp;')}">Sign in to Notes</a>`);
  });

  it('sends the verification e-mail from the account page, with post/redirect/get to its section (issue 25)', async () => {
    const t = await withMail();
    const { cookie } = await setUpClients(t);
    const account = await openPage(t, '/account', cookie);
    expect(account.res.body).toContain('<section class="panel" id="verify" aria-labelledby="verify-h">');
    expect(account.res.body).toContain('Send verification e-mail</button>');
    // Sign-up sent the first one; a minute later the page may send another.
    await mailedLink(VERIFY, '/verify-email');
    t.clock.advance(61_000);
    const sent = await postForm(t, '/account/verify-email', { csrf_token: csrfFrom(account.res) }, account.cookie);
    expect(sent.statusCode).toBe(303);
    expect(sent.headers.location).toBe('/account?notice=verification_sent#verify');
    await mailedLink(VERIFY, '/verify-email', 2);
    const again = await postForm(t, '/account/verify-email', { csrf_token: csrfFrom(account.res) }, account.cookie);
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe('/account#verify');
    // The refusal travels in the flash cookie (pages/account-flash.ts).
    const flash = again.cookies.find((c) => c.name === 'gatehouse_flash')!.value;
    expect((await openPage(t, '/account', `${cookie}; gatehouse_flash=${flash}`)).res.body).toContain('data-error-for="verify">A confirmation link was sent less than a minute ago: check your e-mail.</p>');
    await settle();
    expect(count(VERIFY)).toBe(2);
  });

  it('is not offered without SMTP, and the JSON endpoints follow the CSRF rule and the rate limit', async () => {
    const plain = await makeApp();
    expect((await plain.app.inject({ method: 'GET', url: '/sign-in' })).body).not.toContain('Forgot password?');
    await expectPage(await plain.app.inject({ method: 'GET', url: '/forgot-password' }), 404, 'This server cannot send e-mail (SMTP_URL is not set).');
    expectProblem(await askReset(plain, 'ada@example.com'), 404, 'mail_not_configured');

    const t = await withMail();
    expectProblem(await postJson(t, '/api/auth/password-reset', { email: 'a@example.com' }, { origin: 'https://evil.example' }), 403, 'csrf_failed');
    expectProblem(
      await t.app.inject({ method: 'POST', url: '/api/auth/password-reset', headers: { 'content-type': 'text/plain' }, payload: '{"email":"a@example.com"}' }),
      403,
      'csrf_failed',
    );
    for (let i = 0; i < 5; i++) expect((await askReset(t, `x${i}@example.com`)).statusCode).toBe(202);
    const limited = await askReset(t, 'x9@example.com');
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('e-mail verification', () => {
  it('sends a link on sign-up whose page verifies the address once, on the button (a GET spends nothing)', async () => {
    const t = await withMail();
    await setUpClients(t);
    const { url, mail } = await mailedLink(VERIFY, '/verify-email');
    expect(mail.to).toEqual(['ada@example.com']);
    const verified = async () => await one(t.db.select({ v: people.emailVerified }).from(people));
    expect((await verified())).toEqual({ v: false });
    const path = `${url.pathname}${url.search}`;
    const raw = url.searchParams.get('token')!;

    // A mail scanner fetching the link (twice, even) sees the confirm form and burns nothing.
    await expectPage(await t.app.inject({ method: 'GET', url: path }), 200, 'Confirm that <strong>ada@example.com</strong> is your address.');
    const page = await openPage(t, path);
    expect(page.res.statusCode).toBe(200);
    expect(page.res.body).toContain('<form method="post" action="/verify-email"');
    expect(page.res.body).toContain(`<input type="hidden" name="token" value="${raw}">`);
    expect((await verified())).toEqual({ v: false });

    // The form post needs the double-submit token.
    const forged = await postForm(t, '/verify-email', { csrf_token: 'forged', token: raw }, page.cookie);
    expect([forged.statusCode, forged.headers['content-type']]).toEqual([403, 'text/html; charset=utf-8']);
    expect((await verified())).toEqual({ v: false });

    const confirmed = await postForm(t, '/verify-email', { csrf_token: csrfFrom(page.res), token: raw }, page.cookie);
    await expectPage(confirmed, 200, 'Thank you: ada@example.com is confirmed.');
    expect((await verified())).toEqual({ v: true });
    expect(await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'person.email_verified')))).toHaveLength(1);

    await expectPage(await postForm(t, '/verify-email', { csrf_token: csrfFrom(page.res), token: raw }, page.cookie), 410, 'This link was already used.');
    await expectPage(await t.app.inject({ method: 'GET', url: path }), 410, 'This link was already used.');
    await expectPage(await t.app.inject({ method: 'GET', url: '/verify-email' }), 400, 'This link is not valid.');
    await expectPage(await postForm(t, '/verify-email', { csrf_token: csrfFrom(page.res) }, page.cookie), 400, 'This link is not valid.');
  });

  it('resends on request at most once a minute, and verifies over JSON', async () => {
    const t = await withMail();
    const { cookie } = await setUpClients(t);
    const resend = (c?: string) => postJson(t, '/api/auth/verify-email/resend', undefined, c ? { cookie: c } : {});
    await mailedLink(VERIFY, '/verify-email');
    expectProblem(await resend(), 401, 'unauthorized');
    expectProblem(await resend(cookie), 429, 'rate_limited');
    t.clock.advance(61_000);
    expect((await resend(cookie)).statusCode).toBe(202);
    const second = (await mailedLink(VERIFY, '/verify-email', 2)).url.searchParams.get('token')!;
    const verified = await postJson(t, '/api/auth/verify-email', { token: second });
    expect(verified.statusCode).toBe(200);
    expect(verified.json().user).toMatchObject({ email: 'ada@example.com', emailVerified: true });
    expectProblem(await resend(cookie), 409, 'email_already_verified');

    // An e-mailed invitation proves the address: signing up with one sends no verification e-mail.
    const before = count(VERIFY);
    const invitation = (await insertInvitation(t, 'notes', 'bob@example.com', 'member', { emailSent: true }));
    expect((await signUp(t, { email: 'bob@example.com', invitationToken: invitation })).statusCode).toBe(201);
    await settle();
    expect(count(VERIFY)).toBe(before);
    // A link only shown to the administrator proves nothing about the mailbox: the address is asked to confirm.
    const shown = (await insertInvitation(t, 'notes', 'carol@example.com'));
    expect((await signUp(t, { email: 'carol@example.com', invitationToken: shown })).statusCode).toBe(201);
    await settle();
    expect(count(VERIFY)).toBe(before + 1);
  });
});
