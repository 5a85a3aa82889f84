/**
 * Device sign-in (RFC 8628) with a real browser on the hosted /device page: headless Chromium
 * opens the `verification_uri`, types the code the device shows, is sent to sign in for the
 * device's application and comes back, sees what it asks for, and approves — while openid-client
 * polls as the device and receives its tokens. A second device is denied and hears
 * `access_denied`. No CSP violation may occur on the way.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import * as client from 'openid-client';
import type { Browser } from 'playwright-core';
import { PASSWORD, createClient, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { cspWatchedPage, launchChromium, shot } from '../helpers/panel-browser.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

let server: OAuthServer;
let browser: Browser;
let config: client.Configuration;

beforeAll(async () => {
  server = await startOAuthServer();
  await createClient(server, {
    id: 'lobby-tv', name: 'Lobby TV', audience: 'https://tv.example.com/api', clientType: 'native', redirectUris: ['http://127.0.0.1/cb'],
    grantTypes: [DEVICE_GRANT, 'refresh_token'],
  });
  // Ada has an account (a session elsewhere); the browser below has none yet.
  await signUpCookie(server, 'ada@example.com', 'lobby-tv');
  config = await client.discovery(new URL(server.url), 'lobby-tv', undefined, client.None(), { execute: [client.allowInsecureRequests] });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const newPage = () => cspWatchedPage(browser);

// The two device sign-ins run side by side: each device waits the 5 s poll interval the server
// gives (RFC 8628 §3.2) before it hears the answer, most of each test (issue 45). Each has its
// own device code and browser context; `expect` is the test's own, as concurrent tests need.
describe.concurrent('the /device page in Chromium', () => {
  it('types the code, signs in, approves; the polling device receives its tokens', async ({ expect }) => {
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid email offline_access' });
    const polling = client.pollDeviceAuthorizationGrant(config, started);
    const { page, cspErrors, close } = await newPage();
    try {
      await page.goto(started.verification_uri);
      await expect(page.locator('h1').textContent()).resolves.toBe('Connect a device');
      // Typed as a person might: lower case, with a space instead of the dash.
      await page.getByLabel('Code').fill(started.user_code.toLowerCase().replace('-', ' '));
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL('**/sign-in?**');
      await expect(page.locator('h1').textContent()).resolves.toBe('Sign in to Lobby TV');
      await page.getByLabel('E-mail').fill('ada@example.com');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`**/device?user_code=${started.user_code}`);
      await expect(page.locator('h1').textContent()).resolves.toBe('Connect a device to Lobby TV?');
      await expect(page.locator('.code').textContent()).resolves.toBe(started.user_code);
      await expect(page.locator('ul.asks li').allTextContents()).resolves.toEqual([
        'Know who you are', 'See your e-mail address', 'Stay signed in until you sign it out',
      ]);
      await shot(page, 'device-confirm');
      await page.getByRole('button', { name: 'Approve' }).click();
      await expect(page.locator('h1').textContent()).resolves.toBe('Device connected');

      const tokens = await polling;
      expect(tokens.claims()).toMatchObject({ aud: 'lobby-tv', email: 'ada@example.com' });
      expect(tokens.refresh_token).toMatch(/^ghr_/);

      // The device is listed in the person's account, as its own session.
      await page.goto(`${server.url}/account`);
      await expect(page.getByText('Lobby TV (device sign-in)').count()).resolves.toBe(1);
      expect(cspErrors).toEqual([]);
    } finally {
      await close();
    }
  }, 90_000);

  it('denies from the verification_uri_complete link; the device hears access_denied', async ({ expect }) => {
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    const polling = client.pollDeviceAuthorizationGrant(config, started);
    const { page, cspErrors, close } = await newPage();
    try {
      await page.goto(started.verification_uri_complete!);
      await page.waitForURL('**/sign-in?**');
      await page.getByLabel('E-mail').fill('ada@example.com');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`**/device?user_code=${started.user_code}`);
      await page.getByRole('button', { name: 'Deny' }).click();
      await expect(page.locator('h1').textContent()).resolves.toBe('Sign-in denied');
      await expect(polling).rejects.toMatchObject({ error: 'access_denied' });
      // The code is spent: opening it again says so.
      await page.goto(started.verification_uri_complete!);
      await expect(page.locator('p.error').textContent()).resolves.toContain('That code has already been used.');
      expect(cspErrors).toEqual([]);
    } finally {
      await close();
    }
  }, 90_000);
});
