/**
 * A real browser through the hosted pages: headless Chromium starts an authorization request
 * of a sample application, signs up (then, in a fresh browser, signs in) on Gatehouse's pages,
 * and lands on the application's callback with a code that the token endpoint accepts; then a
 * silent authorize in the same browser, and "Continue as …" for `prompt=login`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { PASSWORD, createClient, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { cspWatchedPage, launchChromium, shot } from '../helpers/panel-browser.js';

let server: OAuthServer;
let browser: Browser;
let sample: Server;
let callbackBase: string;

beforeAll(async () => {
  server = await startOAuthServer();
  // The sample application: its callback just acknowledges; the test reads the URL it landed on.
  sample = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('signed in to the sample app'));
  await new Promise<void>((resolve) => sample.listen(0, '127.0.0.1', resolve));
  callbackBase = `http://127.0.0.1:${(sample.address() as AddressInfo).port}/callback`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => sample?.close(resolve));
  await server?.stop();
});

function authorizeUrl(clientId: string, challenge: string, state: string) {
  const params = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: callbackBase, scope: 'openid profile',
    state, code_challenge: challenge, code_challenge_method: 'S256',
  });
  return `${server.url}/api/auth/oauth2/authorize?${params}`;
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function exchange(clientId: string, code: string, verifier: string) {
  const res = await fetch(`${server.url}/api/auth/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callbackBase, client_id: clientId, code_verifier: verifier }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as { access_token: string; id_token?: string };
}

const newPage = () => cspWatchedPage(browser);

describe('hosted sign-in in a real browser', () => {
  it('signs up, then signs in, through the hosted pages and lands on the callback with a code', async () => {
    const client = await createClient(server, {
      id: 'sample', name: 'Sample App', audience: 'https://sample.example/api', clientType: 'spa', redirectUris: [callbackBase],
    });

    // 1. A newcomer: authorize → sign-in page → "Create an account" → callback.
    const first = await newPage();
    const p1 = pkce();
    await first.page.goto(authorizeUrl(client.id, p1.challenge, 'state-one'));
    expect(new URL(first.page.url()).pathname).toBe('/sign-in');
    await expect(first.page.locator('h1').textContent()).resolves.toBe('Sign in to Sample App');
    await shot(first.page, 'sign-in');
    await first.page.getByRole('link', { name: 'Create an account' }).click();
    await first.page.getByLabel('Name').fill('Ada Lovelace');
    await first.page.getByLabel('E-mail').fill('ada@example.com');
    await first.page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([first.page.waitForURL(`${callbackBase}?**`), first.page.getByRole('button', { name: 'Create account' }).click()]);
    const landed1 = new URL(first.page.url());
    expect(landed1.searchParams.get('state')).toBe('state-one');
    expect(landed1.searchParams.get('iss')).toBe(server.url);
    const code1 = landed1.searchParams.get('code');
    expect(code1).toBeTruthy();
    expect(await first.page.textContent('body')).toBe('signed in to the sample app');
    expect((await exchange(client.id, code1!, p1.verifier)).access_token.split('.')).toHaveLength(3);
    expect(first.cspErrors).toEqual([]);
    await first.close();

    // 2. A fresh browser: wrong password first, then the right one.
    const second = await newPage();
    const p2 = pkce();
    await second.page.goto(authorizeUrl(client.id, p2.challenge, 'state-two'));
    await second.page.getByLabel('E-mail').fill('ada@example.com');
    await second.page.getByLabel('Password').fill('not the password');
    await second.page.getByRole('button', { name: 'Sign in' }).click();
    await expect(second.page.locator('.error').textContent()).resolves.toBe('The e-mail address or password is not correct.');
    await shot(second.page, 'sign-in-error');
    await second.page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([second.page.waitForURL(`${callbackBase}?**`), second.page.getByRole('button', { name: 'Sign in' }).click()]);
    const landed2 = new URL(second.page.url());
    expect(landed2.searchParams.get('state')).toBe('state-two');
    expect((await exchange(client.id, landed2.searchParams.get('code')!, p2.verifier)).access_token).toBeTruthy();

    // 3. Same browser again: the realm is authenticated, so authorize is silent.
    const p3 = pkce();
    await second.page.goto(authorizeUrl(client.id, p3.challenge, 'state-three'));
    expect(new URL(second.page.url()).searchParams.get('state')).toBe('state-three');

    // 4. prompt=login: the page offers "Continue as …" and asks for the password again.
    const p4 = pkce();
    await second.page.goto(`${authorizeUrl(client.id, p4.challenge, 'state-four')}&prompt=login`);
    await second.page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([
      second.page.waitForURL(`${callbackBase}?**`),
      second.page.getByRole('button', { name: 'Continue as Ada Lovelace' }).click(),
    ]);
    expect(new URL(second.page.url()).searchParams.get('state')).toBe('state-four');
    expect(second.cspErrors).toEqual([]);
    await second.close();
  });
});
