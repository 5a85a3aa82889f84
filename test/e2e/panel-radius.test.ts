/**
 * A person's network access on their panel page (spec radius.md, issue 43 item 5: "Accounting
 * sessions appear on the person's page"), in headless Chromium against a real server with
 * GATEHOUSE_RADIUS=on on free loopback ports: a PAP Access-Accept and an accounting Start and Stop
 * over UDP (the server's own codec as the NAS), then the person's page lists the session (the
 * application, the gear, the device, the data) and the network certificate an administrator
 * issued, which the page revokes after a confirmation. The Overview shows the listener's
 * addresses, and the application's RADIUS tab (Connect) makes a client a new secret, shown once,
 * with which the server answers at once and without which it drops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { adminJsonOf, OAUTH_ADMIN_TOKEN, PASSWORD, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { buildIfStale, launchChromium, panelContext, shot } from '../helpers/panel-browser.js';
import { exchange, pap } from '../helpers/radius.js';
import { Attr, Code, decodePacket, encodeRequest, integer } from '../../server/radius/codec.js';

let server: OAuthServer;
let browser: Browser;
let page: Page;
let personId: string;
let secret: string;
let port: number;
let acctPort: number;
let appPassword: string;

const adminJson = <T,>(method: string, path: string, body?: unknown) => adminJsonOf<T>(server, method, path, body);

beforeAll(async () => {
  buildIfStale();
  server = await startOAuthServer({ GATEHOUSE_RADIUS: 'on', GATEHOUSE_RADIUS_HOST: '127.0.0.1', GATEHOUSE_RADIUS_PORT: '0', GATEHOUSE_RADIUS_ACCT_PORT: '0' });
  const state = server.running.radius!.state();
  port = Number(state.auth!.split(':')[1]);
  acctPort = Number(state.accounting!.split(':')[1]);
  const created = await adminJson<{ radiusSecrets: Record<string, string> }>('POST', '/api/admin/applications', {
    id: 'wifi', name: 'Office Wi-Fi', audience: 'https://wifi.example.com', redirectUris: ['https://wifi.example.com/cb'],
    clientType: 'spa', authPolicy: { signup_policy: 'open' }, radius: { clients: [{ name: 'Office APs', address: '127.0.0.1' }] },
  });
  secret = created.radiusSecrets['Office APs']!;
  const signedUp = await fetch(`${server.url}/api/auth/sign-up/email`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD, name: 'Ada', applicationId: 'wifi' }),
  });
  expect(signedUp.status).toBe(201);
  personId = ((await signedUp.json()) as { user: { id: string } }).user.id;
  const cookie = signedUp.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='))!.split(';')[0]!;
  const made = await fetch(`${server.url}/api/me/app-passwords`, {
    method: 'POST', headers: { cookie, 'content-type': 'application/json', origin: server.url },
    body: JSON.stringify({ applicationId: 'wifi', name: 'Laptop Wi-Fi' }),
  });
  expect(made.status).toBe(201);
  appPassword = ((await made.json()) as { password: string }).password;
  browser = await launchChromium();
  page = await (await panelContext(browser, OAUTH_ADMIN_TOKEN)).newPage();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("the person's page", () => {
  it('lists the RADIUS session the gear reported and the network certificate, and revokes it', async () => {
    const accepted = (await pap(port, secret, 'ada@example.com', appPassword))!;
    expect(accepted.code).toBe(Code.accessAccept);
    const klass = accepted.attributes.find((a) => a.type === Attr.class)!.value;
    const report = (status: number, seconds: number) =>
      encodeRequest(Code.accountingRequest, status, Buffer.alloc(16), [
        { type: Attr.acctStatusType, value: integer(status) },
        { type: Attr.acctSessionId, value: Buffer.from('sess-7') },
        { type: Attr.userName, value: Buffer.from('ada') },
        { type: Attr.class, value: klass },
        { type: Attr.callingStationId, value: Buffer.from('02-00-00-00-00-07') },
        { type: Attr.acctSessionTime, value: integer(seconds) },
        { type: Attr.acctInputOctets, value: integer(2000 * seconds) },
      ], Buffer.from(secret));
    expect(decodePacket((await exchange(acctPort, report(1, 0)))!).code).toBe(Code.accountingResponse);
    expect(decodePacket((await exchange(acctPort, report(2, 60)))!).code).toBe(Code.accountingResponse);
    const issued = await server.admin('POST', `/api/admin/people/${personId}/network-certificates`, { applicationId: 'wifi', name: 'Ada laptop' });
    expect(issued.status).toBe(201);

    await page.goto(`${server.url}/admin/people/${personId}`);
    await page.getByRole('heading', { name: 'Wi-Fi and VPN sessions (RADIUS, 30 days)' }).waitFor();
    const sessions = page.getByRole('region', { name: 'Wi-Fi and VPN sessions (RADIUS, 30 days)' }).locator('table');
    await sessions.locator('tbody tr').first().waitFor();
    const cells = await sessions.locator('tbody tr').first().locator('td').allTextContents();
    expect(cells[0]).toBe('Office Wi-Fi');
    expect(cells[1]).toBe('Office APs');
    expect(cells[2]).toBe('02-00-00-00-00-07');
    expect(cells[5]).not.toBe('');
    expect(cells[6]).toBe('120 kB');
    expect(await sessions.locator('tbody tr').count()).toBe(1);

    const certificates = page.getByRole('region', { name: 'Network certificates' }).locator('table');
    const row = certificates.locator('tbody tr').filter({ hasText: 'Ada laptop' });
    await row.waitFor();
    expect((await row.locator('td').allTextContents()).slice(1, 2)).toEqual(['Office Wi-Fi']);
    expect(await row.locator('td').nth(4).textContent()).toBe('valid');
    await shot(page, 'person-network');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByText('Revoke this network certificate?').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => row.locator('td').nth(4).textContent()).toMatch(/^revoked /);
    const listed = await adminJson<{ networkCertificates: { name: string; revokedAt: string | null }[] }>('GET', `/api/admin/people/${personId}/network-certificates`);
    expect(listed.networkCertificates).toEqual([expect.objectContaining({ name: 'Ada laptop', revokedAt: expect.any(String) })]);
  });

  it("the Overview shows the listener; the application's RADIUS tab makes a client a new secret, shown once, which the server takes at once", async () => {
    await page.goto(`${server.url}/admin/`);
    const status = page.getByTestId('radius-status');
    await status.waitFor();
    const { auth, accounting } = server.running.radius!.state();
    await expect.poll(() => status.locator('code').allTextContents()).toEqual([auth, accounting]);

    await page.goto(`${server.url}/admin/applications/wifi/connect/radius`);
    const form = page.getByTestId('radius');
    await form.waitFor();
    expect(await form.locator('textarea[name="radiusClients"]').inputValue()).toBe('Office APs = 127.0.0.1');
    await page.getByRole('button', { name: 'New secret' }).click();
    await page.getByRole('dialog').getByText('Make a new shared secret?').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Make new secret' }).click();
    const shown = page.getByTestId('copy-office-aps');
    await shown.waitFor();
    const fresh = (await shown.textContent())!.trim();
    expect(fresh.length).toBeGreaterThanOrEqual(22);
    expect(fresh).not.toBe(secret);
    await shot(page, 'application-radius');
    expect((await pap(port, fresh, 'ada@example.com', appPassword))!.code).toBe(Code.accessAccept);
    expect(await pap(port, secret, 'ada@example.com', appPassword)).toBeUndefined();
    secret = fresh;
  });
});

