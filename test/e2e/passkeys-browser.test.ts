/**
 * Passkeys in real Chromium with its virtual authenticator (CDP `WebAuthn.enable`,
 * `WebAuthn.addVirtualAuthenticator` with a resident key and user verification), against a real
 * server whose issuer is `http://localhost:<port>` (WebAuthn refuses 127.0.0.1): registration
 * from the account page, passkey-first sign-in (and the conditional-UI autofill it offers), a
 * passkey as the second step after a password, a WebAuthn refusal (`NotAllowedError`) and a
 * passkey already on the device (`InvalidStateError`) shown in words, and an unknown credential
 * answered 401 `passkey_not_recognised`. The pages keep their CSP: no violation is reported.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { PASSWORD, createClient, signUpCookie, type OAuthServer } from '../helpers/oauth-server.js';
import { startLocalhostServer } from '../helpers/localhost-server.js';
import { buildIfStale, launchChromium, shot } from '../helpers/panel-browser.js';

let server: OAuthServer;
let browser: Browser;

beforeAll(async () => {
  buildIfStale();
  server = await startLocalhostServer();
  browser = await launchChromium();
  await createClient(server, {
    id: 'notes', name: 'Notes', audience: 'https://notes.example/api', clientType: 'spa', redirectUris: ['http://127.0.0.1:5173/cb'],
  });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

interface Device {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
  authenticatorId: string;
  cspErrors: string[];
}

/** A browser context with a virtual platform authenticator: resident keys, user verification, always verified. */
async function device(): Promise<Device> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cspErrors: string[] = [];
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) cspErrors.push(msg.text());
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { context, page, cdp, authenticatorId, cspErrors };
}

