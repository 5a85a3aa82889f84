/**
 * External sign-in in headless Chromium, against a real upstream Gatehouse as the OpenID
 * Provider: the sign-in page's "Continue with Upstream" → upstream → callback → "prove it's you"
 * page → the application; and "Link Upstream" on the account page, whose answer moves on to the
 * provider by itself. No Content-Security-Policy violation anywhere (Chromium applies
 * `form-action` to every redirect after a form post, which these flows rely on getting right).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { linkedAccounts, people } from '../../server/db/schema.js';
import { PASSWORD, signUp } from '../helpers/accounts.js';
import { startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { downstream, upstreamPerson } from '../helpers/oidc-pair.js';
import { launchChromium } from '../helpers/panel-browser.js';
import { one, many } from '../../server/db/store.js';

let upstream: OAuthServer;
let browser: Browser;
let sample: Server;
let appCallback: string;

beforeAll(async () => {
  upstream = await startOAuthServer();
  sample = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('signed in to the sample app'));
  await new Promise<void>((resolve) => sample.listen(0, '127.0.0.1', resolve));
  appCallback = `http://127.0.0.1:${(sample.address() as AddressInfo).port}/callback`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => sample?.close(resolve));
  await upstream?.stop();
});

/** A browser signed in at the upstream (its session cookie), recording CSP violations. */
async function signedInUpstream(cookie: string): Promise<{ context: BrowserContext; page: Page; cspErrors: string[] }> {
  const context = await browser.newContext();
  await context.addCookies([{ name: 'gatehouse_session', value: cookie, domain: '127.0.0.1', path: '/', httpOnly: true, sameSite: 'Lax' }]);
  const page = await context.newPage();
  const cspErrors: string[] = [];
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) cspErrors.push(msg.text());
  });
  return { context, page, cspErrors };
}

const providersOf = async (t: Awaited<ReturnType<typeof downstream>>['t'], email: string) => {
  const person = (await one(t.db.select().from(people).where(eq(people.email, email))))!;
  return (await many(t.db.select({ p: linkedAccounts.provider }).from(linkedAccounts).where(eq(linkedAccounts.personId, person.id)))).map((r) => r.p).sort();
};

describe('external sign-in in a real browser', () => {
  it('links an existing account after its password, and links from the account page', async () => {
    const d = await downstream(upstream, appCallback);
    const { t } = d;

    // 1. Ada has a password account downstream; signing in with Upstream asks her to prove it.
    expect((await signUp(t, { email: 'ada@example.com', applicationId: 'notes' })).statusCode).toBe(201);
    const ada = await signedInUpstream(await upstreamPerson(upstream, d, 'ada@example.com'));
    const authorize = `${d.issuer}/api/auth/oauth2/authorize?${new URLSearchParams({
      client_id: 'notes', redirect_uri: appCallback, response_type: 'code', scope: 'openid', state: 'st',
    })}`;
    await ada.page.goto(authorize);
    await Promise.all([ada.page.waitForURL(`${d.issuer}/link-account`), ada.page.getByRole('link', { name: 'Continue with Upstream' }).click()]);
    await expect(ada.page.locator('h1').textContent()).resolves.toBe('Link your Upstream account');
    await ada.page.getByLabel('Password for ada@example.com').fill(PASSWORD);
    await Promise.all([
      ada.page.waitForURL((url) => url.href.startsWith(`${appCallback}?code=`)),
      ada.page.getByRole('button', { name: 'Sign in and link Upstream' }).click(),
    ]);
    expect(new URL(ada.page.url()).searchParams.get('state')).toBe('st');
    expect((await providersOf(t, 'ada@example.com'))).toEqual(['credential', 'oidc']);
    expect(ada.cspErrors).toEqual([]);
    await ada.context.close();

    // 2. Grace signs in downstream with her password and links Upstream from her account page.
    expect((await signUp(t, { email: 'grace@example.com', applicationId: 'notes' })).statusCode).toBe(201);
    const grace = await signedInUpstream(await upstreamPerson(upstream, d, 'grace.upstream@example.com'));
    await grace.page.goto(`${d.issuer}/sign-in`);
    await grace.page.getByLabel('E-mail').fill('grace@example.com');
    await grace.page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([grace.page.waitForURL(`${d.issuer}/account`), grace.page.getByRole('button', { name: 'Sign in' }).click()]);
    await Promise.all([
      grace.page.waitForURL(`${d.issuer}/account?notice=account_linked`),
      grace.page.getByRole('button', { name: 'Link Upstream' }).click(),
    ]);
    await expect(grace.page.getByText('The sign-in method was linked').count()).resolves.toBe(1);
    expect((await providersOf(t, 'grace@example.com'))).toEqual(['credential', 'oidc']);
    expect(grace.cspErrors).toEqual([]);
    await grace.context.close();
  });
});
