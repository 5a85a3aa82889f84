/**
 * The control panel's LAN TLS screen and the local CA of issue 22 (item 2): it shows what the CA may
 * vouch for (its name constraints) beside its fingerprint, and "Renew the CA" replaces it — the
 * server serves a certificate from the new CA at once and the screen shows the new fingerprint.
 * Real Chromium; it trusts the HTTPS server only through Playwright's HTTPS-error switch, since a
 * CA cannot be installed into the headless profile here.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { buildIfStale, launchChromium, shot } from '../helpers/panel-browser.js';
import { OAUTH_ADMIN_TOKEN, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { ensureLocalTls } from '../../server/ops/tls.js';

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
    await page.goto(`${server.url}/admin/applications/outline/connect`);
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

describe('LAN TLS screen with GATEHOUSE_TLS=acme', () => {
  it('shows the ACME state and its last error in words, and asks for a certificate with Renew now', async () => {
    // An "ACME server" that answers 404 to everything, so the attempt fails at once and says why.
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-acme-e2e-'));
    const fake = ensureLocalTls(join(dir, 'acme-server'), [], new Date());
    const acmeServer = createHttpsServer({ key: fake.key, cert: fake.cert }, (_req, res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"no such directory"}'));
    await new Promise<void>((resolve) => acmeServer.listen(0, '127.0.0.1', resolve));
    writeFileSync(join(dir, 'tsig.secret'), 'c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=');
    writeFileSync(join(dir, 'acme-ca.pem'), fake.caPem!);
    const acme = await startOAuthServer({
      GATEHOUSE_TLS: 'acme',
      GATEHOUSE_ACME_DOMAINS: 'id.home.example.com',
      GATEHOUSE_ACME_AGREE_TOS: 'yes',
      GATEHOUSE_ACME_DIRECTORY: `https://127.0.0.1:${(acmeServer.address() as { port: number }).port}/dir`,
      GATEHOUSE_ACME_CA_FILE: join(dir, 'acme-ca.pem'),
      GATEHOUSE_ACME_RFC2136_SERVER: '127.0.0.1:1',
      GATEHOUSE_ACME_RFC2136_TSIG_NAME: 'gatehouse-acme',
      GATEHOUSE_ACME_RFC2136_TSIG_SECRET_FILE: join(dir, 'tsig.secret'),
    });
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      await expect.poll(() => acme.running.app.ctx.lanTrust.acme()?.status, { timeout: 30_000 }).toBe('failed');
      const page = await context.newPage();
      await page.goto(`${acme.url}/admin/`);
      await page.getByLabel('Admin token').fill(OAUTH_ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Use the admin token' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.goto(`${acme.url}/admin/lan-tls`);
      const card = page.getByTestId('tls-acme');
      await card.waitFor();
      expect(await card.getByTestId('acme-status').textContent()).toBe('The last attempt failed');
      expect(await card.getByTestId('acme-error').textContent()).toMatch(/^Why: .*404.* The current certificate keeps serving; Gatehouse tries again by itself\.$/);
      // The local certificate serves meanwhile: the CA card and its trust page are there.
      await page.getByTestId('trust-qr').waitFor();
      await shot(page, 'lan-tls-acme');
      await card.getByRole('button', { name: 'Renew now' }).click();
      await page.getByText('Asked the ACME server for a certificate; this screen shows the result.').waitFor();
    } finally {
      await context.close();
      await acme.stop();
      await new Promise((resolve) => acmeServer.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
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
