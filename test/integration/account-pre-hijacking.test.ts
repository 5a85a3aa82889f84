/**
 * Account pre-hijacking (audit item 1), for real: a second Gatehouse is the upstream OpenID
 * Provider (test/helpers/oidc-pair.ts), a real SMTP server receives the links. Someone signs up
 * with another person's address (an open application asks for no proof), links their own
 * upstream identity from the account page, and waits. When the address's owner takes the
 * account through "Forgot password", the links made before the address was proven must go.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, linkedAccounts, people, sessions } from '../../server/db/schema.js';
import { sha256 } from '../../server/util/crypto.js';
import type { TestApp } from '../helpers/app.js';
import { PASSWORD, postJson, sessionCookieOf, signIn, signUp } from '../helpers/accounts.js';
import { Browser, expectPage, inputValue, linkHref } from '../helpers/browser-jar.js';
import { downstream as startDownstream, upstreamPerson, type Downstream } from '../helpers/oidc-pair.js';
import { startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { expectProblem } from '../helpers/problem.js';
import { decodeQuotedPrintable, startSmtp } from '../helpers/smtp.js';
import { one, many } from '../../server/db/store.js';

const APP_CALLBACK = 'https://notes.example.com/callback';
const NEW_PASSWORD = 'dana owns this mailbox';
let upstream: OAuthServer;
let upHost: string;
let smtp: Awaited<ReturnType<typeof startSmtp>>;

beforeAll(async () => {
  upstream = await startOAuthServer();
  upHost = new URL(upstream.url).host;
  smtp = await startSmtp();
}, 60_000);
afterAll(async () => {
  await upstream?.stop();
  await smtp?.close();
});

const downstream = () => startDownstream(upstream, APP_CALLBACK, undefined, { smtpUrl: smtp.url });
const browserFor = (d: Downstream) => new Browser([upHost, d.host]);

/** A browser signed in upstream as `email` (a verified upstream person) and nowhere else. */
async function upstreamBrowser(d: Downstream, email: string, session?: string): Promise<{ browser: Browser; session: string }> {
  const browser = browserFor(d);
  const cookie = session ?? (await upstreamPerson(upstream, d, email));
  browser.setCookie('127.0.0.1', 'gatehouse_session', cookie);
  return { browser, session: cookie };
}

