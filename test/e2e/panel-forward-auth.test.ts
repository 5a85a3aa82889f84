/**
 * The control panel's Forward auth tab in headless Chromium against a real server (issue 34):
 * protecting hosts (a bad line refused under the field, in words), the proxy configuration the
 * server prints for them (Caddy, then nginx over plain http with the app's own address), and
 * stopping the protection; an application from an app preset starts from the preset's upstream
 * and scheme (issue 44, m2). And the Access section's allowed groups, the group rule every protocol
 * honours (issue 44, item 5), at 1280 and 390 px, light and dark.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { OAUTH_ADMIN_TOKEN, createClient, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { buildIfStale, launchChromium, panelContext, seriousViolations, shot } from '../helpers/panel-browser.js';

let server: OAuthServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  buildIfStale();
  server = await startOAuthServer();
  await createClient(server, { id: 'media', name: 'Media', audience: 'https://media.example/api', clientType: 'web', redirectUris: ['https://media.example/cb'] });
  browser = await launchChromium();
  page = await (await panelContext(browser, OAUTH_ADMIN_TOKEN)).newPage();
  await page.goto(`${server.url}/admin/`);
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('the Forward auth tab', () => {
  it('protects hosts, prints the proxy configuration for them, and stops protecting them', async () => {
    await page.goto(`${server.url}/admin/applications/media/connect/forward-auth`);
    await expect.poll(() => page.getByText('This application protects no hosts yet').isVisible()).toBe(true);
    const hosts = page.getByLabel('Protected hosts');

    await hosts.fill('media.lan.example\nhttps://bad/');
    await page.getByRole('button', { name: 'Save protected hosts' }).click();
    await expect.poll(() => page.locator('.field.invalid .field-errors').textContent()).toContain('Line 2: must be a host name with an optional port');

    await hosts.fill('Media.LAN.example\n*.media.lan.example');
    await page.getByRole('button', { name: 'Save protected hosts' }).click();
    const config = page.getByTestId('proxy-config');
    await expect.poll(() => config.textContent()).toContain('"https://media.lan.example" "https://*.media.lan.example" {');
    expect(await hosts.inputValue()).toBe('Media.LAN.example\n*.media.lan.example');
    const stored = (await (await server.admin('GET', '/api/admin/applications/media')).json()) as { forwardAuth: unknown };
    expect(stored.forwardAuth).toEqual({ hosts: ['media.lan.example', '*.media.lan.example'], basic: false });
    // Who passes is the Access section's allowed groups (every protocol), which the tab links to.
    expect(await page.getByRole('link', { name: 'allowed groups' }).getAttribute('href')).toBe('/admin/applications/media/access');
    await shot(page, 'panel-forward-auth-caddy');
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByLabel('Proxy', { exact: true }).selectOption('nginx');
    await page.getByLabel('The hosts are served over').selectOption('http');
    await page.getByLabel('The app itself listens at').fill('http://10.0.0.7:8096');
    await page.getByLabel('The app itself listens at').blur();
    await expect.poll(() => config.textContent()).toContain('        proxy_pass "http://10.0.0.7:8096";');
    expect(await config.textContent()).toContain('    listen 80;\n    server_name "media.lan.example" "*.media.lan.example";');

    await page.getByRole('button', { name: 'Stop protecting hosts' }).click();
    await expect.poll(() => page.getByText('This application protects no hosts yet').isVisible()).toBe(true);
    expect(((await (await server.admin('GET', '/api/admin/applications/media')).json()) as { forwardAuth: unknown }).forwardAuth).toBeNull();
  });

  it("starts from the app preset's upstream and scheme", async () => {
    const made = await server.admin('POST', '/api/admin/applications', { preset: 'uptime-kuma', presetInputs: { baseUrl: 'http://status.lan:8080', upstream: 'http://10.0.0.8:3001' } });
    expect(made.status).toBe(201);
    await page.goto(`${server.url}/admin/applications/uptime-kuma/connect/forward-auth`);
    const config = page.getByTestId('proxy-config');
    await expect.poll(() => config.textContent()).toContain('reverse_proxy "http://10.0.0.8:3001"');
    expect(await config.textContent()).toContain('"http://status.lan:8080" {');
    expect(await page.getByLabel('The app itself listens at').inputValue()).toBe('http://10.0.0.8:3001');
    expect(await page.getByLabel('The hosts are served over').inputValue()).toBe('http');
    // Connect opens on the protocol the preset uses.
    await page.goto(`${server.url}/admin/applications/uptime-kuma/connect`);
    await expect.poll(() => page.locator('nav.subtabs [aria-current="page"]').textContent()).toBe('Forward auth');
  });
});

describe('the Access section\'s allowed groups', () => {
  it('restricts the application to chosen groups and lifts the rule, at 1280 and 390 px, light and dark, axe clean', async () => {
    expect((await server.admin('POST', '/api/admin/groups', { id: 'family', name: 'Family' })).status).toBe(201);
    await page.goto(`${server.url}/admin/applications/media/access`);
    const card = page.getByTestId('allowed-groups');
    await card.getByLabel('Everyone the sign-up policy admits (no group rule)').waitFor();
    expect(await card.getByLabel('Everyone the sign-up policy admits (no group rule)').isChecked()).toBe(true);
    await card.getByLabel('Only members of these groups').check();
    await card.getByRole('button', { name: 'Save allowed groups' }).click();
    await expect.poll(() => card.locator('.field-errors').textContent()).toBe('Choose at least one group, or let everyone in.');
    const picker = card.getByRole('group', { name: 'Allowed groups' });
    await picker.getByLabel('Find a group').fill('fam');
    await picker.getByLabel('Find a group').press('Enter');
    await picker.locator('li.chip[data-group="family"]').waitFor();
    await card.getByRole('button', { name: 'Save allowed groups' }).click();
    await expect.poll(async () => ((await (await server.admin('GET', '/api/admin/applications/media')).json()) as { allowedGroups: unknown }).allowedGroups).toEqual(['family']);
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, 'panel-access-allowed-groups');

    for (const [width, colorScheme] of [[390, 'dark'], [1280, 'dark'], [390, 'light']] as const) {
      const other = await (await panelContext(browser, OAUTH_ADMIN_TOKEN, { viewport: { width, height: 844 }, colorScheme })).newPage();
      await other.goto(`${server.url}/admin/applications/media/access`);
      const shown = other.getByTestId('allowed-groups');
      await shown.locator('li.chip[data-group="family"]').waitFor();
      expect(await shown.getByLabel('Only members of these groups').isChecked(), `${width} ${colorScheme}`).toBe(true);
      expect(await other.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${width} ${colorScheme}: no sideways scroll`).toBe(true);
      expect(await seriousViolations(other), `${width} ${colorScheme}`).toEqual([]);
      await shot(other, `panel-access-allowed-groups-${width}-${colorScheme}`);
      await other.context().close();
    }

    await card.getByLabel('Everyone the sign-up policy admits (no group rule)').check();
    await card.getByRole('button', { name: 'Save allowed groups' }).click();
    await expect.poll(async () => ((await (await server.admin('GET', '/api/admin/applications/media')).json()) as { allowedGroups: unknown }).allowedGroups).toBeNull();
  });
});
