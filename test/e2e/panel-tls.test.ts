/**
 * The control panel over LAN HTTPS shows the local CA's fingerprint on its overview (issue 22,
 * item 2), so an administrator can compare it with what each device shows when installing the CA.
 * Real Chromium; the browser trusts the CA only through Playwright's HTTPS-error switch, since
 * installing a CA into the headless profile is not possible here.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { buildIfStale, launchChromium, shot } from '../helpers/panel-browser.js';
import { OAUTH_ADMIN_TOKEN, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';

let server: OAuthServer;
let browser: Browser;

beforeAll(async () => {
  buildIfStale();
  server = await startOAuthServer({ GATEHOUSE_TLS: 'auto' });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('control panel over LAN TLS', () => {
  it('shows the local CA fingerprint next to the CA download on the overview', async () => {
    expect(server.url).toMatch(/^https:/);
    const fingerprint = new X509Certificate(readFileSync(join(server.running.config.dataDir, 'tls', 'ca.pem'))).fingerprint256;
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/`);
    await page.getByLabel('Admin token').fill(OAUTH_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await page.getByTestId('copy-local-ca-fingerprint-(sha-256)').textContent()).toBe(fingerprint);
    expect(await page.getByRole('link', { name: /Download the local CA certificate/ }).getAttribute('href')).toBe(`${server.url}/ca.pem`);
    await shot(page, 'tls-overview');
    await context.close();
  });
});
