/**
 * The single-page-app preset for real (issue 37, item 5): oidc-client-ts 3.5 in headless Chromium,
 * on a page served from the app's own origin (localhost) and configured with the oidc-settings.json
 * of GET …/setup alone. The page's UserManager sends the browser to Gatehouse, the person signs in
 * on Gatehouse's hosted page, and the callback page exchanges the code itself (a public client:
 * PKCE, no secret, a cross-origin fetch Gatehouse allows) and shows the profile.
 */
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startOAuthServer, signUpCookie, type OAuthServer } from '../helpers/oauth-server.js';
import { freePort } from '../helpers/free-port.js';
import { launchChromium, root } from '../helpers/panel-browser.js';
import { fromPreset, setupFile } from '../helpers/preset-interop.js';

let server: OAuthServer;
let site: string;
let page: Server;
let browser: Browser;

/** The app: one page that starts the sign-in and, at the redirect URI, finishes it. */
function spaServer(settings: string): Server {
  const library = readFileSync(join(root, 'node_modules/oidc-client-ts/dist/browser/oidc-client-ts.min.js'));
  const html = (script: string) => `<!doctype html><meta charset="utf-8"><title>SPA</title><p id="out">…</p>
<script src="/oidc-client-ts.min.js"></script><script>const manager = new oidc.UserManager(${settings});${script}</script>`;
  return createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/oidc-client-ts.min.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(library);
    if (path === '/callback') {
      return res.writeHead(200, { 'content-type': 'text/html' }).end(html(
        "manager.signinRedirectCallback().then((u) => { document.getElementById('out').textContent = u.profile.preferred_username + ' ' + u.profile.email + ' ' + u.scope; }, (e) => { document.getElementById('out').textContent = 'error: ' + e.message; });",
      ));
    }
    return res.writeHead(200, { 'content-type': 'text/html' }).end(html("manager.signinRedirect();"));
  });
}

beforeAll(async () => {
  server = await startOAuthServer();
  const port = await freePort();
  site = `http://localhost:${port}`;
  const { app, setup } = await fromPreset(server, 'oidc-client-ts', { baseUrl: site }, 'spa');
  expect(app.clientSecret).toBeUndefined();
  page = spaServer(setupFile(setup, 'oidc-settings.json'));
  await new Promise<void>((resolve) => page.listen(port, '127.0.0.1', resolve));
  await signUpCookie(server, 'ada@example.com', 'spa');
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => page?.close(resolve));
  await server?.stop();
});

describe('oidc-client-ts in Chromium, configured from the preset\'s set-up text', () => {
  it('signs a member in with the code flow and PKCE, the code exchanged by the page itself', async () => {
    const context = await browser.newContext();
    const tab = await context.newPage();
    await tab.goto(`${site}/`);
    // Gatehouse's hosted sign-in page, then back to the app's callback.
    await tab.waitForURL(`${server.url}/**`);
    await tab.getByLabel('E-mail').fill('ada@example.com');
    await tab.getByLabel('Password').fill('correct horse battery');
    await tab.getByRole('button', { name: 'Sign in' }).click();
    await tab.waitForURL(`${site}/callback?**`);
    await expect.poll(() => tab.locator('#out').textContent(), { timeout: 15_000 }).toBe('ada ada@example.com openid profile email');
    await context.close();
  });
});
