/**
 * The panel's own sign-in in headless Chromium against a real server (spec
 * administrators-and-people.md): first run from /admin/ (the owner's account, then a TOTP
 * authenticator enrolled on the hosted pages, codes from otpauth), "Sign in with Gatehouse" with
 * password and TOTP, what a people manager sees, and the panel losing access when the role goes.
 * The panel's tokens stay in the page's memory: nothing in storage, cookies or the address bar.
 * Deep links survive the sign-in (issue 44): a /admin/... address loaded without a panel session
 * ends on that address after "Sign in with Gatehouse" (with a second-factor enrolment or a TOTP
 * step, or silently on a Gatehouse session), after a reload, and after the admin token; a
 * `return_to` tampered with on the way (on the hosted pages, which share the storage) ends at /admin/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Secret, TOTP } from 'otpauth';
import { OAUTH_ADMIN_TOKEN, PASSWORD, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { buildIfStale, firstPanelSignIn, launchChromium, seriousViolations, shot } from '../helpers/panel-browser.js';

let server: OAuthServer;
let browser: Browser;
let ownerSecret = '';

const code = (secret: string, offsetMs = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: Date.now() + offsetMs });

beforeAll(async () => {
  buildIfStale();
  server = await startOAuthServer({ GATEHOUSE_SIGN_UP_RATE_LIMIT: '100' });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
  return { context, page: await context.newPage() };
}

/** Everything this origin keeps in storage and cookies, as text: no panel token may be in it. */
async function keptByTheBrowser(context: BrowserContext, page: Page): Promise<string> {
  const storage = await page.evaluate(() => JSON.stringify({ session: { ...sessionStorage }, local: { ...localStorage } }));
  const cookies = JSON.stringify(await context.cookies());
  return `${storage} ${cookies}`;
}

/** The access token the panel sends, caught from its own admin API request. */
async function bearerOf(page: Page, action: () => Promise<unknown>): Promise<string> {
  const [request] = await Promise.all([page.waitForRequest((r) => r.url().includes('/api/admin/') && Boolean(r.headers().authorization)), action()]);
  return request.headers().authorization!.replace(/^Bearer /, '');
}

