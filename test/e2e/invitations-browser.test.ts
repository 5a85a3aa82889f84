/**
 * An invitation from e-mail to membership in a real browser: the administrator invites through
 * the API, a real SMTP server receives the e-mail, headless Chromium opens the link it carries,
 * creates the account on the invitation page and lands on the application's origin. A second
 * invitee who already has an account signs in on the page instead.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { PASSWORD, createClient, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { launchChromium } from '../helpers/panel-browser.js';
import { decodeQuotedPrintable, startSmtp } from '../helpers/smtp.js';

let server: OAuthServer;
let smtp: Awaited<ReturnType<typeof startSmtp>>;
let browser: Browser;
let sample: Server;
let sampleOrigin: string;

beforeAll(async () => {
  smtp = await startSmtp();
  server = await startOAuthServer({ SMTP_URL: smtp.url, SMTP_FROM: 'Gatehouse <noreply@gatehouse.test>' });
  sample = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('welcome to the sample app'));
  await new Promise<void>((resolve) => sample.listen(0, '127.0.0.1', resolve));
  sampleOrigin = `http://127.0.0.1:${(sample.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => sample?.close(resolve));
  await server?.stop();
  await smtp?.close();
});

function linkIn(raw: string): string {
  const text = decodeQuotedPrintable(raw);
  const match = /(http:\/\/127\.0\.0\.1:\d+\/invite\/ghi_[A-Za-z0-9_-]+)/.exec(text);
  expect(match, 'accept link in the e-mail').toBeTruthy();
  return match![1]!;
}

describe('invitation page in a real browser', () => {
  it('follows the e-mailed link, signs up with the e-mail fixed, and lands on the app', async () => {
    await createClient(server, {
      id: 'sample', name: 'Sample App', audience: 'https://sample.example/api', clientType: 'spa',
      redirectUris: [`${sampleOrigin}/callback`], authPolicy: { signup_policy: 'invite_only' },
    });
    await createClient(server, { id: 'other', name: 'Other', audience: 'https://other.example/api', redirectUris: ['https://other.example/cb'] });
    await signUpCookie(server, 'old@example.com', 'other');

    const res = await server.admin('POST', '/api/admin/applications/sample/invitations', {
      emails: ['new@example.com', 'old@example.com'], role: 'admin', message: 'Come and help with the launch.',
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { invitations: { email: string; emailSent: boolean }[] };
    expect(body.invitations.map((i) => i.emailSent)).toEqual([true, true]);
    // The invitation, not the verification e-mail an open sign-up also gets.
    const mailTo = (email: string) => smtp.received.find((m) => m.to.includes(email) && /^Subject: You are invited/m.test(m.raw))!;

    // A newcomer.
    const context = await browser.newContext();
    const page = await context.newPage();
    const cspErrors: string[] = [];
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspErrors.push(msg.text());
    });
    await page.goto(linkIn(mailTo('new@example.com').raw));
    await expect(page.locator('h1').textContent()).resolves.toBe('Join Sample App');
    await expect(page.locator('blockquote').textContent()).resolves.toBe('Come and help with the launch.');
    expect(await page.getByLabel('E-mail').inputValue()).toBe('new@example.com');
    expect(await page.getByLabel('E-mail').getAttribute('readonly')).not.toBeNull();
    await page.getByLabel('Name').fill('Nina New');
    await page.getByLabel('Password').fill(PASSWORD);
    // Accepting ends on "You have joined" (issue 33), whose button opens the app.
    await Promise.all([page.waitForURL(/\/invite\/joined\/sample$/), page.getByRole('button', { name: 'Create account and join' }).click()]);
    await expect(page.locator('h1').textContent()).resolves.toBe('You have joined Sample App');
    await Promise.all([page.waitForURL(`${sampleOrigin}/`), page.getByRole('link', { name: 'Open Sample App' }).click()]);
    expect(await page.textContent('body')).toBe('welcome to the sample app');
    expect(cspErrors).toEqual([]);
    await context.close();

    // Someone with an account already.
    const context2 = await browser.newContext();
    const page2 = await context2.newPage();
    await page2.goto(linkIn(mailTo('old@example.com').raw));
    await page2.getByLabel('Password').fill(PASSWORD);
    await Promise.all([page2.waitForURL(/\/invite\/joined\/sample$/), page2.getByRole('button', { name: 'Sign in and join' }).click()]);
    await expect(page2.locator('h1').textContent()).resolves.toBe('You have joined Sample App');
    // The spent link now says so.
    await page2.goto(linkIn(mailTo('old@example.com').raw));
    await expect(page2.locator('h1').textContent()).resolves.toBe('This invitation was already used');
    await context2.close();

    const users = (await (await server.admin('GET', '/api/admin/applications/sample/users')).json()) as { users: { email: string; role: string; name: string | null }[] };
    expect(users.users.map((u) => `${u.email}:${u.role}:${u.name}`)).toEqual(['new@example.com:admin:Nina New', 'old@example.com:admin:Ada Lovelace']);
  });
});
