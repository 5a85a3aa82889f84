/**
 * Every control-panel screen in headless Chromium against a real server with LAN TLS on (local
 * CA, plain-http port for the CA) and some history (applications, people, sign-ins, a failed one,
 * invitations, an API key, a backup):
 * - axe-core finds no serious or critical violation, in the light and the dark scheme;
 * - at 390 px (a phone) no screen scrolls sideways; the navigation is a top bar whose menu opens
 *   and closes; wide tables scroll inside their own box;
 * - a screenshot of each screen in each scheme, and of each at 390 px, is saved under
 *   test/e2e/screenshots/ for review;
 * - the application page by task (issue 44): at most 8 sections in one row at 1280 px and in the
 *   desktop app's 1200 px window, Test sign-in on screen without scrolling, every section and part
 *   at its own address, loaded directly, and the page's older addresses leading to their screens.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { loadConfig } from '../../server/config.js';
import { start, type Running } from '../../server/main.js';
import { caFetch, type CaFetch } from '../helpers/ca-fetch.js';
import { buildIfStale, checkSchemes, expectAxeControlReported, followPanelLink, launchChromium, panelContext, seriousViolations, settled, shot, watchRequests } from '../helpers/panel-browser.js';
import { freePort } from '../helpers/data-dir.js';
import { eq } from 'drizzle-orm';
import { applications } from '../../server/db/schema.js';
import { exec, one } from '../../server/db/store.js';

const TOKEN = 'panel-screens-admin-token-0123456789';
const PASSWORD = 'correct horse battery';

let running: Running;
let dataDir: string;
let url: string;
let httpFetch: CaFetch;
let browser: Browser;
let personId = '';
let ldapPort = 0;

async function admin<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await httpFetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

async function json(path: string, body: unknown): Promise<Response> {
  return httpFetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** Screens: name, path, and a text that is there once the screen has its data. */
const SCREENS: [name: string, path: () => string, ready: string][] = [
  ['overview', () => '/', 'Activity, last 30 days'],
  ['applications', () => '/applications', 'Team Notes'],
  ['new-application', () => '/applications/new', 'What are you connecting?'],
  ['app-overview', () => '/applications/team-notes', 'At a glance'],
  ['app-connect-oidc', () => '/applications/team-notes/connect/oidc', 'Connection settings'],
  ['app-connect-preset', () => '/applications/grafana/connect', 'Set up the app'],
  ['app-connect-preset-updated', () => '/applications/outline/connect', 'Preset updated'],
  ['app-connect-forward-auth', () => '/applications/team-notes/connect/forward-auth', 'Protected hosts'],
  ['app-connect-ldap', () => '/applications/team-notes/connect/ldap', 'LDAP directory'],
  ['app-test-sign-in', () => '/applications/team-notes/test', 'the way the app will'],
  ['app-access', () => '/applications/team-notes/access', 'Who may join'],
  ['app-members', () => '/applications/team-notes/people', 'dee@example.com'],
  ['app-invitations', () => '/applications/team-notes/people/invitations', 'erin@example.com'],
  ['app-claims', () => '/applications/team-notes/claims', 'Preview a member’s claims'],
  ['app-advanced', () => '/applications/team-notes/advanced', 'Delete this application'],
  ['app-api-keys', () => '/applications/team-notes/advanced/api-keys', 'Provisioning'],
  ['app-webhooks', () => '/applications/team-notes/advanced/webhooks', 'Recent deliveries'],
  ['app-single-logout', () => '/applications/team-notes/advanced/logout', 'Recent logout deliveries'],
  ['app-token-signing', () => '/applications/team-notes/advanced/signing', 'Signing algorithm'],
  ['people', () => '/people', 'dee@example.com'],
  ['person', () => `/people/${personId}`, 'Sign-in methods'],
  ['groups', () => '/groups', 'media-users'],
  ['group', () => '/groups/family', 'dee@example.com'],
  ['sso-groups', () => '/sso-groups', 'Office apps'],
  ['providers', () => '/providers', 'GOOGLE_CLIENT_ID'],
  ['directory', () => '/directory', 'Connect a directory'],
  ['audit-log', () => '/audit-log', 'from 127.0.0.1'],
  ['signing-keys', () => '/signing-keys', 'Next scheduled rotation'],
  ['backups', () => '/backups', 'Take a backup now'],
  ['data-lifecycle', () => '/data-lifecycle', 'How long ended data is kept'],
  ['lan-tls', () => '/lan-tls', 'SHA-256 fingerprint'],
  ['administrators', () => '/administrators', 'olive@example.com'],
  ['password-policy', () => '/settings/password-policy', 'What people see beside'],
];

