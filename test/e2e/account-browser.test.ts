/**
 * The account page in headless Chromium: the same person signs in on two browsers (a laptop and a
 * lost phone); from the laptop's account page they sign the phone out, and the phone's next
 * request is signed out. Then they edit a profile field an application defined and see it saved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { PASSWORD, createClient, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { launchChromium, shot } from '../helpers/panel-browser.js';

let server: OAuthServer;
let browser: Browser;

beforeAll(async () => {
  server = await startOAuthServer();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** A fresh browser context (its own cookies: another device) that records CSP violations. */
async function device(userAgent: string) {
  const context = await browser.newContext({ userAgent });
  const page = await context.newPage();
  const cspErrors: string[] = [];
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) cspErrors.push(msg.text());
  });
  return { page, cspErrors, close: () => context.close() };
}

async function signInOn(page: Page) {
  await page.goto(`${server.url}/account`);
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.getByLabel('E-mail').fill('ada@example.com');
  await page.getByLabel('Password').fill(PASSWORD);
  await Promise.all([page.waitForURL(`${server.url}/account`), page.getByRole('button', { name: 'Sign in' }).click()]);
}

describe('account page in a real browser', () => {
  it('signs a lost phone out from the laptop, and saves a profile field', async () => {
    await createClient(server, {
      id: 'notes', name: 'Notes', audience: 'https://notes.example/api', clientType: 'spa', redirectUris: ['http://127.0.0.1:5173/cb'],
      authPolicy: {
        signup_policy: 'open',
        profile_fields: [
          { key: 'team', label: 'Team', type: 'select', options: ['red', 'blue'], required: false, user_editable: true },
          { key: 'nickname', label: 'Nickname', type: 'string', max_length: 40, required: false, user_editable: true },
        ],
      },
    });
    await signUpCookie(server, 'ada@example.com', 'notes');

    const laptop = await device('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36');
    const phone = await device('Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1');
    await signInOn(phone.page);
    await expect(phone.page.locator('h1').textContent()).resolves.toBe('Ada Lovelace');
    await signInOn(laptop.page);

    // The laptop sees the phone among its devices and signs it out.
    const phoneRow = laptop.page.locator('li.row', { hasText: 'Mobile Safari 17 on iOS 17.1' }).filter({ hasText: 'Sign out this device' });
    await expect(phoneRow.count()).resolves.toBe(1);
    await expect(laptop.page.locator('li.row', { hasText: 'this device' }).locator('strong').first().textContent()).resolves.toBe('Chrome 120 on Linux');
    await shot(laptop.page, 'account-two-devices');
    await Promise.all([laptop.page.waitForURL('**/account?notice=session_ended#devices'), phoneRow.getByRole('button', { name: 'Sign out this device' }).click()]);
    await expect(laptop.page.locator('.notice').textContent()).resolves.toBe('That device was signed out.');
    await expect(laptop.page.locator('li.row.ended', { hasText: 'Mobile Safari 17 on iOS 17.1' }).count()).resolves.toBe(1);

    // The phone's next request is signed out.
    await phone.page.reload();
    await expect(phone.page.getByRole('link', { name: 'Sign in' }).count()).resolves.toBe(1);
    // (The page's CSP forbids scripts from fetching, so the API call goes through the context's cookie jar.)
    expect((await phone.page.context().request.get(`${server.url}/api/me/sessions`)).status()).toBe(401);

    // The laptop edits its profile for Notes.
    const form = laptop.page.getByRole('form', { name: 'Profile for Notes' });
    await form.getByLabel('Team').selectOption('blue');
    await form.getByLabel('Nickname').fill('Countess');
    await Promise.all([laptop.page.waitForURL('**/account?notice=profile_saved#app-notes'), form.getByRole('button', { name: 'Save Notes profile' }).click()]);
    await expect(laptop.page.locator('.notice').textContent()).resolves.toBe('Your profile was saved.');
    await expect(laptop.page.getByLabel('Nickname').inputValue()).resolves.toBe('Countess');
    await expect(laptop.page.getByLabel('Team').inputValue()).resolves.toBe('blue');
    const memberships = await (await laptop.page.context().request.get(`${server.url}/api/me/memberships`)).json();
    expect(memberships.memberships[0].profile).toEqual({ team: 'blue', nickname: 'Countess' });
    await shot(laptop.page, 'account-profile-saved');

    expect(laptop.cspErrors).toEqual([]);
    expect(phone.cspErrors).toEqual([]);
    await laptop.close();
    await phone.close();
  });

  it('app passwords fit a 390 px phone (m13 of issue 44): making one, the password shown once, and the list with its revoke button', async () => {
    await createClient(server, {
      id: 'media', name: 'Media server in the living room', audience: 'https://media.example/api', clientType: 'spa', redirectUris: ['http://127.0.0.1:5174/cb'],
      ldap: { enabled: true },
    });
    await signUpCookie(server, 'tyrone.longaddress@example.com', 'media');
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const wide = async () => page.evaluate(() => document.documentElement.scrollWidth);
    await page.goto(`${server.url}/account`);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('E-mail').fill('tyrone.longaddress@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([page.waitForURL(`${server.url}/account`), page.getByRole('button', { name: 'Sign in' }).click()]);
    const form = page.getByRole('form', { name: 'Make an app password' });
    await form.getByLabel('What it is for').fill('Jellyfin on the living-room television');
    expect(await wide()).toBeLessThanOrEqual(390);
    await form.getByRole('button', { name: 'Make an app password' }).click();
    await page.getByRole('heading', { name: 'Your new app password' }).waitFor();
    expect(await wide()).toBeLessThanOrEqual(390);
    await shot(page, 'account-app-password-390px');
    await page.goto(`${server.url}/account#app-passwords`);
    const row = page.locator('li[data-app-password]');
    await row.getByRole('button', { name: 'Revoke Jellyfin on the living-room television' }).waitFor();
    expect(await wide()).toBeLessThanOrEqual(390);
    const button = (await row.getByRole('button').boundingBox())!;
    expect(button.x + button.width).toBeLessThanOrEqual(390);
    await shot(page, 'account-app-passwords-390px');
    await context.close();
  });
});
