/**
 * The control panel's second-factor controls in headless Chromium: the sign-in policy's "Second
 * factor" choice (saved as `mfa`), and on the Members tab a member's factors (counts and dates)
 * with "Reset second factor…" behind a confirmation, which removes them and signs the person out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Secret, TOTP } from 'otpauth';
import { OAUTH_ADMIN_TOKEN, createClient, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { buildIfStale, launchChromium, shot } from '../helpers/panel-browser.js';

let server: OAuthServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  buildIfStale();
  server = await startOAuthServer();
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' })).newPage();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('control panel: second factors', () => {
  it('requires MFA for an application, shows a member\'s factors and resets them after confirming', async () => {
    await createClient(server, { id: 'wiki', name: 'Wiki', audience: 'https://wiki.example/api', clientType: 'spa', redirectUris: ['http://127.0.0.1:5173/cb'] });
    const cookie = await signUpCookie(server, 'ada@example.com', 'wiki');
    const json = { cookie, 'content-type': 'application/json' };
    const { secret } = (await (await fetch(`${server.url}/api/me/totp`, { method: 'POST', headers: json, body: '{}' })).json()) as { secret: string };
    const totp = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate();
    expect((await fetch(`${server.url}/api/me/totp/confirm`, { method: 'POST', headers: json, body: JSON.stringify({ code: totp }) })).status).toBe(200);

    await page.goto(`${server.url}/admin/`);
    await page.getByLabel('Admin token').fill(OAUTH_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Use the admin token' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.goto(`${server.url}/admin/applications/wiki/access`);
    await page.getByText(/Required — members must sign in with a second factor/).click();
    await page.getByRole('button', { name: 'Save sign-in policy' }).click();
    await page.getByText('Sign-in policy saved.').waitFor();
    await shot(page, 'panel-policy-mfa');
    expect(((await (await server.admin('GET', '/api/admin/applications/wiki/auth-policy')).json()) as { mfa: string }).mfa).toBe('required');

    await page.getByRole('navigation', { name: 'Application sections' }).getByRole('link', { name: 'People' }).click();
    const row = page.locator('tr[data-member="ada@example.com"]');
    await row.getByRole('button', { name: 'Second factor' }).click();
    const card = page.locator('[data-second-factor="ada@example.com"]');
    await card.getByText(/Authenticator app: on since/).waitFor();
    await expect(card.getByText('Recovery codes left: 10').count()).resolves.toBe(1);
    await expect(card.getByText('Passkeys: 0').count()).resolves.toBe(1);

    // Cancelling the confirmation changes nothing.
    await card.getByRole('button', { name: 'Reset second factor…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Reset the second factor of ada@example.com?').waitFor();
    await shot(page, 'panel-confirm-reset-second-factor');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect((await fetch(`${server.url}/api/me/security`, { headers: { cookie } })).status).toBe(200);

    await card.getByRole('button', { name: 'Reset second factor…' }).click();
    await dialog.getByRole('button', { name: 'Reset second factor' }).click();
    await page.getByText('Second factor of ada@example.com reset; they were signed out everywhere.').waitFor();
    expect((await fetch(`${server.url}/api/me/security`, { headers: { cookie } })).status).toBe(401);
    const users = (await (await server.admin('GET', '/api/admin/applications/wiki/users')).json()) as { users: { id: string }[] };
    const detail = (await (await server.admin('GET', `/api/admin/applications/wiki/users/${users.users[0]!.id}`)).json()) as { secondFactor: unknown };
    expect(detail.secondFactor).toEqual({
      totp: { enabled: false, confirmedAt: null }, passkeys: { count: 0, lastUsedAt: null }, recoveryCodes: { remaining: 0, createdAt: null },
    });
  });
});
