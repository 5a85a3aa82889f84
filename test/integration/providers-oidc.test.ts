/**
 * The generic `oidc` provider for real: a second Gatehouse, started here and listening, is the
 * upstream OpenID Provider (its own `web` application whose redirect URI is the downstream's
 * callback, its own person). The downstream (buildApp + listen, fixed clock) is driven over HTTP
 * by a cookie-jar browser following redirects: sign-in page → start → upstream authorize →
 * callback → the application's authorization request → the application.
 *
 * The two servers listen on different loopback addresses (127.0.0.1 and 127.0.0.2) so their
 * cookies stay apart, as they would for two hosts in a browser.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret, TOTP } from 'otpauth';
import { linkedAccounts, memberships, pendingSignIns, people, providerLogins } from '../../server/db/schema.js';
import type { TestApp } from '../helpers/app.js';
import { downstream as startDownstream, upstreamPerson as startUpstreamPerson, type Downstream } from '../helpers/oidc-pair.js';
import { PASSWORD, insertInvitation, sessionCookieOf, signUp } from '../helpers/accounts.js';
import { me } from '../helpers/self-service.js';
import { startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { Browser, expectPage, inputValue, linkHref } from '../helpers/browser-jar.js';
import { exec, one, many } from '../../server/db/store.js';

const APP_CALLBACK = 'https://notes.example.com/callback';
const totpAt = (secret: string, at: Date) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at.getTime() });
let upstream: OAuthServer;
let upHost: string;
let upstreamPeople = 0;

beforeAll(async () => {
  // Every test signs up its own upstream person from this one address.
  upstream = await startOAuthServer({ GATEHOUSE_SIGN_UP_RATE_LIMIT: '100' });
  upHost = new URL(upstream.url).host;
}, 60_000);
afterAll(async () => upstream?.stop());

async function downstream(policy?: Record<string, unknown>): Promise<Downstream> {
  return startDownstream(upstream, APP_CALLBACK, policy);
}

/** A verified upstream person, signed in there in `browser`; returns the e-mail. */
async function upstreamPerson(d: Downstream, browser: Browser, email = `ada${++upstreamPeople}@example.com`): Promise<string> {
  browser.setCookie('127.0.0.1', 'gatehouse_session', await startUpstreamPerson(upstream, d, email));
  return email;
}

const authorizeUrl = (d: Downstream) =>
  `${d.issuer}/api/auth/oauth2/authorize?${new URLSearchParams({
    client_id: 'notes', redirect_uri: APP_CALLBACK, response_type: 'code', scope: 'openid email', state: 'app-state',
  })}`;

const browserFor = (d: Downstream) => new Browser([upHost, d.host]);

/** From the application's authorization request to the sign-in page's "Continue with Upstream" link. */
async function providerButton(d: Downstream, browser: Browser): Promise<string> {
  const page = await browser.follow(authorizeUrl(d));
  expect(page.res.status).toBe(200);
  return new URL(linkHref(await page.res.text(), 'Continue with Upstream'), d.issuer).href;
}

/** The start and the upstream's authorization, stopping at the callback URL (not yet requested). */
async function callbackUrl(d: Downstream, browser: Browser): Promise<string> {
  const start = await browser.request(await providerButton(d, browser));
  expect(start.status).toBe(302);
  const answer = await browser.request(start.headers.get('location')!);
  expect(answer.status).toBe(302);
  const location = answer.headers.get('location')!;
  expect(location.startsWith(`${d.issuer}/api/auth/callback/oidc?`)).toBe(true);
  return location;
}


const accountsOf = async (t: TestApp, personId: string) =>
  (await many(t.db.select({ provider: linkedAccounts.provider }).from(linkedAccounts).where(eq(linkedAccounts.personId, personId)))).map((a) => a.provider).sort();

