/**
 * The control panel's parts of spec grants-and-logout.md in headless Chromium against a real
 * server: choosing grant types with their help text (client credentials only for web apps), the
 * integration snippet for machine-to-machine tokens and device sign-in, and the "Single logout"
 * tab: setting the back-channel logout URL and seeing a real sign-out's delivery in the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import * as client from 'openid-client';
import { OAUTH_ADMIN_TOKEN, createClient, follow, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { buildIfStale, launchChromium, panelContext, shot } from '../helpers/panel-browser.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
const REDIRECT = 'http://127.0.0.1:3000/callback';

let server: OAuthServer;
let browser: Browser;
let page: Page;
let receiver: Receiver;
let secret = '';

beforeAll(async () => {
  buildIfStale();
  server = await startOAuthServer({ GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: '1' });
  receiver = await startReceiver();
  browser = await launchChromium();
  page = await (await panelContext(browser, OAUTH_ADMIN_TOKEN)).newPage();
  secret = (await createClient(server, { id: 'reports', name: 'Reports', audience: 'https://reports.example.com/api', clientType: 'web', redirectUris: [REDIRECT] })).clientSecret!;
  await createClient(server, { id: 'kiosk', name: 'Kiosk', audience: 'https://kiosk.example.com/api', clientType: 'spa', redirectUris: [REDIRECT] });
  await page.goto(`${server.url}/admin/`);
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await server?.stop();
});

async function appJson(id: string) {
  return (await (await server.admin('GET', `/api/admin/applications/${id}`)).json()) as { grantTypes: string[]; backchannelLogoutUri: string | null };
}

describe('grant types in the panel', () => {
  it('explains each grant and saves the chosen ones; the snippet shows how to call them', async () => {
    await page.goto(`${server.url}/admin/applications/reports/connect/oidc`);
    const grants = page.getByTestId('grant-types');
    await grants.waitFor();
    const text = (await grants.textContent()) ?? '';
    expect(text).toContain("The app's back end gets tokens for itself with its client secret, with no person involved");
    expect(text).toContain('a person approves it at the /device page');
    await page.getByLabel('Machine-to-machine (client credentials)').check();
    await page.getByLabel('Devices without a browser (device sign-in)').check();
    await page.getByRole('button', { name: 'Save connection settings' }).click();
    await page.getByText('Connection settings saved.').waitFor();
    expect((await appJson('reports')).grantTypes).toEqual(['authorization_code', 'refresh_token', 'client_credentials', DEVICE]);

    await page.getByText('For developers: the issuer, the client and token verification').click();
    const cc = page.getByTestId('client-credentials-example');
    await expect.poll(() => cc.textContent()).toContain('-d grant_type=client_credentials');
    expect(await cc.textContent()).toContain(`${server.url}/api/auth/oauth2/token`);
    expect(await page.getByTestId('device-example').textContent()).toContain('client.pollDeviceAuthorizationGrant(config, started)');
    await shot(page, 'grants-settings');

    // The curl line the snippet shows works as written, with the secret filled in.
    const res = await fetch(`${server.url}/api/auth/oauth2/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`reports:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&resource=https://reports.example.com/api',
    });
    expect(res.status).toBe(200);
  });

  it('offers client credentials only to web apps, and says why', async () => {
    await page.goto(`${server.url}/admin/applications/kiosk/connect/oidc`);
    const box = page.getByLabel('Machine-to-machine (client credentials)');
    await box.waitFor();
    expect(await box.isDisabled()).toBe(true);
    expect(await page.getByTestId('grant-types').textContent()).toContain('Only for web apps: a machine must keep the client secret.');
  });
});

describe('single logout in the panel', () => {
  it('sets the logout URL, and a real sign-out shows in the delivery log', async () => {
    await page.goto(`${server.url}/admin/applications/reports/advanced/logout`);
    await page.getByText('No logout URL set: nothing is sent.').waitFor();
    await page.getByLabel('Back-channel logout URL').fill(`${receiver.url}/logout`);
    await page.getByRole('button', { name: 'Save logout settings' }).click();
    await page.getByText('Logout settings saved.').waitFor();
    expect((await appJson('reports')).backchannelLogoutUri).toBe(`${receiver.url}/logout`);

    // A person signs in to Reports (openid-client), then signs out of Gatehouse.
    await server.admin('PATCH', '/api/admin/applications/reports/auth-policy', { signup_policy: 'open' });
    const cookie = await signUpCookie(server, 'ada@example.com', 'reports');
    const config = await client.discovery(new URL(server.url), 'reports', undefined, client.ClientSecretPost(secret), { execute: [client.allowInsecureRequests] });
    const hop = await follow(client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', state: 'st' }), cookie);
    await client.authorizationCodeGrant(config, hop.location!, { expectedState: 'st' });
    const out = await fetch(`${server.url}/api/auth/sign-out`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' } });
    expect(out.status).toBe(204);
    await receiver.waitFor(1);

    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return page.locator('tr', { hasText: 'Signed out' }).textContent();
      })
      .toContain('succeeded');
    await shot(page, 'single-logout');
  });
});