describe('panel sign-in through Gatehouse', () => {
  it('first run: creates the owner, enrols a TOTP authenticator, and lands signed in', async () => {
    const { context, page } = await newPage();
    await page.goto(`${server.url}/admin/`);
    await page.getByText('Nobody administers this Gatehouse by name yet.').waitFor();
    await shot(page, 'panel-sign-in-no-owner');
    await page.getByRole('button', { name: 'Create the owner account' }).click();
    await page.getByRole('heading', { name: 'Set up Gatehouse' }).waitFor();
    await page.getByLabel('Your e-mail address').fill('olive@example.com');
    await page.getByLabel('Your name').fill('Olive Owner');
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.getByLabel('The same password again').fill(PASSWORD);
    await page.getByLabel('Admin token').fill(OAUTH_ADMIN_TOKEN);
    await page.locator('#owner-password-hint').getByText('At least 10 characters, rated at least “fair”, not one of the most common passwords.').waitFor();
    await shot(page, 'panel-first-run');
    expect(await seriousViolations(page)).toEqual([]);

    // A common password is refused with the reason in words.
    await page.locator('input[name="password"]').fill('password123');
    await page.getByLabel('The same password again').fill('password123');
    await page.getByRole('button', { name: 'Create the owner' }).click();
    await page.getByText('This password is one of the most common passwords').waitFor();
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.getByLabel('The same password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create the owner' }).click();

    // The hosted pages ask for a second factor to be set up: the panel requires one.
    await page.getByRole('heading', { name: 'Set up a second factor' }).waitFor();
    await shot(page, 'panel-first-run-enrol');
    ownerSecret = (await page.locator('[data-totp-key]').textContent())!.trim();
    await page.getByLabel('Code from the app').fill(code(ownerSecret));
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    await page.getByRole('link', { name: 'Continue' }).click();

    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/admin/');
    expect(new URL(page.url()).search).toBe('');
    await page.getByTestId('signed-in-as').getByText('Olive Owner').waitFor();
    await expect(page.getByTestId('signed-in-as').getByText('Owner', { exact: true }).count()).resolves.toBe(1);
    await shot(page, 'panel-signed-in-owner');

    const token = await bearerOf(page, () => page.getByRole('link', { name: 'Administrators' }).click());
    expect(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())).toMatchObject({ aud: 'urn:gatehouse:admin-panel', client_id: '_gatehouse-panel' });
    await page.locator('tr[data-administrator="olive@example.com"]').waitFor();
    expect(await keptByTheBrowser(context, page)).not.toContain(token);
    expect(await keptByTheBrowser(context, page)).not.toContain(token.split('.')[2]!);

    // The owner is an admin member of applications created afterwards: Test sign-in works at once.
    const created = await server.admin('POST', '/api/admin/applications', { id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', redirectUris: ['https://notes.example.com/cb'] });
    expect(created.status).toBe(201);
    const users = (await (await server.admin('GET', '/api/admin/applications/notes/users')).json()) as { users: { email: string; role: string }[] };
    expect(users.users.map((u) => [u.email, u.role])).toEqual([['olive@example.com', 'admin']]);

    // A reload signs in again silently (the Gatehouse session answers prompt=none).
    await page.reload();
    await page.getByTestId('signed-in-as').getByText('Olive Owner').waitFor();
    await context.close();
  });

  it('signs in with password and TOTP; a people manager sees only their part; removing the role ends access', async () => {
    expect(ownerSecret).not.toBe('');
    // A people manager, created by the admin API with a password, who enrols at their first sign-in.
    const person = (await (await server.admin('POST', '/api/admin/people', { email: 'pat@example.com', name: 'Pat People', password: PASSWORD })).json()) as { id: string };
    expect((await server.admin('PUT', `/api/admin/administrators/${person.id}`, { role: 'people_manager' })).status).toBe(200);

    // The owner, again, in a new browser: password, then a TOTP code (the next step's: one code per step).
    const owner = await newPage();
    await owner.page.goto(`${server.url}/admin/`);
    await owner.page.getByRole('button', { name: 'Sign in with Gatehouse' }).waitFor();
    await shot(owner.page, 'panel-sign-in');
    await owner.page.getByRole('button', { name: 'Sign in with Gatehouse' }).click();
    await owner.page.getByLabel('E-mail').fill('olive@example.com');
    await owner.page.getByLabel('Password').fill(PASSWORD);
    await owner.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await owner.page.getByLabel('Code from your authenticator app').fill(code(ownerSecret, 30_000));
    await shot(owner.page, 'panel-sign-in-second-factor');
    await owner.page.getByLabel('Code from your authenticator app').press('Enter');
    await owner.page.getByTestId('signed-in-as').getByText('Olive Owner').waitFor();
    await owner.context.close();

    const { context, page } = await newPage();
    // A first sign-in: password, then the authenticator the panel requires.
    await firstPanelSignIn(page, server.url, { email: 'pat@example.com', password: PASSWORD, name: 'Pat People' });

    // Their navigation: people and groups; no administrators, settings, audit log or operations.
    const nav = page.locator('#main-nav');
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Overview', 'Applications', 'People', 'Groups']);
    // An application's page: its activity and its people, the sections the role covers.
    await nav.getByRole('link', { name: 'Applications' }).click();
    await page.getByRole('link', { name: 'Notes' }).click();
    const sections = page.getByRole('navigation', { name: 'Application sections' });
    await page.getByTestId('at-a-glance').waitFor();
    expect(await sections.getByRole('link').allTextContents()).toEqual(['Overview', 'People']);
    await sections.getByRole('link', { name: 'People' }).click();
    await page.getByText('olive@example.com').first().waitFor();
    await nav.getByRole('link', { name: 'People' }).click();
    await page.locator('tr[data-person="olive@example.com"]').waitFor();
    await shot(page, 'panel-people-manager');
    await page.locator('tr[data-person="olive@example.com"]').getByRole('link').click();
    await page.getByTestId('person-second-factors').getByText(/Authenticator app \(TOTP\) since/).waitFor();
    await page.getByRole('heading', { name: 'Sessions', exact: true }).waitFor();
    await shot(page, 'panel-person-managed');

    // The owner takes the role away: the panel's next call is refused and it goes back to the sign-in screen.
    expect((await server.admin('DELETE', `/api/admin/administrators/${person.id}`)).status).toBe(204);
    await nav.getByRole('link', { name: 'People' }).click();
    await page.getByText('Your sign-in has ended. Sign in again.').waitFor();
    await page.getByRole('button', { name: 'Sign in with Gatehouse' }).waitFor();
    await context.close();
  });
});

