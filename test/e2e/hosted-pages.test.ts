/**
 * The hosted pages in headless Chromium against a real server with real SMTP (issue 25):
 * - axe-core finds no serious or critical violation on any hosted page, light and dark (each page
 *   loaded once, then checked in each scheme);
 * - German and French pages (Accept-Language, then the switch's cookie) and `<html lang>`;
 * - the access-refused page names the application and the reason, and its "Back to" link
 *   brings the OAuth error to the application's callback;
 * - the lock-out: a warning on the attempt before it, then "Try again in 30 seconds" counting
 *   down, focus on the password field, "Forgot password?" offered;
 * - branding: the accent colour on the primary button and the logo shown; a failing colour refused;
 * - show-password toggle and the strength hint under a new password;
 * - a screenshot of each main screen under test/e2e/screenshots/ (hosted-*.png).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PASSWORD, createClient, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { buildIfStale, checkSchemes, expectAxeControlReported, launchChromium, settled, shot, watchRequests } from '../helpers/panel-browser.js';
import { decodeQuotedPrintable, startSmtp } from '../helpers/smtp.js';
import { Secret, TOTP } from 'otpauth';

const ACCENT = '#1d4ed8';
const LOGO = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 48 48"><circle cx="24" cy="24" r="22" fill="#1d4ed8"/><path d="M14 24h20M24 14v20" stroke="#fff" stroke-width="4"/></svg>';

let server: OAuthServer;
let smtp: Awaited<ReturnType<typeof startSmtp>>;
let browser: Browser;
let sample: Server;
let callback: string;
let inviteUrl = '';
let deeInviteUrl = '';

async function admin<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await server.admin(method, path, body);
  expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

function authorizeUrl(clientId: string, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: callback, scope: 'openid profile email', state: 'st-1',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', ...extra,
  });
  return `${server.url}/api/auth/oauth2/authorize?${params}`;
}

async function context(scheme: 'light' | 'dark', locale = 'en-GB'): Promise<BrowserContext> {
  return browser.newContext({ viewport: { width: 1024, height: 800 }, colorScheme: scheme, locale });
}

/** A context signed in as `email` through the hosted sign-in page. */
async function signedIn(scheme: 'light' | 'dark', email: string): Promise<BrowserContext> {
  const ctx = await context(scheme);
  const page = await ctx.newPage();
  await page.goto(`${server.url}/sign-in`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await Promise.all([page.waitForURL(`${server.url}/account**`), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
  await page.close();
  return ctx;
}

/** Opens the application's authorization request, signing in to its realm on the way when asked. */
async function throughSignIn(page: Page, url: string, email: string): Promise<void> {
  await page.goto(url);
  if (new URL(page.url()).pathname !== '/sign-in') return;
  const address = page.getByLabel('E-mail');
  if (await address.count()) await address.fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await Promise.all([page.waitForURL((u) => u.pathname !== '/sign-in'), page.locator('form button[type=submit]').first().click()]);
}


beforeAll(async () => {
  buildIfStale();
  smtp = await startSmtp();
  // The screens sign in more than the per-address budget allows in a minute (its own tests are elsewhere).
  server = await startOAuthServer({ SMTP_URL: smtp.url, MAIL_FROM: 'Gatehouse <noreply@gatehouse.test>', GATEHOUSE_SIGN_IN_RATE_LIMIT: '1000' });
  sample = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('the sample app'));
  await new Promise<void>((resolve) => sample.listen(0, '127.0.0.1', resolve));
  callback = `http://127.0.0.1:${(sample.address() as AddressInfo).port}/callback`;

  // Team Wiki: invitation-only, branded, explicit consent. Notes: open, implicit.
  await createClient(server, {
    id: 'team-wiki', name: 'Team Wiki', audience: 'https://wiki.example/api', clientType: 'spa', redirectUris: [callback],
    authPolicy: { signup_policy: 'invite_only' }, branding: { accentColor: ACCENT }, consent: 'explicit',
  });
  const logo = await fetch(`${server.url}/api/admin/applications/team-wiki/logo`, {
    method: 'PUT', headers: { authorization: `Bearer oauth-test-admin-token-0123456789`, 'content-type': 'image/svg+xml' }, body: LOGO,
  });
  expect(logo.status).toBe(200);
  await createClient(server, { id: 'notes', name: 'Notes', audience: 'https://notes.example/api', clientType: 'spa', redirectUris: [callback] });
  // A device's application (the device confirmation page) and one that requires a second factor (the enrolment page).
  await createClient(server, {
    id: 'lobby-tv', name: 'Lobby TV', audience: 'https://tv.example/api', clientType: 'native', redirectUris: ['http://127.0.0.1/cb'],
    grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'],
  });
  await createClient(server, { id: 'vault', name: 'Vault', audience: 'https://vault.example/api', clientType: 'spa', redirectUris: [callback], authPolicy: { signup_policy: 'open', mfa: 'required' } });
  for (const email of ['ada@example.com', 'bob@example.com', 'cy@example.com']) {
    const res = await fetch(`${server.url}/api/auth/sign-up/email`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD, name: email.split('@')[0], applicationId: 'notes' }),
    });
    expect(res.status).toBe(201);
  }
  // Bob is invited to Team Wiki (and accepts, then meets its consent page).
  const invited = await admin<{ invitations: { acceptUrl: string }[] }>('POST', '/api/admin/applications/team-wiki/invitations', { emails: ['bob@example.com'], role: 'member' });
  inviteUrl = invited.invitations[0]!.acceptUrl;
  deeInviteUrl = (await admin<{ invitations: { acceptUrl: string }[] }>('POST', '/api/admin/applications/team-wiki/invitations', { emails: ['dee@example.com'], role: 'member' })).invitations[0]!.acceptUrl;
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => sample?.close(resolve));
  await server?.stop();
  await smtp?.close();
});

