/**
 * The control panel's LAN TLS screen and the local CA of issue 22 (item 2): it shows what the CA may
 * vouch for (its name constraints) beside its fingerprint, and "Renew the CA" replaces it — the
 * server serves a certificate from the new CA at once and the screen shows the new fingerprint.
 * Real Chromium; it trusts the HTTPS server only through Playwright's HTTPS-error switch, since a
 * CA cannot be installed into the headless profile here.
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

const caFile = () => join(server.running.config.dataDir, 'tls', 'ca.pem');

describe('LAN TLS screen', () => {
  it("shows the CA's fingerprint and scope, and renews it after a confirmation", async () => {
    expect(server.url).toMatch(/^https:/);
    const before = new X509Certificate(readFileSync(caFile())).fingerprint256;
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/`);
    await page.getByLabel('Admin token').fill(OAUTH_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Use the admin token' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.goto(`${server.url}/admin/lan-tls`);
    await page.getByRole('heading', { name: 'Certificate authority' }).waitFor();
    expect(await page.getByTestId('copy-sha-256-fingerprint').textContent()).toBe(before);
    const scope = await page.getByTestId('ca-scope').textContent();
    expect(scope).toMatch(/^This CA can vouch only for: .*localhost.*127\.0\.0\.1/);
    expect(await page.getByTestId('ca-unconstrained').count()).toBe(0);
    // The QR code of the trust page (drawn by the server) and its address (issue 46).
    await page.getByTestId('trust-qr').waitFor();
    expect(await page.getByTestId('trust-qr').getAttribute('alt')).toBe(`QR code for ${server.url}/trust`);
    expect(await page.getByTestId('copy-trust-page').textContent()).toBe(`${server.url}/trust`);
    await shot(page, 'lan-tls-ca');

    await page.getByRole('button', { name: 'Renew the CA' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Renew the certificate authority?').waitFor();
    await dialog.getByRole('button', { name: 'Renew' }).click();
    await page.getByText(/^New CA .*: install it on every device\.$/).waitFor();
    const after = new X509Certificate(readFileSync(caFile())).fingerprint256;
    expect(after).not.toBe(before);
    await page.getByText(`New CA ${after}: install it on every device.`).waitFor();
    await expect.poll(() => page.getByTestId('copy-sha-256-fingerprint').textContent()).toBe(after);
    await context.close();
  });

  it("shows the set-up text's trust lines for the app's runtime, following the CA path typed in, and the server's word on a bad one", async () => {
    const created = await fetchAdmin('POST', '/api/admin/applications', { preset: 'outline', presetInputs: { baseUrl: 'https://wiki.lan.example' } });
    expect(created.status).toBe(201);
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(`${server.url}/admin/`);
    await page.getByLabel('Admin token').fill(OAUTH_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Use the admin token' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.goto(`${server.url}/admin/applications/outline/setup`);
    const trust = page.getByTestId('setup-trust');
    await trust.waitFor();
    expect(await trust.getByTestId('copy-start-the-app-with').textContent()).toBe('NODE_EXTRA_CA_CERTS=/etc/ssl/certs/gatehouse-ca.pem');
    await shot(page, 'setup-trust');
    const path = page.getByLabel("Where the app's server keeps the CA");
    await path.fill('/srv/outline/gatehouse-ca.pem');
    await path.press('Enter');
    await path.blur();
    await expect.poll(() => trust.getByTestId('copy-start-the-app-with').textContent()).toBe('NODE_EXTRA_CA_CERTS=/srv/outline/gatehouse-ca.pem');
    await page.getByLabel("Where the app's server keeps the CA").fill('srv/relative.pem');
    await page.getByLabel("Where the app's server keeps the CA").blur();
    await page.getByText('must be an absolute path of letters, digits, ".", "_", "/" and "-" only').waitFor();
    await context.close();
  });
});

async function fetchAdmin(method: string, path: string, body?: unknown) {
  const { caFetch } = await import('../helpers/ca-fetch.js');
  return caFetch(readFileSync(caFile(), 'utf8'))(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${OAUTH_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}