describe('deep links survive the sign-in', () => {
  const AUDIT = '/admin/audit-log?action=application.created';
  const CLAIMS = '/admin/applications/notes/claims';
  /** Where the panel is, as the address bar shows it (no code, no state). */
  const at = (page: Page) => `${new URL(page.url()).pathname}${new URL(page.url()).search}`;
  let adaSecret = '';

  async function owner(email: string, name: string) {
    const person = (await (await server.admin('POST', '/api/admin/people', { email, name, password: PASSWORD })).json()) as { id: string };
    expect((await server.admin('PUT', `/api/admin/administrators/${person.id}`, { role: 'owner' })).status).toBe(200);
  }

  /** In a fresh browser: `path` loaded, "Sign in with Gatehouse", then e-mail and password on the hosted page. */
  async function signInAt(path: string, email: string) {
    const opened = await newPage();
    await opened.page.goto(`${server.url}${path}`);
    await opened.page.getByRole('button', { name: 'Sign in with Gatehouse' }).click();
    await opened.page.getByLabel('E-mail').fill(email);
    await opened.page.getByLabel('Password').fill(PASSWORD);
    await opened.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    return opened;
  }

  it('through a second-factor enrolment to the page asked for; a new tab on the same Gatehouse session; a reload', async () => {
    await owner('ada@example.com', 'Ada Admin');
    const { context, page } = await signInAt(AUDIT, 'ada@example.com');
    await page.getByRole('heading', { name: 'Set up a second factor' }).waitFor();
    adaSecret = (await page.locator('[data-totp-key]').textContent())!.trim();
    await page.getByLabel('Code from the app').fill(code(adaSecret));
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await page.getByRole('link', { name: 'Continue' }).click();
    await page.getByTestId('signed-in-as').getByText('Ada Admin').waitFor();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    expect(at(page)).toBe(AUDIT);
    expect(page.url()).toBe(`${server.url}${AUDIT}`);

    // A link opened in a new tab (a new panel, the same Gatehouse session): one click, no password.
    const tab = await context.newPage();
    await tab.goto(`${server.url}${CLAIMS}`);
    await tab.getByRole('button', { name: 'Sign in with Gatehouse' }).click();
    await tab.getByTestId('signed-in-as').getByText('Ada Admin').waitFor();
    await tab.getByRole('heading', { name: 'Notes' }).waitFor();
    expect(at(tab)).toBe(CLAIMS);
    // A reload signs in again silently, on the same page.
    await tab.reload();
    await tab.getByTestId('signed-in-as').getByText('Ada Admin').waitFor();
    await tab.getByRole('heading', { name: 'Notes' }).waitFor();
    expect(at(tab)).toBe(CLAIMS);
    await context.close();
  });

  it('through the password and TOTP steps to the page asked for', async () => {
    expect(adaSecret).not.toBe('');
    const { context, page } = await signInAt(CLAIMS, 'ada@example.com');
    // The next step's code: the enrolment spent this one.
    await page.getByLabel('Code from your authenticator app').fill(code(adaSecret, 30_000));
    await page.getByLabel('Code from your authenticator app').press('Enter');
    await page.getByTestId('signed-in-as').getByText('Ada Admin').waitFor();
    await page.getByRole('heading', { name: 'Notes' }).waitFor();
    expect(at(page)).toBe(CLAIMS);
    await context.close();
  });

  it('a return_to changed on the way (by a page of the same origin) is checked again: it ends at /admin/', async () => {
    await owner('dora@example.com', 'Dora Admin');
    const { context, page } = await newPage();
    await page.goto(`${server.url}${AUDIT}`);
    await page.getByRole('button', { name: 'Sign in with Gatehouse' }).click();
    await page.getByLabel('E-mail').waitFor();
    // On the hosted sign-in page: the storage the panel's sign-in keeps its return_to in.
    const kept = await page.evaluate(() => {
      const pending = JSON.parse(sessionStorage.getItem('gatehouse.panelPending')!) as { returnTo: string };
      const was = pending.returnTo;
      sessionStorage.setItem('gatehouse.panelPending', JSON.stringify({ ...pending, returnTo: '//evil.example/admin/' }));
      return was;
    });
    expect(kept).toBe(AUDIT);
    await page.getByLabel('E-mail').fill('dora@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Code from the app').fill(code((await page.locator('[data-totp-key]').textContent())!.trim()));
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await page.getByRole('link', { name: 'Continue' }).click();
    await page.getByTestId('signed-in-as').getByText('Dora Admin').waitFor();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(new URL(page.url()).origin).toBe(server.url);
    expect(at(page)).toBe('/admin/');
    await context.close();
  });

  it('the admin token way stays on the page asked for', async () => {
    const { context, page } = await newPage();
    await page.goto(`${server.url}${AUDIT}`);
    await page.getByLabel('Admin token').fill(OAUTH_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Use the admin token' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    expect(at(page)).toBe(AUDIT);
    await context.close();
  });
});