/** The latest link to `path` mailed to `to` (the text part's, in full). */
async function mailedLink(to: string, path: string): Promise<string> {
  const pattern = new RegExp(`${server.url.replace(/[.:/]/g, '\\$&')}${path}\\?[^\\s"<]+`);
  for (let waited = 0; waited < 5000; waited += 50) {
    const mail = smtp.received.filter((m) => m.to.includes(to)).map((m) => pattern.exec(decodeQuotedPrintable(m.raw))?.[0]).filter(Boolean).at(-1);
    if (mail) return mail;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${path} link mailed to ${to}`);
}

/** The main hosted screens: name, how to reach it (given a context), and a text it shows. */
type Screen = [name: string, open: (page: Page) => Promise<unknown>, ready: string];
const anonymousScreens: Screen[] = [
  ['sign-in', (p) => p.goto(`${server.url}/sign-in`), 'Forgot password?'],
  ['sign-in-branded', (p) => p.goto(authorizeUrl('team-wiki')), 'open to invited people only'],
  ['sign-up', (p) => p.goto(`${server.url}/sign-up?client_id=notes`), 'At least 10 characters'],
  ['forgot-password', (p) => p.goto(`${server.url}/forgot-password`), 'Send the link'],
  ['oauth-error', (p) => p.goto(authorizeUrl('no-such-app')), 'This sign-in request cannot continue'],
  ['invitation', (p) => p.goto(deeInviteUrl), 'Join Team Wiki'],
  ['not-found', (p) => p.goto(`${server.url}/no/such/page`), 'Page not found'],
  ['device-entry', (p) => p.goto(`${server.url}/device`), 'Connect a device'],
  ['signed-out', (p) => p.goto(`${server.url}/api/auth/oauth2/end-session`), 'You are signed out'],
  ['verify-email', async (p) => p.goto(await mailedLink('cy@example.com', '/verify-email')), 'Confirm that'],
  ['reset-password', async (p) => {
    const asked = await fetch(`${server.url}/api/auth/password-reset`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'cy@example.com' }) });
    expect(asked.status).toBe(202);
    await p.goto(await mailedLink('cy@example.com', '/reset-password'));
  }, 'Choose a new password'],
];
const adaScreens: Screen[] = [
  ['account', (p) => p.goto(`${server.url}/account`), 'Your e-mail address is not confirmed yet'],
  ['access-refused', (p) => throughSignIn(p, authorizeUrl('team-wiki'), 'ada@example.com'), 'You cannot use Team Wiki with this account'],
  ['sign-out', (p) => p.goto(`${server.url}/api/auth/oauth2/end-session`), 'Sign out of Gatehouse on this device?'],
  ['device-confirm', async (p) => {
    const started = await fetch(`${server.url}/api/auth/oauth2/device_authorization`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: 'lobby-tv', scope: 'openid' }),
    });
    expect(started.status).toBe(200);
    await throughSignIn(p, ((await started.json()) as { verification_uri_complete: string }).verification_uri_complete, 'ada@example.com');
  }, 'Connect a device to Lobby TV?'],
  ['second-factor-enrol', (p) => throughSignIn(p, authorizeUrl('vault'), 'ada@example.com'), 'Set up a second factor'],
  ['device-approved', (p) => decideDevice(p, 'Approve'), 'Device connected'],
  ['device-denied', (p) => decideDevice(p, 'Deny'), 'Sign-in denied'],
];

/** Starts a device sign-in for Lobby TV and answers it on the device page with `button`. */
async function decideDevice(page: Page, button: 'Approve' | 'Deny'): Promise<void> {
  const started = await fetch(`${server.url}/api/auth/oauth2/device_authorization`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: 'lobby-tv', scope: 'openid' }),
  });
  expect(started.status).toBe(200);
  await throughSignIn(page, ((await started.json()) as { verification_uri_complete: string }).verification_uri_complete, 'ada@example.com');
  await Promise.all([page.waitForURL((u) => u.pathname.startsWith('/device')), page.getByRole('button', { name: button, exact: true }).click()]);
}

/** Fay (one per scheme) sets up an authenticator app when Vault asks for a second factor: the new recovery codes page. */
async function enrolFay(page: Page, email: string): Promise<void> {
  await throughSignIn(page, authorizeUrl('vault'), email);
  const secret = (await page.locator('[data-totp-key]').textContent())!.trim();
  await page.getByLabel('Code from the app').fill(new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate());
  await page.getByRole('button', { name: 'Confirm', exact: true }).click();
}

async function visit(page: Page, screen: Screen) {
  watchRequests(page);
  await screen[1](page);
  await page.getByText(screen[2], { exact: false }).first().waitFor({ timeout: 15_000 });
  await settled(page);
}

describe('every hosted page', () => {
  it('passes axe-core (no serious or critical violation) in the light and in the dark scheme', async () => {
    const found: Record<string, string[]> = {};
    // Each screen reached once, then photographed and checked in each scheme.
    const check = async (page: Page, screen: Screen) => {
      await visit(page, screen);
      await checkSchemes(page, `hosted-${screen[0]}`, (scheme, violations) => (found[`${screen[0]} (${scheme})`] = violations));
    };
    const anonymous = await context('light');
    const page = await anonymous.newPage();
    await visit(page, anonymousScreens[0]!);
    await expectAxeControlReported(page);
    for (const screen of anonymousScreens) await check(page, screen);
    // The lock-out screen (a wrong password five times for Cy).
    for (let i = 0; i < 5; i++) {
      await page.goto(`${server.url}/sign-in`);
      await page.getByLabel('E-mail').fill('cy+locked@example.com');
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await settled(page);
    }
    await page.getByText('Try again in').waitFor();
    await checkSchemes(page, 'hosted-lock-out', (scheme, violations) => (found[`lock-out (${scheme})`] = violations));
    await anonymous.close();

    const ada = await signedIn('light', 'ada@example.com');
    const adaPage = await ada.newPage();
    for (const screen of adaScreens) await check(adaPage, screen);
    await ada.close();

    // "You have joined", then the consent page, as Bob joins Team Wiki.
    const bob = await signedIn('light', 'bob@example.com');
    const bobPage = await bob.newPage();
    await check(bobPage, ['joined', async (p) => {
      await p.goto(inviteUrl);
      await Promise.all([p.waitForURL((u) => u.pathname === '/invite/joined/team-wiki'), p.getByRole('button', { name: 'Accept and join Team Wiki' }).click()]);
    }, 'You have joined Team Wiki']);
    await check(bobPage, ['consent', (p) => throughSignIn(p, authorizeUrl('team-wiki'), 'bob@example.com'), 'Allow Team Wiki?']);
    await bob.close();

    // The recovery codes shown after enrolling, then the code step of Fay's next sign-in.
    const fay = 'fay@example.com';
    const signUp = await fetch(`${server.url}/api/auth/sign-up/email`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: fay, password: PASSWORD, name: 'Fay', applicationId: 'notes' }),
    });
    expect(signUp.status).toBe(201);
    const fayContext = await signedIn('light', fay);
    await check(await fayContext.newPage(), ['recovery-codes', (p) => enrolFay(p, fay), 'Your recovery codes']);
    await fayContext.close();
    const later = await context('light');
    await check(await later.newPage(), ['second-factor-code', async (p) => {
      await p.goto(`${server.url}/sign-in`);
      await p.getByLabel('E-mail').fill(fay);
      await p.getByLabel('Password').fill(PASSWORD);
      await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    }, 'Code from your authenticator app']);
    await later.close();
    expect(found).toEqual({});
  });
});

describe('translations', () => {
  it('serves German by Accept-Language and French once chosen in the switch, with <html lang>', async () => {
    const ctx = await context('light', 'de-DE');
    const page = await ctx.newPage();
    watchRequests(page);
    await page.goto(authorizeUrl('team-wiki'));
    expect(await page.getAttribute('html', 'lang')).toBe('de');
    expect(await page.locator('h1').textContent()).toBe('Bei Team Wiki anmelden');
    await expect(page.getByRole('button', { name: 'Anmelden', exact: true }).isVisible()).resolves.toBe(true);
    expect(await page.title()).toBe('Bei Team Wiki anmelden · Gatehouse');
    await shot(page, 'hosted-sign-in-de');
    await page.getByRole('link', { name: 'Français' }).click();
    await settled(page);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect(await page.getAttribute('html', 'lang')).toBe('fr');
    expect(await page.locator('h1').textContent()).toBe('Se connecter à Team Wiki');
    await shot(page, 'hosted-sign-in-fr');
    // The choice is kept (a cookie) over the browser's German.
    await page.goto(`${server.url}/forgot-password`);
    expect(await page.getAttribute('html', 'lang')).toBe('fr');
    expect(await page.locator('h1').textContent()).toBe('Réinitialiser votre mot de passe');
    await ctx.close();
  });
});

describe('access refused', () => {
  it('names the application and the reason, offers another account, and its link back carries access_denied', async () => {
    const ctx = await signedIn('light', 'ada@example.com');
    const page = await ctx.newPage();
    const refusal = page.waitForResponse((r) => r.url().includes('/api/auth/oauth2/authorize') && r.status() === 403);
    await throughSignIn(page, authorizeUrl('team-wiki', { state: 'st-refused' }), 'ada@example.com');
    await refusal;
    expect(await page.locator('h1').textContent()).toBe('You cannot use Team Wiki with this account');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Team Wiki is invitation-only: ask its administrator for an invitation');
    await expect(page.getByRole('link', { name: 'Use another account' }).isVisible()).resolves.toBe(true);
    // Branded: the logo is shown.
    expect(await page.locator('.brand img').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0);
    await Promise.all([page.waitForURL(`${callback}?**`), page.getByRole('link', { name: 'Back to Team Wiki' }).click()]);
    const landed = new URL(page.url());
    expect(landed.searchParams.get('error')).toBe('access_denied');
    expect(landed.searchParams.get('state')).toBe('st-refused');
    expect(landed.searchParams.get('iss')).toBe(server.url);
    await ctx.close();
  });
});

describe('lock-out', () => {
  it('warns before the lock, then counts down "Try again in 30 seconds" with the password focused and "Forgot password?" offered', async () => {
    const ctx = await context('light');
    const page = await ctx.newPage();
    watchRequests(page);
    const attempt = async () => {
      await page.goto(`${server.url}/sign-in?client_id=notes`);
      await page.getByLabel('E-mail').fill('lock@example.com');
      await page.getByLabel('Password').fill('wrong guess');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await settled(page);
    };
    for (let i = 0; i < 4; i++) await attempt();
    await expect(page.locator('[data-lock-warning]').textContent()).resolves.toBe('One more wrong password and sign-in with this address pauses for 30 seconds.');
    await attempt();
    const lock = page.locator('#sign-in-lock');
    await expect(lock.textContent()).resolves.toMatch(/^Too many wrong passwords\. Try again in (30|29) seconds\.$/);
    // Focus is on the password field, and help is at hand.
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name)).toBe('password');
    await expect(page.getByRole('link', { name: 'Forgot password?' }).isVisible()).resolves.toBe(true);
    await shot(page, 'hosted-lock-out-countdown');
    // It counts down.
    await page.waitForFunction(() => /Try again in (2[0-7]) seconds/.test(document.querySelector('#sign-in-lock')?.textContent ?? ''), undefined, { timeout: 8_000 });
    await ctx.close();
  });
});

describe('branding', () => {
  it('puts the accent colour on the primary button and the logo on the page; a colour failing AA is refused', async () => {
    const ctx = await context('dark');
    const page = await ctx.newPage();
    await page.goto(authorizeUrl('team-wiki'));
    const button = page.getByRole('button', { name: 'Sign in', exact: true });
    expect(await button.evaluate((b) => getComputedStyle(b).backgroundColor)).toBe('rgb(29, 78, 216)');
    expect(await button.evaluate((b) => getComputedStyle(b).color)).toBe('rgb(255, 255, 255)');
    expect(await page.locator('.brand img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    await shot(page, 'hosted-branded-dark');
    // Another application keeps the default look.
    await page.goto(authorizeUrl('notes'));
    expect(await page.getByRole('button', { name: 'Sign in', exact: true }).evaluate((b) => getComputedStyle(b).backgroundColor)).not.toBe('rgb(29, 78, 216)');
    await ctx.close();

    const refused = await server.admin('PATCH', '/api/admin/applications/team-wiki', { branding: { accentColor: '#7dd3fc' } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { errors: { path: string; message: string }[] }).errors[0]).toEqual({
      path: 'body.branding.accentColor',
      message: "has a contrast of 1.66:1 with the buttons' white text; WCAG AA needs at least 4.5:1, so choose a darker colour",
    });
  });
});

describe('new passwords', () => {
  it('shows the rules, a show-password toggle and a strength hint', async () => {
    const ctx = await context('light');
    const page = await ctx.newPage();
    await page.goto(`${server.url}/sign-up?client_id=notes`);
    await expect(page.locator('#new-password-rules').textContent()).resolves.toBe('At least 10 characters. Longer is stronger: a few unrelated words work well. Rated at least “fair”. Common passwords are refused.');
    const field = page.locator('#new-password');
    await field.fill('password1');
    await page.locator('#new-password-strength').getByText('Strength: very weak').waitFor({ timeout: 15_000 });
    await field.fill('violet staircase kettle morning');
    await page.locator('#new-password-strength').getByText(/Strength: (strong|very strong)/).waitFor();
    const toggle = page.getByRole('button', { name: 'Show' });
    await toggle.click();
    expect(await field.getAttribute('type')).toBe('text');
    expect(await page.getByRole('button', { name: 'Hide' }).getAttribute('aria-pressed')).toBe('true');
    await shot(page, 'hosted-sign-up-strength');
    await ctx.close();
  });
});

describe('the control panel\'s hosted-pages settings', () => {
  it('saves an accent colour and the consent policy, shows a refused colour under its field, uploads and removes a logo', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await ctx.addInitScript((token) => sessionStorage.setItem('gatehouse.adminToken', token), 'oauth-test-admin-token-0123456789');
    const page = await ctx.newPage();
    // The hosted pages' look is the application's Advanced › Name and pages part.
    await page.goto(`${server.url}/admin/applications/notes/advanced/general`);
    const form = page.getByTestId('branding');
    await form.waitFor({ timeout: 15_000 });
    await form.getByLabel('Accent colour').fill('#ffcc00');
    await form.getByRole('button', { name: 'Save hosted pages' }).click();
    await form.getByText("has a contrast of 1.51:1 with the buttons' white text").waitFor();
    await form.getByLabel('Accent colour').fill('#0f766e');
    await form.getByRole('button', { name: 'Save hosted pages' }).click();
    await page.getByText('Hosted pages saved.').waitFor();
    // Whether people are asked to consent is part of the application's Access section.
    await page.goto(`${server.url}/admin/applications/notes/access`);
    const consent = page.getByTestId('consent');
    await consent.getByLabel(/Explicit/).check();
    await consent.getByRole('button', { name: 'Save consent' }).click();
    await page.getByText('Consent saved.').waitFor();
    const saved = (await (await server.admin('GET', '/api/admin/applications/notes')).json()) as { branding: { accentColor: string }; consent: string };
    expect(saved.branding.accentColor).toBe('#0f766e');
    expect(saved.consent).toBe('explicit');

    await page.goto(`${server.url}/admin/applications/notes/advanced/general`);
    await page.getByLabel('Logo', { exact: true }).setInputFiles({ name: 'logo.svg', mimeType: 'image/svg+xml', buffer: Buffer.from(LOGO) });
    await page.getByText('Logo uploaded.').waitFor();
    await page.getByRole('img', { name: 'Current logo' }).waitFor();
    await shot(page, 'panel-app-hosted-pages');
    await page.getByRole('button', { name: 'Remove logo' }).click();
    await page.getByText('Logo removed.').waitFor();
    expect(((await (await server.admin('GET', '/api/admin/applications/notes')).json()) as { branding: { logoUrl: null } }).branding.logoUrl).toBeNull();
    // Back as it was for the other tests.
    await server.admin('PATCH', '/api/admin/applications/notes', { branding: { accentColor: null }, consent: 'implicit' });
    await ctx.close();
  });
});