describe('the oidc provider against a real upstream Gatehouse', () => {
  it('creates the person on first sign-in and reuses the link on the next one', async () => {
    const d = await downstream();
    const browser = browserFor(d);
    const email = await upstreamPerson(d, browser);

    const start = await browser.request(await providerButton(d, browser));
    expect(start.status).toBe(302);
    const toUpstream = new URL(start.headers.get('location')!);
    expect(`${toUpstream.origin}${toUpstream.pathname}`).toBe(`${upstream.url}/api/auth/oauth2/authorize`);
    const q = toUpstream.searchParams;
    expect([...q.keys()].sort()).toEqual(['client_id', 'code_challenge', 'code_challenge_method', 'nonce', 'redirect_uri', 'response_type', 'scope', 'state']);
    expect(q.get('client_id')).toBe(d.upstreamAppId);
    expect(q.get('redirect_uri')).toBe(`${d.issuer}/api/auth/callback/oidc`);
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('scope')).toBe('openid email profile');
    expect(browser.cookie('127.0.0.2', 'gatehouse_provider_login')).toBe(q.get('state'));

    const done = await browser.follow(toUpstream.href);
    expect(done.res.status).toBe(302);
    const landed = new URL(done.location!);
    expect(`${landed.origin}${landed.pathname}`).toBe(APP_CALLBACK);
    expect(landed.searchParams.get('state')).toBe('app-state');
    expect(landed.searchParams.get('code')).toMatch(/^.{20,}$/);
    expect(done.hops.map((h) => [new URL(h.url).pathname, h.status])).toEqual([
      ['/api/auth/oauth2/authorize', 302], // upstream: silent, the person is signed in there
      ['/api/auth/callback/oidc', 303],
      ['/api/auth/oauth2/authorize', 302], // downstream: the realm is signed in now
    ]);

    const person = (await one(d.t.db.select().from(people).where(eq(people.email, email))))!;
    // A username by the rule, like every new person (people/username.ts).
    expect(person).toMatchObject({ emailVerified: true, name: 'Ada Upstream', passwordHash: null, username: email.split('@')[0] });
    expect((await accountsOf(d.t, person.id))).toEqual(['oidc']);
    expect(await many(d.t.db.select().from(memberships).where(eq(memberships.personId, person.id)))).toHaveLength(1);
    expect(await many(d.t.db.select().from(providerLogins))).toEqual([]);
    expect(browser.cookie('127.0.0.2', 'gatehouse_provider_login')).toBeUndefined();

    // Another browser of the same person (signed in upstream only): the link signs them in.
    const second = browserFor(d);
    second.setCookie('127.0.0.1', 'gatehouse_session', browser.cookie('127.0.0.1', 'gatehouse_session')!);
    const again = await second.follow(await providerButton(d, second));
    expect(again.location!.startsWith(`${APP_CALLBACK}?code=`)).toBe(true);
    expect(await many(d.t.db.select().from(people))).toHaveLength(1);
    expect(await many(d.t.db.select().from(linkedAccounts))).toHaveLength(1);
  });

  it('cleans the name a provider vouches for (controls, bidi overrides, stacked marks) instead of refusing the sign-in', async () => {
    const d = await downstream();
    const browser = browserFor(d);
    const email = await upstreamPerson(d, browser);
    // The upstream is another Gatehouse, which refuses such names; its store is written directly.
    await exec(upstream.running.db.update(people).set({ name: `Ada\u0000 \u202Eecalevol\u202C Z${'\u0301'.repeat(9)}` }).where(eq(people.email, email)));
    const done = await browser.follow(await providerButton(d, browser));
    expect(done.location!.startsWith(`${APP_CALLBACK}?code=`)).toBe(true);
    expect((await one(d.t.db.select().from(people).where(eq(people.email, email))))!.name).toBe(`Ada ecalevol Z${'\u0301'.repeat(4)}`);
  });

  it('links to an existing person with that e-mail only after they prove it with their password', async () => {
    const d = await downstream();
    const browser = browserFor(d);
    const email = await upstreamPerson(d, browser);
    expect((await signUp(d.t, { email, name: 'Ada Here', applicationId: 'notes' })).statusCode).toBe(201);
    const existing = (await one(d.t.db.select().from(people).where(eq(people.email, email))))!;

    const callback = await browser.request(await callbackUrl(d, browser));
    expect(callback.status).toBe(303);
    expect(callback.headers.get('location')).toBe('/link-account');
    expect((await accountsOf(d.t, existing.id))).toEqual(['credential']); // nothing linked yet

    // Another provider already linked to the account (and configured here) is offered as proof too.
    await exec(d.t.db.insert(linkedAccounts).values({ id: 'acc_gh', personId: existing.id, provider: 'github', providerAccountId: '42', email, linkedAt: new Date() }));
    Object.assign(d.t.config.env, { GITHUB_CLIENT_ID: 'gh', GITHUB_CLIENT_SECRET: 'gh-secret' });
    const page = await browser.request(`${d.issuer}/link-account`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain(`An account for <strong>${email}</strong> already exists here.`);
    expect(html).toContain('<a class="button secondary" href="/api/auth/sign-in/github">Sign in with GitHub to link</a>');
    await exec(d.t.db.delete(linkedAccounts).where(eq(linkedAccounts.id, 'acc_gh')));
    const csrf = inputValue(html, 'csrf_token');

    const wrong = await browser.request(`${d.issuer}/link-account`, { form: { csrf_token: csrf, password: 'not the password' } });
    await expectPage(wrong, 401, 'The e-mail address or password is not correct.');
    expect((await accountsOf(d.t, existing.id))).toEqual(['credential']);

    const proved = await browser.follow(`${d.issuer}/link-account`, { form: { csrf_token: csrf, password: PASSWORD } });
    expect(proved.hops[0]).toMatchObject({ status: 303 });
    expect(proved.location!.startsWith(`${APP_CALLBACK}?code=`)).toBe(true);
    expect((await accountsOf(d.t, existing.id))).toEqual(['credential', 'oidc']);
    expect(await many(d.t.db.select().from(people))).toHaveLength(1);
    expect(browser.cookie('127.0.0.2', 'gatehouse_link_pending')).toBeUndefined();

    // From now on the upstream identity signs this person in directly, in a fresh browser too.
    const fresh = browserFor(d);
    fresh.setCookie('127.0.0.1', 'gatehouse_session', browser.cookie('127.0.0.1', 'gatehouse_session')!);
    const direct = await fresh.follow(await providerButton(d, fresh));
    expect(direct.location!.startsWith(`${APP_CALLBACK}?code=`)).toBe(true);
  });

  it('with a second factor, links only once the second step is done too (the pending sign-in carries it as data)', async () => {
    const d = await downstream();
    const browser = browserFor(d);
    const email = await upstreamPerson(d, browser);
    const signedUp = await signUp(d.t, { email, name: 'Ada Here', applicationId: 'notes' });
    const cookie = `gatehouse_session=${sessionCookieOf(signedUp)}`;
    const { secret } = (await me(d.t, 'POST', '/api/me/totp', cookie)).json() as { secret: string };
    expect((await me(d.t, 'POST', '/api/me/totp/confirm', cookie, { code: totpAt(secret, d.t.clock.now()) })).statusCode).toBe(200);
    const existing = (await one(d.t.db.select().from(people).where(eq(people.email, email))))!;

    expect((await browser.request(await callbackUrl(d, browser))).headers.get('location')).toBe('/link-account');
    const csrf = inputValue(await (await browser.request(`${d.issuer}/link-account`)).text(), 'csrf_token');
    const proved = await browser.request(`${d.issuer}/link-account`, { form: { csrf_token: csrf, password: PASSWORD } });
    expect({ status: proved.status, location: proved.headers.get('location') }).toEqual({ status: 303, location: '/sign-in/second-factor' });
    expect(await many(d.t.db.select({ next: pendingSignIns.next, finishLink: pendingSignIns.finishLink }).from(pendingSignIns))).toEqual([{ next: '/account', finishLink: true }]);
    expect((await accountsOf(d.t, existing.id))).toEqual(['credential']); // not before the second step

    d.t.clock.advance(30_000); // past the step that confirmed the set-up
    const step = await browser.request(`${d.issuer}/sign-in/second-factor`);
    const done = await browser.request(`${d.issuer}/sign-in/second-factor/totp`, {
      form: { csrf_token: inputValue(await step.text(), 'csrf_token'), code: totpAt(secret, d.t.clock.now()) },
    });
    expect(done.status).toBe(303);
    // On to where the provider sign-in started (the application's authorize request), linked.
    expect(done.headers.get('location')).toMatch(/^\/api\/auth\/oauth2\/authorize\?client_id=notes&redirect_uri=https%3A%2F%2Fnotes\.example\.com%2Fcallback&/);
    expect((await accountsOf(d.t, existing.id))).toEqual(['credential', 'oidc']);
    expect(browser.cookie('127.0.0.2', 'gatehouse_link_pending')).toBeUndefined();
    expect(await many(d.t.db.select().from(pendingSignIns))).toEqual([]);
  });

  it('refuses a new person on a closed or invite-only application, and admits an invited verified e-mail', async () => {
    const closed = await downstream({ signup_policy: 'closed' });
    let browser = browserFor(closed);
    await upstreamPerson(closed, browser);
    await expectPage(await browser.request(await callbackUrl(closed, browser)), 403, 'Notes does not accept new members.');
    expect(await many(closed.t.db.select().from(people))).toEqual([]);

    const inviteOnly = await downstream({ signup_policy: 'invite_only' });
    browser = browserFor(inviteOnly);
    await upstreamPerson(inviteOnly, browser);
    await expectPage(await browser.request(await callbackUrl(inviteOnly, browser)), 403, 'Notes is open to invited people only.');
    expect(await many(inviteOnly.t.db.select().from(people))).toEqual([]);
    expect(await many(inviteOnly.t.db.select().from(linkedAccounts))).toEqual([]);

    browser = browserFor(inviteOnly);
    const invitedEmail = await upstreamPerson(inviteOnly, browser);
    (await insertInvitation(inviteOnly.t, 'notes', invitedEmail, 'admin'));
    const joined = await browser.follow(await callbackUrl(inviteOnly, browser));
    expect(joined.location!.startsWith(`${APP_CALLBACK}?code=`)).toBe(true);
    const person = (await one(inviteOnly.t.db.select().from(people).where(eq(people.email, invitedEmail))))!;
    expect(await one(inviteOnly.t.db.select({ role: memberships.role }).from(memberships).where(eq(memberships.personId, person.id)))).toEqual({ role: 'admin' });
  });

  it('binds the callback to the browser that started it, uses it once, and lets it expire after 10 minutes', async () => {
    const d = await downstream();
    const browser = browserFor(d);
    await upstreamPerson(d, browser);
    const url = await callbackUrl(d, browser);

    const thief = browserFor(d);
    await expectPage(await thief.request(url), 400, 'This sign-in was started in another browser or tab.');

    const ok = await browser.request(url);
    expect(ok.status).toBe(303);
    await expectPage(await browser.request(url), 400, 'This sign-in has expired or was already used.');

    browser.forget('127.0.0.2'); // signed in there now; start over as a stranger
    const late = await callbackUrl(d, browser);
    d.t.clock.advance(10 * 60_000 + 1);
    await expectPage(await browser.request(late), 400, 'This sign-in has expired or was already used.');
    await expectPage(await browser.request(`${d.issuer}/api/auth/callback/oidc`), 400, 'This sign-in has expired or was already used.');
  });

  it('shows the upstream refusal (access_denied) as a page, creating nothing', async () => {
    const d = await downstream();
    const browser = browserFor(d);
    const email = await upstreamPerson(d, browser);
    // Suspended upstream: its authorize answers the downstream's callback with error=access_denied.
    const members = await (await upstream.admin('GET', `/api/admin/applications/${d.upstreamAppId}/users?q=${encodeURIComponent(email)}`)).json() as { users: { id: string }[] };
    const suspend = await upstream.admin('PATCH', `/api/admin/applications/${d.upstreamAppId}/users/${members.users[0]!.id}`, { status: 'suspended' });
    expect(suspend.status).toBe(200);

    // The upstream shows its own access-refused page (issue 25); its "Back to" link carries
    // error=access_denied to the downstream's callback.
    const start = await browser.request(await providerButton(d, browser));
    expect(start.status).toBe(302);
    const refused = await browser.request(start.headers.get('location')!);
    expect(refused.status).toBe(403);
    const back = /<a class="button secondary" href="([^"]+)" data-back>/.exec(await refused.text())?.[1]?.replaceAll('&amp;', '&');
    expect(back?.startsWith(`${d.issuer}/api/auth/callback/oidc?`)).toBe(true);
    const url = new URL(back!);
    expect(url.searchParams.get('error')).toBe('access_denied');
    await expectPage(await browser.request(url.href), 403, 'Upstream did not let you sign in (access was denied or cancelled).');
    expect(await many(d.t.db.select().from(people))).toEqual([]);
  });

  it('turns a failed code exchange and an unreachable issuer into 502 pages, never a 500', async () => {
    const d = await downstream();
    const browser = browserFor(d);
    await upstreamPerson(d, browser);
    const url = await callbackUrl(d, browser);
    d.t.config.env.OIDC_CLIENT_SECRET = 'not-the-secret'; // the upstream refuses the exchange (invalid_client)
    await expectPage(await browser.request(url), 502, 'Upstream did not confirm the sign-in. Please start again.');
    expect(await many(d.t.db.select().from(people))).toEqual([]);

    d.t.config.env.OIDC_ISSUER = 'http://127.0.0.1:9'; // nothing listens there
    const start = await browser.request(`${d.issuer}/api/auth/sign-in/oidc?client_id=notes`);
    await expectPage(start, 502, 'Upstream cannot be reached right now. Please try again later.');
    expect(await many(d.t.db.select().from(providerLogins))).toEqual([]);
  });

  it('never redirects to a return_to Node cannot write as a header: refused at the start, and checked again as it leaves the store', async () => {
    const d = await downstream();
    const browser = browserFor(d);
    await upstreamPerson(d, browser);
    const resume = '/api/auth/oauth2/authorize?client_id=notes';
    const startWith = async (returnTo: string) => {
      const start = await browser.request(`${d.issuer}/api/auth/sign-in/oidc?client_id=notes&return_to=${encodeURIComponent(returnTo)}`);
      expect(start.status).toBe(302);
      const answer = await browser.request(start.headers.get('location')!);
      expect(answer.status).toBe(302);
      return answer.headers.get('location')!;
    };

    const refused = await startWith(`${resume}&x=Ā`);
    expect(await many(d.t.db.select({ returnTo: providerLogins.returnTo }).from(providerLogins))).toEqual([{ returnTo: '/account' }]);
    const first = await browser.request(refused);
    expect({ status: first.status, location: first.headers.get('location') }).toEqual({ status: 303, location: '/account' });

    // A row written by an earlier version, whose check let such a value through.
    const stored = await startWith(resume);
    await exec(d.t.db.update(providerLogins).set({ returnTo: `${resume}&x=Ā` }));
    const second = await browser.request(stored);
    expect({ status: second.status, location: second.headers.get('location') }).toEqual({ status: 303, location: '/account' });
  });

  it('links the provider from the account page, and refuses an identity linked to someone else', async () => {
    const d = await downstream();
    const browser = browserFor(d);
    await upstreamPerson(d, browser);
    // Signed in downstream as Grace (another address than the upstream's), through the form.
    expect((await signUp(d.t, { email: 'grace@example.com', applicationId: 'notes' })).statusCode).toBe(201);
    const signInPage = await browser.request(`${d.issuer}/sign-in`);
    const signedIn = await browser.request(`${d.issuer}/sign-in`, {
      form: { csrf_token: inputValue(await signInPage.text(), 'csrf_token'), email: 'grace@example.com', password: PASSWORD },
    });
    expect(signedIn.status).toBe(303);

    const account = await (await browser.request(`${d.issuer}/account`)).text();
    expect(account).toContain('action="/account/link/oidc"');
    const csrf = inputValue(account, 'csrf_token');
    const started = await browser.request(`${d.issuer}/account/link/oidc`, { form: { csrf_token: csrf } });
    expect(started.status).toBe(200);
    const html = await started.text();
    const next = /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec(html)![1]!.replaceAll('&amp;', '&');
    expect(next.startsWith(`${upstream.url}/api/auth/oauth2/authorize?`)).toBe(true);
    const linked = await browser.follow(next);
    expect(linked.hops.map((h) => [new URL(h.url).pathname, h.status, h.location?.startsWith('/') ? h.location : ''])).toEqual([
      ['/api/auth/oauth2/authorize', 302, ''],
      ['/api/auth/callback/oidc', 303, '/account?notice=account_linked'],
      ['/account', 200, ''],
    ]);
    expect(await linked.res.text()).toContain('The sign-in method was linked: you can use it to sign in from now on.');
    const grace = (await one(d.t.db.select().from(people).where(eq(people.email, 'grace@example.com'))))!;
    expect((await accountsOf(d.t, grace.id))).toEqual(['credential', 'oidc']);

    // Someone else signed in on this browser tries to link the same upstream identity: 409.
    expect((await signUp(d.t, { email: 'alan@example.com', applicationId: 'notes' })).statusCode).toBe(201);
    const form = await browser.request(`${d.issuer}/sign-in?switch=1`);
    const alanIn = await browser.request(`${d.issuer}/sign-in`, {
      form: { csrf_token: inputValue(await form.text(), 'csrf_token'), email: 'alan@example.com', password: PASSWORD },
    });
    expect(alanIn.status).toBe(303);
    const again = await browser.request(`${d.issuer}/account/link/oidc`, { form: { csrf_token: csrf } });
    const to = /content="0;url=([^"]+)"/.exec(await again.text())![1]!.replaceAll('&amp;', '&');
    const refused = await browser.follow(to);
    await expectPage(refused.res, 409, 'This Upstream account is already linked to another Gatehouse account.');
    const alan = (await one(d.t.db.select().from(people).where(eq(people.email, 'alan@example.com'))))!;
    expect(await many(d.t.db.select().from(linkedAccounts).where(and(eq(linkedAccounts.personId, alan.id), eq(linkedAccounts.provider, 'oidc'))))).toEqual([]);
  });
});