function signedInContext(options: { width: number; height: number; scheme: 'light' | 'dark' }): Promise<BrowserContext> {
  return panelContext(browser, TOKEN, { viewport: { width: options.width, height: options.height }, colorScheme: options.scheme, ignoreHTTPSErrors: true });
}

async function open(page: Page, path: string, ready: string): Promise<void> {
  watchRequests(page);
  await page.goto(`${url}/admin${path === '/' ? '/' : path}`);
  await page.getByText(ready, { exact: false }).first().waitFor({ timeout: 15_000 });
  // Let charts and late resources settle before measuring.
  await settled(page);
}
/**
 * `path` on `page`: loaded by its address when the page has none of the panel yet, else reached as
 * by a link (the panel's router draws it in the same document; nothing to do when it is there).
 */
async function reach(page: Page, path: string, ready: string): Promise<void> {
  if (page.url() === 'about:blank') await open(page, path, ready);
  else if (new URL(page.url()).pathname !== `/admin${path}`) await followPanelLink(page, path, ready);
}

beforeAll(async () => {
  buildIfStale();
  dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-panel-'));
  const redirectPort = await freePort();
  ldapPort = await freePort();
  const config = loadConfig(
    {
      LOG_LEVEL: 'silent', GATEHOUSE_TLS: 'auto', GATEHOUSE_HTTP_REDIRECT_PORT: String(redirectPort), GATEHOUSE_BACKUP_PASSPHRASE: 'panel screens passphrase',
      GATEHOUSE_LDAP: 'on', GATEHOUSE_LDAP_PORT: String(ldapPort), GATEHOUSE_LDAPS_PORT: String(await freePort()),
    },
    { dataDir, port: '0', host: '127.0.0.1', adminToken: TOKEN },
  );
  running = await start(config);
  url = running.url;
  httpFetch = caFetch(running.tls!.caPem!);

  // Some history for every screen to show.
  await admin('POST', '/api/admin/applications', {
    id: 'team-notes',
    name: 'Team Notes',
    audience: 'https://notes.example.com/api',
    redirectUris: ['https://notes.example.com/auth/callback', 'http://localhost:3000/callback'],
    clientType: 'web',
    ldap: { enabled: true },
    authPolicy: { signup_policy: 'open', profile_fields: [{ key: 'department', label: 'Department', type: 'select', options: ['Sales', 'Engineering'], required: false }] },
  });
  await admin('POST', '/api/admin/applications', {
    id: 'wiki',
    name: 'Wiki',
    audience: 'https://wiki.example.com/api',
    redirectUris: ['https://wiki.example.com/callback'],
    clientType: 'spa',
  });
  await admin('POST', '/api/admin/sso-groups', { id: 'office-apps', name: 'Office apps' });
  await admin('POST', '/api/admin/sso-groups/office-apps/apps', { appId: 'team-notes' });
  for (const [email, name] of [['dee@example.com', 'Dee Doe'], ['fay@example.com', 'Fay']] as const) {
    const signUp = await json('/api/auth/sign-up/email', { email, password: PASSWORD, name, applicationId: 'team-notes' });
    expect(signUp.status).toBe(201);
    personId ||= ((await signUp.json()) as { user: { id: string } }).user.id;
    expect((await json('/api/auth/sign-in/email', { email, password: PASSWORD, applicationId: 'team-notes' })).status).toBe(200);
  }
  expect((await json('/api/auth/sign-in/email', { email: 'dee@example.com', password: 'wrong password', applicationId: 'team-notes' })).status).toBe(401);
  await admin('POST', '/api/admin/groups', { id: 'family', name: 'Family', description: 'Who lives here' });
  await admin('POST', '/api/admin/groups', { id: 'media-users', name: 'Media users' });
  await admin('PUT', `/api/admin/groups/family/members/${personId}`);
  await admin('PUT', `/api/admin/groups/media-users/members/${personId}`);
  await admin('PATCH', '/api/admin/applications/team-notes', {
    groupsFilter: ['family', 'media-users'],
    customClaims: [
      { name: 'media_role', source: { type: 'groupMap', map: [{ group: 'media-users', value: 'Editor' }], default: 'Viewer' }, inAccessToken: true },
      { name: 'department', source: { type: 'profileField', key: 'department' } },
    ],
  });
  await admin('POST', '/api/admin/applications/team-notes/invitations', { emails: ['erin@example.com', 'gus@example.com'], role: 'member', groups: ['family'] });
  await admin('POST', '/api/admin/applications/team-notes/api-keys', { name: 'Provisioning', scopes: ['users:read'] });
  await admin('POST', '/api/admin/backups');
  // After the sign-ins above: the members screen then marks who has no second factor yet.
  await admin('PATCH', '/api/admin/applications/team-notes/auth-policy', { mfa: 'required' });
  // Named administrators (issue 33): the owner, and the person of the person page as an app manager.
  await admin('POST', '/api/admin/setup/owner', { email: 'olive@example.com', name: 'Olive Owner', password: PASSWORD });
  await admin('PUT', `/api/admin/administrators/${personId}`, { role: 'app_manager', applications: ['team-notes'] });
  // App presets (issue 37): one as made, one made by an older preset version (its callback path since changed).
  await admin('POST', '/api/admin/applications', { preset: 'grafana', presetInputs: { baseUrl: 'https://grafana.lan.example', adminGroup: 'family' } });
  await admin('POST', '/api/admin/applications', { preset: 'outline', presetInputs: { baseUrl: 'https://wiki.lan.example' } });
  const outline = (await one(running.db.select({ preset: applications.preset }).from(applications).where(eq(applications.id, 'outline'))))!;
  const old = ['https://wiki.lan.example/auth/oidc/callback'];
  await exec(running.db.update(applications)
    .set({ redirectUris: old, preset: { ...outline.preset!, version: 0, applied: { ...outline.preset!.applied, redirectUris: old } } })
    .where(eq(applications.id, 'outline')));
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await running?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('every panel screen', () => {
  it('passes axe-core (no serious or critical violation) in the light and in the dark scheme', async () => {
    const context = await signedInContext({ width: 1280, height: 900, scheme: 'light' });
    const page = await context.newPage();
    const found: Record<string, string[]> = {};
    await open(page, '/', 'Activity, last 30 days');
    await expectAxeControlReported(page);
    // Each screen once, then photographed and checked in each scheme (the panel follows the
    // scheme as it changes: its CSS, and the charts redrawn). The first is loaded by its address,
    // the others reached as by a link (loaded directly: the application page test below).
    for (const [name, path, ready] of SCREENS) {
      await reach(page, path(), ready);
      await checkSchemes(page, `panel-${name}`, (scheme, violations) => (found[`${name} (${scheme})`] = violations));
    }
    // The sign-in screen, without a token.
    const anonymous = await browser.newContext({ viewport: { width: 1280, height: 900 }, ignoreHTTPSErrors: true });
    const signIn = await anonymous.newPage();
    watchRequests(signIn);
    await signIn.goto(`${url}/admin/`);
    await signIn.getByLabel('Admin token').waitFor();
    await settled(signIn);
    await checkSchemes(signIn, 'panel-sign-in', (scheme, violations) => (found[`sign-in (${scheme})`] = violations));
    await anonymous.close();
    await context.close();
    expect(found).toEqual({});
    // 34 screens, each waited for, photographed and checked twice: on 2 shared cores under load, longer than one test's default.
  }, 300_000);

  it('marks the members without a second factor when the application requires one, and keeps the audit log\'s details on screen at 1280 px', async () => {
    const context = await signedInContext({ width: 1280, height: 900, scheme: 'light' });
    const page = await context.newPage();
    await open(page, '/applications/team-notes/members', 'dee@example.com');
    expect(await page.getByTestId('mfa-missing').textContent()).toBe(
      'This application requires a second factor. 2 of the members shown have none yet (marked below): they set one up at their next sign-in, and cannot sign in to this application until they do.',
    );
    expect(await page.locator('tr[data-member="dee@example.com"] .badge.warn').textContent()).toBe('no second factor yet');
    await open(page, '/audit-log', 'from 127.0.0.1');
    // Every column, Details included, inside the window: the table needs no sideways scroll.
    const table = page.getByRole('region', { name: 'Audit log entries' });
    expect(await table.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    const details = await page.getByRole('columnheader', { name: 'Details' }).boundingBox();
    expect(details!.x + details!.width).toBeLessThanOrEqual(1280);
    await context.close();
  });

  /** Every section and part of an application's page: its address, and the text its screen shows. */
  const APP_PAGE: [path: string, section: string, part: string | null, ready: string][] = [
    ['', 'Overview', null, 'At a glance'],
    ['/connect', 'Connect', 'OpenID Connect', 'Connection settings'],
    ['/connect/oidc', 'Connect', 'OpenID Connect', 'Connection settings'],
    ['/connect/forward-auth', 'Connect', 'Forward auth', 'Protected hosts'],
    ['/connect/ldap', 'Connect', 'LDAP', 'LDAP directory'],
    ['/test', 'Test sign-in', null, 'the way the app will'],
    ['/access', 'Access', null, 'Who may join'],
    ['/people', 'People', 'Members', 'dee@example.com'],
    ['/people/members', 'People', 'Members', 'dee@example.com'],
    ['/people/invitations', 'People', 'Invitations', 'erin@example.com'],
    ['/claims', 'Claims', null, 'Preview a member’s claims'],
    ['/advanced', 'Advanced', 'Name and pages', 'Delete this application'],
    ['/advanced/general', 'Advanced', 'Name and pages', 'Delete this application'],
    ['/advanced/api-keys', 'Advanced', 'API keys', 'Provisioning'],
    ['/advanced/webhooks', 'Advanced', 'Webhooks', 'Recent deliveries'],
    ['/advanced/logout', 'Advanced', 'Single logout', 'Recent logout deliveries'],
    ['/advanced/signing', 'Advanced', 'Token signing', 'Signing algorithm'],
  ];
  const SECTION_NAMES = ['Overview', 'Connect', 'Test sign-in', 'Access', 'People', 'Claims', 'Advanced'];

  it('the application page by task at 1280 px: 7 sections in one row, Test sign-in on screen, each section and part at its own address, loaded directly; older addresses lead to their screens', async () => {
    const context = await signedInContext({ width: 1280, height: 900, scheme: 'light' });
    const page = await context.newPage();
    const sections = page.getByRole('navigation', { name: 'Application sections' });
    for (const [path, section, part, ready] of APP_PAGE) {
      await open(page, `/applications/team-notes${path}`, ready);
      expect(await sections.getByRole('link').allTextContents(), path).toEqual(SECTION_NAMES);
      expect(await sections.locator('[aria-current="page"]').allTextContents(), path).toEqual([section]);
      expect(await page.locator('nav.subtabs [aria-current="page"]').allTextContents(), path).toEqual(part ? [part] : []);
      expect(new URL(page.url()).pathname, path).toBe(`/admin/applications/team-notes${path}`);
      await sectionsFit(page, 1280, 900, path);
    }
    // A preset's application opens Connect on the protocol its app uses.
    await open(page, '/applications/grafana/connect', 'Set up the app');
    expect(await page.locator('nav.subtabs [aria-current="page"]').textContent()).toBe('OpenID Connect');
    // The page's tabs before it had sections (bookmarks, links in mail) lead to the same screens.
    const LEGACY: [string, string, string][] = [
      ['/setup', '/connect', 'Connection settings'],
      ['/activity', '', 'At a glance'],
      ['/sign-in', '/access', 'Who may join'],
      ['/members', '/people/members', 'dee@example.com'],
      ['/invitations', '/people/invitations', 'erin@example.com'],
      ['/api-keys', '/advanced/api-keys', 'Provisioning'],
      ['/webhooks', '/advanced/webhooks', 'Recent deliveries'],
      ['/logout', '/advanced/logout', 'Recent logout deliveries'],
      ['/forward-auth', '/connect/forward-auth', 'Protected hosts'],
    ];
    for (const [old, now, ready] of LEGACY) {
      await open(page, `/applications/team-notes${old}`, ready);
      expect(new URL(page.url()).pathname, old).toBe(`/admin/applications/team-notes${now}`);
    }
    await open(page, '/applications/team-notes/nowhere', 'There is no such section.');
    await open(page, '/applications/team-notes/connect/nowhere', 'There is no such section.');
    await context.close();
  });

  /** The row of sections in one line, Test sign-in inside the window without scrolling, nothing wider than it. */
  async function sectionsFit(page: Page, width: number, height: number, path: string) {
    const sections = page.getByRole('navigation', { name: 'Application sections' });
    await page.evaluate(() => window.scrollTo(0, 0));
    const test = (await sections.getByRole('link', { name: 'Test sign-in' }).boundingBox())!;
    expect(test.y + test.height, path).toBeLessThanOrEqual(height);
    expect(test.x + test.width, path).toBeLessThanOrEqual(width);
    const tops = await sections.getByRole('link').evaluateAll((links) => [...new Set(links.map((a) => Math.round(a.getBoundingClientRect().top)))]);
    expect(tops, path).toHaveLength(1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(width);
  }

  it("Connect › LDAP gives the bind DN, the base DN and a copyable ldapwhoami line for this listener (docs/ldap.md, 'Check it works')", async () => {
    const context = await signedInContext({ width: 1280, height: 900, scheme: 'light' });
    const page = await context.newPage();
    await open(page, '/applications/team-notes/connect/ldap', 'LDAP directory');
    const card = page.getByTestId('ldap');
    await card.getByText('ldapwhoami').waitFor();
    const values = await card.locator('.copy-field code').allTextContents();
    const dn = 'cn=team-notes,ou=services,dc=gatehouse';
    expect(values).toEqual([dn, 'dc=gatehouse', `ldapwhoami -x -H ldap://127.0.0.1:${ldapPort} -D '${dn}' -W`]);
    await context.close();
  });

  it("keeps the sections in one row and Test sign-in on screen in the desktop app's 1200 × 820 window", async () => {
    const context = await signedInContext({ width: 1200, height: 820, scheme: 'light' });
    const page = await context.newPage();
    for (const [path, , , ready] of APP_PAGE.filter(([path]) => ['', '/connect/oidc', '/test', '/advanced/api-keys'].includes(path))) {
      await open(page, `/applications/team-notes${path}`, ready);
      await sectionsFit(page, 1200, 820, path);
    }
    await context.close();
  });

  it('fits a 390 px phone: no sideways page scroll, a menu in a top bar, tables scrolling in their own box', async () => {
    const context = await signedInContext({ width: 390, height: 844, scheme: 'light' });
    const page = await context.newPage();
    const wide: Record<string, number> = {};
    for (const [name, path, ready] of SCREENS) {
      await reach(page, path(), ready);
      await shot(page, `panel-${name}-390px`);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      if (width > 390) wide[name] = width;
    }
    expect(wide).toEqual({});

    // The application's sections wrap instead of scrolling sideways: Test sign-in is on the first
    // screen (the screens above were each checked for sideways scrolling already).
    for (const [path, , , ready] of APP_PAGE.filter(([path]) => ['', '/connect/oidc', '/test', '/people/invitations', '/advanced/webhooks'].includes(path))) {
      await reach(page, `/applications/team-notes${path}`, ready);
      await page.evaluate(() => window.scrollTo(0, 0));
      const sections = page.getByRole('navigation', { name: 'Application sections' });
      expect(await sections.evaluate((el) => el.scrollWidth <= el.clientWidth), path).toBe(true);
      const test = (await sections.getByRole('link', { name: 'Test sign-in' }).boundingBox())!;
      expect(test.y + test.height, path).toBeLessThanOrEqual(844);
      expect(test.x + test.width, path).toBeLessThanOrEqual(390);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(390);
    }

    // The navigation is behind the menu button.
    await reach(page, '/people', 'dee@example.com');
    const menu = page.getByRole('button', { name: 'Menu' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(false);
    await menu.click();
    expect(await page.getByRole('button', { name: 'Close menu' }).getAttribute('aria-expanded')).toBe('true');
    await shot(page, 'panel-menu-open-390px');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(false);

    // The audit table is wider than the phone: its own box scrolls, the page does not.
    await page.getByText('from 127.0.0.1').first().waitFor();
    const box = page.getByRole('region', { name: 'Audit log entries' });
    const sizes = await box.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    expect(sizes.scroll).toBeGreaterThan(sizes.client);
    expect(sizes.client).toBeLessThanOrEqual(390);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    // axe on the phone layout too (the top bar and the open drawer).
    await menu.click();
    expect(await seriousViolations(page)).toEqual([]);
    await context.close();
  });
});
