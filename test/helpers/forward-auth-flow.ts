/**
 * The forward-auth story both proxy tests tell (test/interop/forward-auth-caddy.test.ts and
 * -nginx.test.ts), with the proxy running the very snippet `GET .../forward-auth/snippet` prints:
 * a real Gatehouse on 127.0.0.1, the proxy on another port in front of an echo backend, and
 * headless Chromium on `*.localhost` names (which Chromium resolves to loopback).
 *
 * Gatehouse trusts only 127.0.0.1 (GATEHOUSE_TRUST_PROXY), where the proxy connects from, so a
 * client connecting from 127.0.0.2 is "another address".
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PASSWORD, createClient, signUpCookie, startOAuthServer, type OAuthServer } from './oauth-server.js';
import { freePort } from './free-port.js';
import { launchChromium, shot } from './panel-browser.js';
import { get, startCaddy, startEcho, startNginx, type Echo, type Proxy } from './proxies.js';

interface Echoed {
  method: string;
  url: string;
  headers: Record<string, string | undefined>;
}

const identity = (echoed: Echoed) => Object.fromEntries(
  ['remote-user', 'remote-email', 'remote-name', 'remote-groups', 'remote-role'].map((h) => [h, echoed.headers[h]]),
);

export function forwardAuthStory(proxyName: 'caddy' | 'nginx'): void {
  let gatehouse: OAuthServer;
  let echo: Echo;
  let proxy: Proxy;
  let browser: Browser;
  let port: number;
  let site: string;
  let context: BrowserContext;
  let page: Page;
  const callbacks: string[] = [];
  let evesBasic: string;

  beforeAll(async () => {
    gatehouse = await startOAuthServer({ GATEHOUSE_TRUST_PROXY: '127.0.0.1' });
    echo = await startEcho();
    port = await freePort();
    site = `http://wiki.localhost:${port}`;
    await createClient(gatehouse, {
      id: 'wiki', name: 'Wiki', audience: 'https://wiki.example/api', clientType: 'web', redirectUris: ['https://wiki.example/callback'],
      forwardAuth: { hosts: [`wiki.localhost:${port}`, `*.media.localhost:${port}`] },
    });
    const res = await gatehouse.admin('GET', `/api/admin/applications/wiki/forward-auth/snippet?${new URLSearchParams({ proxy: proxyName, scheme: 'http', upstream: echo.url })}`);
    expect(res.status).toBe(200);
    const { snippet } = (await res.json()) as { snippet: string };
    proxy = proxyName === 'caddy'
      ? await startCaddy(snippet, port)
      // The snippet listens on every address; this test's nginx only on loopback.
      // Underscores in header names on, as some administrators set it for their apps: the snippet
      // must strip Remote_User as well as Remote-User itself (issue 49, H7).
      : await startNginx(snippet.replaceAll(`listen ${port};`, `listen 127.0.0.1:${port};`), port, ['underscores_in_headers on;']);
    await signUpCookie(gatehouse, 'ada@example.com', 'wiki');
    // Another application on the same proxy port (no configuration of its own here), open to
    // anyone, taking HTTP Basic: Eve is its member with an app password.
    await createClient(gatehouse, {
      id: 'blog', name: 'Blog', audience: 'https://blog.example/api', clientType: 'web', redirectUris: ['https://blog.example/callback'],
      forwardAuth: { hosts: [`blog.localhost:${port}`], basic: true },
    });
    const eve = await signUpCookie(gatehouse, 'eve@example.com', 'blog');
    const made = await fetch(`${gatehouse.url}/api/me/app-passwords`, {
      method: 'POST', headers: { cookie: eve, 'content-type': 'application/json' }, body: JSON.stringify({ applicationId: 'blog', name: 'laptop' }),
    });
    expect(made.status, await made.clone().text()).toBe(201);
    evesBasic = `Basic ${Buffer.from(`eve@example.com:${((await made.json()) as { password: string }).password}`).toString('base64')}`;
    browser = await launchChromium();
    context = await browser.newContext();
    page = await context.newPage();
    page.on('request', (request) => {
      if (request.url().includes('/.gatehouse/callback?')) callbacks.push(request.url());
    });
  });

  afterAll(async () => {
    await browser?.close();
    await proxy?.stop();
    await echo?.close();
    await gatehouse?.stop();
  });

  const echoed = async (p: Page = page) => JSON.parse((await p.locator('body').textContent())!) as Echoed;

  async function signIn(p: Page) {
    expect(new URL(p.url()).pathname).toBe('/sign-in');
    await p.getByLabel('E-mail').fill('ada@example.com');
    await p.getByLabel('Password').fill(PASSWORD);
    await p.getByRole('button', { name: 'Sign in' }).click();
  }

  describe(`forward auth behind ${proxyName}`, () => {
    it('signs a browser in through the hosted pages; the application sees who it is, never a forged header', async () => {
      await page.goto(`${site}/docs?x=1&y=%C3%A9`);
      expect(page.url().startsWith(`${gatehouse.url}/sign-in?`)).toBe(true);
      await shot(page, `forward-auth-${proxyName}-sign-in`);
      await Promise.all([page.waitForURL(`${site}/docs?x=1&y=%C3%A9`), signIn(page)]);
      const first = await echoed();
      expect(first.url).toBe('/docs?x=1&y=%C3%A9');
      expect(identity(first)).toEqual({
        'remote-user': 'ada', 'remote-email': 'ada@example.com', 'remote-name': 'Ada Lovelace',
        // nginx's proxy_set_header sends no header for an empty value.
        'remote-groups': proxyName === 'nginx' ? undefined : '', 'remote-role': 'member',
      });
      // The hand-over went through this host's /.gatehouse/callback, which set a host-only cookie.
      expect(callbacks).toHaveLength(1);
      expect(callbacks[0]!.startsWith(`${site}/.gatehouse/callback?code=`)).toBe(true);
      const cookies = (await context.cookies(site)).filter((c) => c.name === 'gatehouse_site');
      expect(cookies.map(({ domain, path, httpOnly, secure, sameSite }) => ({ domain, path, httpOnly, secure, sameSite })))
        .toEqual([{ domain: 'wiki.localhost', path: '/', httpOnly: true, secure: false, sameSite: 'Lax' }]);

      // Identity headers a client sends never reach the application, in either spelling: CGI, WSGI,
      // Rack and PHP read Remote_User as HTTP_REMOTE_USER too (issue 49, H7).
      await context.setExtraHTTPHeaders({
        'Remote-User': 'root', 'Remote-Groups': 'admins', 'Remote-Role': 'admin', 'Remote-Name': 'Root',
        Remote_User: 'root', Remote_Groups: 'admins', Remote_Role: 'admin', Remote_Email: 'root@example.com', Remote_Name: 'Root',
      });
      await page.reload();
      const forged = await echoed();
      expect(identity(forged)).toEqual(identity(first));
      expect(Object.keys(forged.headers).filter((name) => /^remote_/.test(name))).toEqual([]);
      await context.setExtraHTTPHeaders({});

      // Another host under the wildcard: the Gatehouse session signs it in without a form.
      await page.goto(`http://tv.media.localhost:${port}/`);
      expect(new URL(page.url()).host).toBe(`tv.media.localhost:${port}`);
      expect(identity(await echoed())['remote-user']).toBe('ada');
    });

    it('binds the hand-over to the browser that started it: its code, caught in transit, signs in no other browser (issue 49, H6)', async () => {
      // A host under the wildcard this browser has no site cookie for: the hand-over goes through
      // this host's /.gatehouse/start, which keeps the verifier in a host-only cookie.
      const other = `http://new.media.localhost:${port}`;
      await page.goto(`${other}/inbox`);
      expect(identity(await echoed())['remote-user'], proxy.log()).toBe('ada');
      const state = (await context.cookies(other)).filter((c) => c.name === 'gatehouse_state');
      expect(state.map(({ domain, path, httpOnly, secure, sameSite }) => ({ domain, path, httpOnly, secure, sameSite })))
        .toEqual([{ domain: 'new.media.localhost', path: '/', httpOnly: true, secure: false, sameSite: 'Lax' }]);
      // A code for this browser, as its next hand-over would carry it (the challenge is
      // SHA-256 of the verifier), caught before the browser spends it.
      const challenge = createHash('sha256').update(state[0]!.value).digest('base64url');
      const session = (await context.cookies(gatehouse.url)).map((c) => `${c.name}=${c.value}`).join('; ');
      const handed = await fetch(`${gatehouse.url}/api/auth/forward/start?${new URLSearchParams({ rd: `${other}/inbox`, challenge })}`, { redirect: 'manual', headers: { cookie: session } });
      expect(handed.status).toBe(302);
      const caught = handed.headers.get('location')!;
      expect(caught.startsWith(`${other}/.gatehouse/callback?code=`)).toBe(true);

      // Another browser with that code: the hosted error page through the proxy, no site cookie.
      const stranger = await browser.newContext();
      try {
        const elsewhere = await stranger.newPage();
        const refused = await elsewhere.goto(caught!);
        expect(refused!.status()).toBe(400);
        await expect(elsewhere.locator('main').textContent()).resolves.toContain('This sign-in was started in another browser');
        expect((await stranger.cookies(other)).some((c) => c.name === 'gatehouse_site')).toBe(false);
      } finally {
        await stranger.close();
      }
      // The browser that started it still can: the stranger's try spent nothing.
      await page.goto(caught!);
      expect(page.url()).toBe(`${other}/inbox`);
      expect(identity(await echoed())['remote-user']).toBe('ada');
    });

    it('answers a client that is not a browser with 401, and believes forwarded headers only from the proxy', async () => {
      const cookie = `gatehouse_site=${(await context.cookies(site)).find((c) => c.name === 'gatehouse_site')!.value}`;
      const api = await get(port, `wiki.localhost:${port}`, '/api/items', { accept: 'application/json' });
      expect(api.status).toBe(401);
      expect(api.headers['www-authenticate']).toBe('Bearer realm="gatehouse"');
      // Through the proxy, a forged X-Forwarded-Host changes nothing: the proxy names the host. The
      // client is another address (127.0.0.2): Gatehouse trusts the proxy's connection, whatever
      // client its X-Forwarded-For names.
      const through = await get(port, `wiki.localhost:${port}`, '/', { cookie, 'x-forwarded-host': 'other.localhost', 'x-original-url': 'http://other.localhost/' }, '127.0.0.2');
      expect(through.status).toBe(200);
      expect((JSON.parse(through.body) as Echoed).headers['remote-user']).toBe('ada');
      // Straight to Gatehouse from another address with the same claims: 403.
      const gatehousePort = Number(new URL(gatehouse.url).port);
      const forged = await get(gatehousePort, `127.0.0.1:${gatehousePort}`, '/api/auth/forward', {
        cookie, 'x-forwarded-host': `wiki.localhost:${port}`, 'x-forwarded-proto': 'http', 'x-forwarded-uri': '/',
      }, '127.0.0.2');
      expect([forged.status, JSON.parse(forged.body).code]).toEqual([403, 'untrusted_proxy']);
    });

    it('answers only for its own application\'s hosts: another application\'s host sent to it reaches neither the check nor the app (issue 49, H1)', async () => {
      // Eve's app password admits her to blog's host (asked of Gatehouse as blog's own proxy would)…
      const gatehousePort = Number(new URL(gatehouse.url).port);
      const own = await get(gatehousePort, `127.0.0.1:${gatehousePort}`, '/api/auth/forward', {
        authorization: evesBasic, 'x-forwarded-host': `blog.localhost:${port}`, 'x-forwarded-proto': 'http', 'x-forwarded-uri': '/',
      });
      expect([own.status, own.headers['remote-user']]).toEqual([200, 'eve']);
      // …but sent to wiki's proxy, the one on this port, it never reaches wiki's application.
      const crossed = await get(port, `blog.localhost:${port}`, '/', { authorization: evesBasic, accept: 'application/json' });
      if (proxyName === 'nginx') {
        // The block is nginx's default server for the port, so the request arrives; the snippet refuses the host.
        expect(crossed.status, proxy.log()).toBe(421);
        expect(crossed.body).toContain('<title>421 Misdirected Request</title>');
      } else {
        // Caddy routes by host: no site answers blog's name here (an empty 200, Caddy's own answer).
        expect([crossed.status, crossed.body]).toEqual([200, '']);
      }
      // Nor in capitals.
      const shouted = await get(port, `BLOG.LOCALHOST:${port}`, '/', { authorization: evesBasic, accept: 'application/json' });
      expect(shouted.body).not.toContain('remote-user');
    });

    it('refuses to start a hand-over to another host (400, no redirect)', async () => {
      const response = await page.goto(`${gatehouse.url}/api/auth/forward/start?${new URLSearchParams({ rd: 'http://evil.localhost/steal' })}`);
      expect(response!.status()).toBe(400);
      expect(page.url().startsWith(`${gatehouse.url}/api/auth/forward/start?`)).toBe(true);
      await expect(page.locator('main').textContent()).resolves.toContain('not a site protected by this server');
    });

    it('shows the hosted error page, styled, for a spent code', async () => {
      const response = await page.goto(callbacks[0]!);
      expect(response!.status()).toBe(400);
      expect(new URL(page.url()).host).toBe(`wiki.localhost:${port}`);
      await expect(page.locator('main').textContent()).resolves.toContain('already been used, has expired or belongs to another site');
      // The page came through the proxy; its stylesheet is the issuer's (a styled card, not bare HTML).
      const sheet = await page.evaluate(() => Array.from(document.styleSheets, (s) => s.href));
      expect(sheet).toEqual([`${gatehouse.url}/assets/gatehouse.css`]);
      expect(await page.evaluate(() => getComputedStyle(document.querySelector('main')!).borderTopStyle)).toBe('solid');
      await shot(page, `forward-auth-${proxyName}-spent-code`);
    });

    it('signs out at /.gatehouse/sign-out: the site, then (confirmed) the Gatehouse session', async () => {
      await page.goto(`${site}/.gatehouse/sign-out`);
      expect(page.url().startsWith(`${gatehouse.url}/api/auth/oauth2/end-session`)).toBe(true);
      expect((await context.cookies(site)).some((c) => c.name === 'gatehouse_site')).toBe(false);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await expect(page.locator('main').textContent()).resolves.toContain('You have signed out of Wiki.');
      await page.goto(`${site}/docs`);
      expect(page.url().startsWith(`${gatehouse.url}/sign-in?`)).toBe(true);
    });

    it('stops a signed-in browser within 5 seconds of its member being suspended', async () => {
      await Promise.all([page.waitForURL(`${site}/docs`), signIn(page)]);
      expect(identity(await echoed())['remote-user']).toBe('ada');
      const users = (await (await gatehouse.admin('GET', '/api/admin/applications/wiki/users')).json()) as { users: { id: string }[] };
      expect((await gatehouse.admin('PATCH', `/api/admin/applications/wiki/users/${users.users[0]!.id}`, { status: 'suspended' })).status).toBe(200);
      const suspended = Date.now();
      let status = 200;
      while (status === 200 && Date.now() - suspended < 6_000) status = (await page.reload())!.status();
      expect(status).toBe(403);
      expect(Date.now() - suspended).toBeLessThan(5_000);
      // Caddy passes Gatehouse's refusal page on; nginx's auth_request answers its own 403.
      if (proxyName === 'caddy') await expect(page.locator('p.error').getAttribute('data-reason')).resolves.toBe('suspended');
      await shot(page, `forward-auth-${proxyName}-refused`);
    });
  });
}