async function passwordSignIn(page: Page, email: string) {
  await page.goto(`${server.url}/sign-in`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

async function signOut(page: Page) {
  await page.goto(`${server.url}/account`);
  await Promise.all([page.waitForURL('**/account?notice=signed_out'), page.getByRole('button', { name: 'Sign out' }).first().click()]);
}

const passkeysOnServer = async (cookieHeader: string) =>
  ((await (await fetch(`${server.url}/api/me/security`, { headers: { cookie: cookieHeader } })).json()) as { passkeys: unknown[] }).passkeys;

describe('passkeys in Chromium with a virtual authenticator', () => {
  it('registers from the account page, then signs in with it first, and as the second step after a password', async () => {
    await signUpCookie(server, 'ada@example.com', 'notes');
    const d = await device();
    const { page } = d;

    // The sign-in page offers passkeys: a button, and the e-mail field's autofill (conditional mediation).
    await page.goto(`${server.url}/sign-in`);
    await expect(page.getByLabel('E-mail').getAttribute('autocomplete')).resolves.toBe('username webauthn');
    await expect(page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible()).resolves.toBe(true);
    await page.waitForFunction(() => document.documentElement.dataset.passkeyAutofill === 'on');
    await shot(page, 'sign-in-with-passkey');
    await passwordSignIn(page, 'ada@example.com');
    await page.waitForURL(`${server.url}/account`);
    const security = page.locator('section#security');
    await security.getByLabel('Name for a new passkey').fill('Laptop');
    await security.getByRole('button', { name: 'Add a passkey' }).click();
    // The first second factor comes with recovery codes, shown once.
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    await expect(page.locator('[data-recovery-codes] li').count()).resolves.toBe(10);
    const download = page.getByRole('link', { name: 'Download as a text file' });
    await expect(download.getAttribute('download')).resolves.toBe('gatehouse-recovery-codes.txt');
    await shot(page, 'passkey-recovery-codes');
    await Promise.all([page.waitForURL('**/account?notice=passkey_added#security'), page.getByRole('link', { name: 'Continue' }).click()]);
    await expect(page.locator('.notice').textContent()).resolves.toBe('The passkey was added: you can sign in with it from now on.');
    await expect(security.locator('li[data-passkey] strong').textContent()).resolves.toBe('Laptop');
    await shot(page, 'account-security-passkey');

    // The authenticator holds one discoverable credential for this RP ID.
    const { credentials } = await d.cdp.send('WebAuthn.getCredentials', { authenticatorId: d.authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]).toMatchObject({ isResidentCredential: true, rpId: 'localhost' });

    // Adding it again from the same device: InvalidStateError, in words.
    await security.getByRole('button', { name: 'Add a passkey' }).click();
    await expect.poll(() => security.locator('[data-webauthn-status]').textContent()).toBe('This device already holds a passkey for your account.');

    // Passkey-first through conditional mediation: the e-mail field offers the passkey in its
    // autofill, and the virtual authenticator (which answers by itself) picks it: no click at all.
    await signOut(page);
    const answered = page.waitForResponse((r) => r.url() === `${server.url}/api/auth/passkey`);
    await page.goto(`${server.url}/sign-in`);
    expect((await answered).status()).toBe(200);
    await page.waitForURL(`${server.url}/account`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Ada Lovelace');
    expect(d.cspErrors).toEqual([]);

    // Second step after a password, on another device that holds the same key as a non-discoverable
    // credential (so its sign-in page offers nothing to autofill): the password alone is not enough.
    const [key] = (await d.cdp.send('WebAuthn.getCredentials', { authenticatorId: d.authenticatorId })).credentials;
    const phone = await device();
    await phone.cdp.send('WebAuthn.addCredential', { authenticatorId: phone.authenticatorId, credential: { ...key!, isResidentCredential: false } });
    await passwordSignIn(phone.page, 'ada@example.com');
    await phone.page.waitForURL(`${server.url}/sign-in/second-factor`);
    await expect(phone.page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Confirm it is you');
    await shot(phone.page, 'second-factor-page');
    await Promise.all([phone.page.waitForURL(`${server.url}/account`), phone.page.getByRole('button', { name: 'Use a passkey' }).click()]);
    await expect(phone.page.locator('h1').textContent()).resolves.toBe('Ada Lovelace');
    expect(phone.cspErrors).toEqual([]);
    await phone.context.close();
    expect(d.cspErrors).toEqual([]);
    await d.context.close();
  });

  it('shows a refused prompt (NotAllowedError) in words, and answers an unknown passkey with 401 passkey_not_recognised', async () => {
    const cookie = await signUpCookie(server, 'grace@example.com', 'notes');
    const d = await device();
    const { page } = d;
    await passwordSignIn(page, 'grace@example.com');
    await page.waitForURL(`${server.url}/account`);
    await page.locator('section#security').getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    expect(await passkeysOnServer(cookie)).toHaveLength(1); // her other session (from signing up) sees it too
    await signOut(page);

    // The user does not verify: the browser refuses with NotAllowedError.
    await d.cdp.send('WebAuthn.setUserVerified', { authenticatorId: d.authenticatorId, isUserVerified: false });
    await page.goto(`${server.url}/sign-in`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    const status = page.locator('[data-webauthn-status]');
    await expect.poll(() => status.textContent()).toBe('The passkey prompt was closed or timed out. Try again.');
    await shot(page, 'passkey-not-allowed');

    // The administrator resets her factors: the authenticator still holds the passkey, the server does not.
    const users = (await (await server.admin('GET', '/api/admin/applications/notes/users?q=grace')).json()) as { users: { id: string }[] };
    const reset = await server.admin('DELETE', `/api/admin/applications/notes/users/${users.users[0]!.id}/second-factor`);
    expect(reset.status).toBe(204);
    await d.cdp.send('WebAuthn.setUserVerified', { authenticatorId: d.authenticatorId, isUserVerified: true });
    await page.goto(`${server.url}/sign-in`);
    const answered = page.waitForResponse((r) => r.url() === `${server.url}/api/auth/passkey`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    const res = await answered;
    expect(res.status()).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'passkey_not_recognised', status: 401 });
    await expect.poll(() => status.textContent()).toBe('This passkey is not known here: it may have been removed. Sign in another way.');
    expect(page.url()).toBe(`${server.url}/sign-in`);
    expect(d.cspErrors).toEqual([]);
    await d.context.close();
  });
});
