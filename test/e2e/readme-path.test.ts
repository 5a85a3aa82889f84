/**
 * The README's quick start as a newcomer walks it (issue 44, item 4), in headless Chromium at
 * 1280 × 900 against a fresh server with an empty data directory: /admin/ → the owner account with
 * the admin token → a TOTP authenticator → the Overview's first-run call to action (m9) → the
 * Grafana preset → its set-up text → Test sign-in, which reuses the panel's sign-in (no second
 * password or code) and shows who signed in and Grafana's checks.
 *
 * The first-run Overview is checked at 390 px in the dark scheme too.
 *
 * Every click and every field typed goes through `act`, so the path's cost is counted: the counts
 * are asserted exactly (a screen that adds a step makes this test fail and the README's promise
 * be looked at again), and the time each part took here is printed (machine time, not a person
 * reading: the closing note of issue 44 gives both).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { Secret, TOTP } from 'otpauth';
import { OAUTH_ADMIN_TOKEN, PASSWORD, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { buildIfStale, launchChromium, seriousViolations, shot } from '../helpers/panel-browser.js';

let server: OAuthServer;
let browser: Browser;

beforeAll(async () => {
  buildIfStale();
  server = await startOAuthServer();
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** What the person did: clicks and fields filled, and when each part of the path ended. */
const act = {
  clicks: 0,
  fields: 0,
  async click(target: Locator) {
    act.clicks += 1;
    await target.click();
  },
  async fill(target: Locator, text: string) {
    act.fields += 1;
    await target.fill(text);
  },
};

describe("the README's quick start", () => {
  it('owner, second factor, Grafana preset, set-up text and Test sign-in: 9 clicks and 7 fields', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    const page: Page = await context.newPage();
    const started = Date.now();
    const parts: [string, number][] = [];
    let last = started;
    const lap = (name: string) => {
      const now = Date.now();
      parts.push([name, now - last]);
      last = now;
    };

    // 1. The owner account, with the admin token the server printed (./data/admin-token).
    await page.goto(`${server.url}/admin/`);
    await act.click(page.getByRole('button', { name: 'Create the owner account' }));
    await act.fill(page.getByLabel('Your e-mail address'), 'olive@example.com');
    await act.fill(page.getByLabel('Your name'), 'Olive Owner');
    await act.fill(page.locator('input[name="password"]'), PASSWORD);
    await act.fill(page.getByLabel('The same password again'), PASSWORD);
    await act.fill(page.getByLabel('Admin token'), OAUTH_ADMIN_TOKEN);
    await act.click(page.getByRole('button', { name: 'Create the owner' }));
    lap('owner');

    // 2. The second factor the panel requires: an authenticator app's code.
    await page.getByRole('heading', { name: 'Set up a second factor' }).waitFor();
    const secret = (await page.locator('[data-totp-key]').textContent())!.trim();
    const code = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate();
    await act.fill(page.getByLabel('Code from the app'), code);
    await act.click(page.getByRole('button', { name: 'Confirm', exact: true }));
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    await act.click(page.getByRole('link', { name: 'Continue' }));
    lap('second factor');

    // 3. The Overview's first thing on a first run is the next step (m9).
    const firstRun = page.getByTestId('first-run');
    await firstRun.getByRole('heading', { name: 'Connect your first application' }).waitFor();
    expect(await firstRun.locator('li').allTextContents()).toEqual([
      'New application: pick the app you are connecting (Grafana, Nextcloud, Jellyfin… or something else).',
      'Paste the set-up text it shows into the app.',
      'Test sign-in: sign in as the app would, and see the tokens and checks it gets.',
    ]);
    const box = (await firstRun.boundingBox())!;
    expect(box.y + box.height).toBeLessThanOrEqual(900); // on screen without scrolling
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'readme-1-overview-first-run');
    // The same first screen on a phone, in the dark scheme: no sideways scroll, the step on screen, axe clean.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const phoneBox = (await firstRun.getByRole('link', { name: 'New application' }).boundingBox())!;
    expect(phoneBox.y + phoneBox.height).toBeLessThanOrEqual(844);
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'readme-1-overview-first-run-390px-dark');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ colorScheme: 'light' });
    await act.click(firstRun.getByRole('link', { name: 'New application' }));

    // 4. The Grafana preset, its one required input, and the set-up text with the secret in place.
    await page.getByRole('heading', { name: 'What are you connecting?' }).waitFor();
    await act.click(page.locator('button[data-preset="grafana"]'));
    await page.getByRole('heading', { name: 'Connect Grafana' }).waitFor();
    await act.fill(page.getByLabel('Grafana address (root_url)'), 'https://grafana.lan.example');
    await act.click(page.getByRole('button', { name: 'Create application' }));
    const clientSecret = (await page.getByTestId('shown-once').getByTestId('copy-client-secret').textContent()) ?? '';
    expect(clientSecret).toMatch(/^ghs_/);
    const setup = page.getByTestId('setup');
    await expect.poll(() => setup.textContent()).toContain(clientSecret);
    const setupText = (await setup.textContent()) ?? '';
    expect(setupText).toContain('https://grafana.lan.example/login/generic_oauth');
    expect(setupText).not.toContain('<client-secret>');
    await shot(page, 'readme-2-grafana-setup');
    lap('preset and set-up text');

    // 5. Test sign-in: the panel's sign-in is reused, so the window asks nothing and closes.
    await act.click(page.getByRole('button', { name: 'Next: Test sign-in' }));
    await page.getByText('You are signed in to the panel: the window uses that sign-in and does not ask again.').waitFor();
    const popup = page.waitForEvent('popup');
    await act.click(page.getByRole('button', { name: 'Add it and start' }));
    await (await popup).waitForEvent('close', { timeout: 20_000 });
    await page.getByText('It works').waitFor({ timeout: 20_000 });
    expect(await page.getByTestId('signed-in-person').textContent()).toBe('Olive Owner <olive@example.com>');
    const checks = await page.getByTestId('test-sign-in-checks').locator('li').allTextContents();
    expect(checks).toEqual([
      'passes the grafana_role claim resolves to a Grafana role (admin, member): grafana_role is "admin"',
      'passes a refresh token was issued (use_refresh_token keeps the Grafana session alive): a refresh token was issued',
    ]);
    lap('test sign-in');
    await shot(page, 'readme-3-test-sign-in');
    expect(await seriousViolations(page)).toEqual([]);

    expect({ clicks: act.clicks, fields: act.fields }).toEqual({ clicks: 9, fields: 7 });
    const total = Date.now() - started;
    console.log(`README path: ${act.clicks} clicks, ${act.fields} fields, ${(total / 1000).toFixed(1)} s in the browser (${parts.map(([n, ms]) => `${n} ${(ms / 1000).toFixed(1)} s`).join(', ')})`);

    // Once an application exists, the Overview no longer leads with the first-run step.
    await page.goto(`${server.url}/admin/`);
    await page.getByRole('group', { name: 'Counts' }).waitFor();
    expect(await page.getByTestId('first-run').count()).toBe(0);
    await context.close();
  });
});