/** Waits for the e-mail to `to` carrying a link to `{issuer}{path}?token=` and returns that link. */
async function mailedLink(d: Downstream, to: string, path: string): Promise<string> {
  const pattern = new RegExp(`${d.issuer.replaceAll('.', '\\.')}${path}\\?token=[A-Za-z0-9_%-]+`);
  const deadline = Date.now() + 5000;
  for (;;) {
    for (const mail of smtp.received) {
      const found = mail.to.includes(to) ? pattern.exec(decodeQuotedPrintable(mail.raw)) : null;
      if (found) return found[0];
    }
    if (Date.now() > deadline) throw new Error(`no e-mail to ${to} with a ${path} link`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const accountsOf = async (t: TestApp, personId: string) =>
  (await many(t.db.select({ provider: linkedAccounts.provider }).from(linkedAccounts).where(eq(linkedAccounts.personId, personId)))).map((a) => a.provider).sort();

/** The person the browser's downstream session belongs to. */
async function signedInAs(d: Downstream, browser: Browser): Promise<string | undefined> {
  const token = browser.cookie('127.0.0.2', 'gatehouse_session');
  if (!token) return undefined;
  return (await one(d.t.db.select({ personId: sessions.personId }).from(sessions).where(eq(sessions.tokenHash, sha256(token)))))?.personId;
}

/** "Link Upstream" on the account page, through the upstream (signed in there) and back. */
async function linkUpstream(d: Downstream, browser: Browser) {
  const account = await (await browser.request(`${d.issuer}/account`)).text();
  const started = await browser.request(`${d.issuer}/account/link/oidc`, { form: { csrf_token: inputValue(account, 'csrf_token') } });
  expect(started.status).toBe(200);
  const next = /content="0;url=([^"]+)"/.exec(await started.text())![1]!.replaceAll('&amp;', '&');
  const linked = await browser.follow(next);
  expect(linked.hops.map((h) => [new URL(h.url).pathname, h.status, h.location?.startsWith('/') ? h.location : ''])).toEqual([
    ['/api/auth/oauth2/authorize', 302, ''],
    ['/api/auth/callback/oidc', 303, '/account?notice=account_linked'],
    ['/account', 200, ''],
  ]);
}

/** The application's sign-in page → "Continue with Upstream" → the application's callback with a code. */
async function providerSignIn(d: Downstream, browser: Browser): Promise<void> {
  const authorize = `${d.issuer}/api/auth/oauth2/authorize?${new URLSearchParams({
    client_id: 'notes', redirect_uri: APP_CALLBACK, response_type: 'code', scope: 'openid email', state: 's',
  })}`;
  const page = await browser.follow(authorize);
  expect(page.res.status).toBe(200);
  const done = await browser.follow(new URL(linkHref(await page.res.text(), 'Continue with Upstream'), d.issuer).href);
  expect(done.location!.startsWith(`${APP_CALLBACK}?code=`)).toBe(true);
}

/** The owner of the mailbox: "Forgot password", the e-mailed link, the new-password form. */
async function resetThroughMail(d: Downstream, email: string): Promise<void> {
  expect((await postJson(d.t, '/api/auth/password-reset', { email })).statusCode).toBe(202);
  const owner = browserFor(d);
  const link = await mailedLink(d, email, '/reset-password');
  const form = await owner.request(link);
  const html = await form.text();
  expect(form.status).toBe(200);
  const done = await owner.request(`${d.issuer}/reset-password`, {
    form: { csrf_token: inputValue(html, 'csrf_token'), token: inputValue(html, 'token'), password: NEW_PASSWORD, confirm_password: NEW_PASSWORD },
  });
  await expectPage(done, 200, 'Your new password is set');
}

const unlinkAudits = async (t: TestApp, personId: string) =>
  await many(t.db.select({ actor: auditLog.actor, details: auditLog.details }).from(auditLog)
    .where(and(eq(auditLog.action, 'person.account_unlinked'), eq(auditLog.target, personId))));

describe('account pre-hijacking through an unverified address', () => {
  it('a password reset that first proves the mailbox removes every external account linked before it', async () => {
    const d = await downstream();
    const { browser: attacker, session: eveUpstream } = await upstreamBrowser(d, 'eve@evil.example');

    // The attacker signs up as dana@example.com (no proof needed) and links their own identity.
    const signedUp = await signUp(d.t, { email: 'dana@example.com', name: 'Dana', applicationId: 'notes' });
    expect(signedUp.statusCode).toBe(201);
    attacker.setCookie('127.0.0.2', 'gatehouse_session', sessionCookieOf(signedUp));
    const dana = (await one(d.t.db.select().from(people).where(eq(people.email, 'dana@example.com'))))!;
    expect(dana.emailVerified).toBe(false);
    await linkUpstream(d, attacker);
    expect((await accountsOf(d.t, dana.id))).toEqual(['credential', 'oidc']);

    // The back door works: signed in upstream as Eve, a fresh browser lands in Dana's account.
    const before = (await upstreamBrowser(d, 'eve@evil.example', eveUpstream)).browser;
    await providerSignIn(d, before);
    expect((await signedInAs(d, before))).toBe(dana.id);

    await resetThroughMail(d, 'dana@example.com');

    expect((await accountsOf(d.t, dana.id))).toEqual(['credential']);
    expect(await one(d.t.db.select({ v: people.emailVerified }).from(people).where(eq(people.id, dana.id)))).toEqual({ v: true });
    expect((await unlinkAudits(d.t, dana.id))).toEqual([
      { actor: `person:${dana.id}`, details: { provider: 'oidc', reason: 'password_reset_unverified_email' } },
    ]);
    // Every session the attacker held is over…
    for (const cookie of [attacker.cookie('127.0.0.2', 'gatehouse_session'), before.cookie('127.0.0.2', 'gatehouse_session')]) {
      expectProblem(await d.t.app.inject({ method: 'GET', url: '/api/me/linked-accounts', headers: { cookie: `gatehouse_session=${cookie}` } }), 401, 'unauthorized');
    }
    // …and Eve's provider sign-in no longer reaches Dana's account: it makes Eve's own.
    const after = (await upstreamBrowser(d, 'eve@evil.example', eveUpstream)).browser;
    await providerSignIn(d, after);
    const eve = (await one(d.t.db.select().from(people).where(eq(people.email, 'eve@evil.example'))))!;
    expect((await signedInAs(d, after))).toBe(eve.id);
    expect((await accountsOf(d.t, eve.id))).toEqual(['oidc']);
    expect((await accountsOf(d.t, dana.id))).toEqual(['credential']);
    expectProblem(await signIn(d.t, { email: 'dana@example.com' }), 401, 'invalid_credentials');
    expect((await signIn(d.t, { email: 'dana@example.com', password: NEW_PASSWORD })).statusCode).toBe(200);
  });

  it('keeps the links of an address already proven (through its verification link), before and after a reset', async () => {
    const d = await downstream();
    const { browser, session: upstreamSession } = await upstreamBrowser(d, 'dana.up@example.com');
    const signedUp = await signUp(d.t, { email: 'dana@example.com', name: 'Dana', applicationId: 'notes' });
    expect(signedUp.statusCode).toBe(201);
    browser.setCookie('127.0.0.2', 'gatehouse_session', sessionCookieOf(signedUp));
    const dana = (await one(d.t.db.select().from(people).where(eq(people.email, 'dana@example.com'))))!;
    await linkUpstream(d, browser);

    // The verification link signs nobody in and changes nothing else: the links stay.
    const verify = await browser.request(await mailedLink(d, 'dana@example.com', '/verify-email'));
    const html = await verify.text();
    const confirmed = await browser.request(`${d.issuer}/verify-email`, { form: { csrf_token: inputValue(html, 'csrf_token'), token: inputValue(html, 'token') } });
    await expectPage(confirmed, 200, 'Thank you: dana@example.com is confirmed.');
    expect((await accountsOf(d.t, dana.id))).toEqual(['credential', 'oidc']);

    await resetThroughMail(d, 'dana@example.com');
    expect((await accountsOf(d.t, dana.id))).toEqual(['credential', 'oidc']);
    expect((await unlinkAudits(d.t, dana.id))).toEqual([]);
    const fresh = (await upstreamBrowser(d, 'dana.up@example.com', upstreamSession)).browser;
    await providerSignIn(d, fresh);
    expect((await signedInAs(d, fresh))).toBe(dana.id);
  });
});
