/**
 * The control panel's Claims tab in headless Chromium against a real server (spec
 * claims-and-groups.md): an administrator lets unknown scopes through, keeps the groups claim to
 * chosen groups with the group picker, adds a groupMap claim and a constant, lists a resource
 * server, saves (the admin API then holds exactly that), sees a refusal in words for a reserved
 * name, and previews a member's ID token, userinfo and access-token claims. Then an app manager of
 * that application, signed in to the panel with password and TOTP: they may not read the
 * directory's groups, so they name groups by id (a wrong one is refused under its field, in
 * words), keep a resource server they cannot see, and save. Screenshots: panel-claims-tab.png,
 * panel-claims-preview.png, panel-claims-app-manager.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { adminJsonOf, createClient, OAUTH_ADMIN_TOKEN, PASSWORD, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { buildIfStale, cspWatchedPage, firstPanelSignIn, launchChromium, seriousViolations, shot } from '../helpers/panel-browser.js';

let server: OAuthServer;
let browser: Browser;
let page: Page;
let cspErrors: string[];
let personId: string;

const adminJson = <T,>(method: string, path: string, body?: unknown) => adminJsonOf<T>(server, method, path, body);

beforeAll(async () => {
  buildIfStale();
  server = await startOAuthServer();
  await createClient(server, { id: 'grafana', name: 'Grafana', audience: 'https://grafana.example.lan', clientType: 'web', redirectUris: ['https://grafana.example.lan/login/generic_oauth'] });
  await createClient(server, { id: 'prom', name: 'Prometheus', audience: 'https://prom.example.lan', clientType: 'web', redirectUris: ['https://prom.example.lan/cb'] });
  await signUpCookie(server, 'ada@example.com', 'grafana');
  personId = (await adminJson<{ users: { userId: string }[] }>('GET', '/api/admin/applications/grafana/users')).users[0]!.userId;
  await adminJson('PATCH', `/api/admin/people/${personId}`, { givenName: 'Ada', familyName: 'Lovelace' });
  for (const [id, name] of [['grafana-admins', 'Grafana admins'], ['grafana-editors', 'Grafana editors'], ['family', 'Family']]) {
    await adminJson('POST', '/api/admin/groups', { id, name });
  }
  await adminJson('PUT', `/api/admin/groups/grafana-admins/members/${personId}`);
  await adminJson('PUT', `/api/admin/groups/family/members/${personId}`);
  browser = await launchChromium();
  const watched = await cspWatchedPage(browser);
  page = watched.page;
  cspErrors = watched.cspErrors;
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.addInitScript((token) => sessionStorage.setItem('gatehouse.adminToken', token), OAUTH_ADMIN_TOKEN);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('the Claims tab', () => {
  it('saves unknown scopes, a groups filter, custom claims and a resource server as the admin API then shows them', async () => {
    await page.goto(`${server.url}/admin/applications/grafana/claims`);
    const form = page.getByTestId('claims');
    await form.getByLabel('Scopes Gatehouse does not know').selectOption('ignore');
    await form.getByLabel('Only these groups').check();
    const search = form.getByLabel('Find a group');
    for (const name of ['Grafana admins', 'Grafana editors']) {
      await search.fill(name);
      await form.getByRole('button', { name: new RegExp(`^Add ${name}`) }).click();
    }
    await form.getByRole('button', { name: 'Add a claim' }).click();
    const first = form.locator('[data-claim="0"]');
    await first.getByLabel('Claim name').fill('grafana_role');
    await first.getByLabel('Value from').selectOption('groupMap');
    await first.getByLabel('Group 1', { exact: true }).selectOption('grafana-admins');
    await first.getByLabel('Value 1').fill('Admin');
    await first.getByRole('button', { name: 'Add a group' }).click();
    await first.getByLabel('Group 2', { exact: true }).selectOption('grafana-editors');
    await first.getByLabel('Value 2').fill('Editor');
    await first.getByLabel('Otherwise').fill('Viewer');
    await first.getByLabel('Also in the access token').check();
    await form.getByRole('button', { name: 'Add a claim' }).click();
    const second = form.locator('[data-claim="1"]');
    await second.getByLabel('Claim name').fill('tier');
    await second.getByLabel('Value from').selectOption('constant');
    await second.getByLabel('Value', { exact: true }).fill('{"plan": "gold"}');
    await form.getByLabel(/Prometheus/).check();
    await shot(page, 'panel-claims-tab');
    await form.getByRole('button', { name: 'Save claims' }).click();
    await page.getByText('Claims saved.').waitFor();

    const app = await adminJson<Record<string, unknown>>('GET', '/api/admin/applications/grafana');
    expect(app).toMatchObject({
      unknownScopes: 'ignore',
      groupsFilter: ['grafana-admins', 'grafana-editors'],
      customClaims: [
        {
          name: 'grafana_role', inAccessToken: true,
          source: { type: 'groupMap', map: [{ group: 'grafana-admins', value: 'Admin' }, { group: 'grafana-editors', value: 'Editor' }], default: 'Viewer' },
        },
        { name: 'tier', source: { type: 'constant', value: { plan: 'gold' } } },
      ],
      resourceServers: ['prom'],
    });
    expect(cspErrors).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('says in words what is wrong, naming the claim', async () => {
    const form = page.getByTestId('claims');
    // A name Gatehouse sets itself: the rule the server holds (applications/claim-names.ts), said under the claim at once.
    await form.locator('[data-claim="1"]').getByLabel('Claim name').fill('email');
    await form.getByRole('button', { name: 'Save claims' }).click();
    await form.locator('[data-claim="1"] .field-errors').getByText('"email" is a claim Gatehouse sets itself; choose another name.').waitFor();
    // Nothing was saved.
    expect((await adminJson<{ customClaims: { name: string }[] }>('GET', '/api/admin/applications/grafana')).customClaims.map((c) => c.name)).not.toContain('email');
    // What else the panel can say before asking: a claim without a name, a group map's empty group.
    await form.locator('[data-claim="1"]').getByLabel('Claim name').fill('');
    await form.locator('[data-claim="0"]').getByLabel('Group 2', { exact: true }).selectOption('');
    await form.getByRole('button', { name: 'Save claims' }).click();
    await form.locator('[data-claim="1"] .field-errors').getByText('A claim needs a name.').waitFor();
    await form.locator('[data-claim="0"] .field-errors').getByText('Choose a group.').waitFor();
    await page.getByText('Some claims need fixing; see the messages under them.').waitFor();
    await form.locator('[data-claim="1"]').getByLabel('Claim name').fill('tier');
    await form.locator('[data-claim="0"]').getByLabel('Group 2', { exact: true }).selectOption('grafana-editors');
    expect(await page.getByText('Some claims need fixing; see the messages under them.').count()).toBe(0);
  });

  it("previews a member's ID token, userinfo and access-token claims", async () => {
    const preview = page.getByTestId('claims-preview');
    await preview.getByRole('button', { name: 'Preview' }).click();
    const idToken = preview.locator('pre[data-preview="ID token"]');
    await idToken.waitFor();
    const shown = JSON.parse((await idToken.textContent())!);
    expect(shown).toMatchObject({
      sub: personId, given_name: 'Ada', family_name: 'Lovelace', preferred_username: 'ada', email: 'ada@example.com',
      groups: ['grafana-admins'], grafana_role: 'Admin', tier: { plan: 'gold' },
    });
    expect(JSON.parse((await preview.locator('pre[data-preview="Access token (custom claims)"]').textContent())!)).toEqual({ grafana_role: 'Admin' });
    await shot(page, 'panel-claims-preview');
    expect(cspErrors).toEqual([]);
  });

  it('lets an app manager name groups by id, refusing an unknown one under its field, without reading the directory', async () => {
    await adminJson('POST', '/api/admin/setup/owner', { email: 'olive@example.com', name: 'Olive Owner', password: PASSWORD });
    const manager = await adminJson<{ id: string }>('POST', '/api/admin/people', { email: 'max@example.com', name: 'Max Manager', password: PASSWORD });
    await adminJson('PUT', `/api/admin/administrators/${manager.id}`, { role: 'app_manager', applications: ['grafana'] });

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    const mine = await context.newPage();
    const refused: string[] = [];
    mine.on('response', (r) => {
      if (r.url().includes('/api/admin/') && r.status() === 403) refused.push(new URL(r.url()).pathname);
    });
    await firstPanelSignIn(mine, server.url, { email: 'max@example.com', password: PASSWORD, name: 'Max Manager' });
    // The overview an app manager lands on asks for nothing the role does not cover (no installation-wide activity).
    await mine.getByRole('heading', { name: 'Overview' }).waitFor();
    await mine.locator('.stat').first().waitFor();
    expect(refused).toEqual([]);
    expect(await mine.getByTestId('activity').count()).toBe(0);

    // Through the panel's own links (a reload would sign in again first).
    await mine.locator('#main-nav').getByRole('link', { name: 'Applications' }).click();
    await mine.getByRole('link', { name: 'Grafana' }).click();
    // From here on, the panel asks for nothing the role does not cover.
    refused.length = 0;
    // Their application's page has every section; what only the owner may do is not offered.
    const sections = mine.getByRole('navigation', { name: 'Application sections' });
    expect(await sections.getByRole('link').allTextContents()).toEqual(['Overview', 'Connect', 'Test sign-in', 'Access', 'People', 'Claims', 'Advanced']);
    await sections.getByRole('link', { name: 'Advanced' }).click();
    await mine.getByRole('button', { name: 'Save name' }).waitFor();
    expect(await mine.getByRole('button', { name: 'Delete application' }).count()).toBe(0);
    expect(await mine.getByText('Delete this application').count()).toBe(0);
    await mine.getByRole('link', { name: 'Claims', exact: true }).click();
    const form = mine.getByTestId('claims');
    // Group ids in a text box instead of the directory's picker; the resource server they cannot see, kept by id.
    const ids = form.getByLabel('Group ids this application may see');
    expect(await ids.inputValue()).toBe('grafana-admins grafana-editors');
    expect(await form.getByLabel('Find a group').count()).toBe(0);
    expect(await form.locator('label.check', { hasText: 'prom' }).textContent()).toContain('(an application you do not manage)');
    expect(await form.locator('[data-claim="0"]').getByLabel('Group 1 (Group id)').inputValue()).toBe('grafana-admins');

    await ids.fill('grafana-admins family');
    await form.getByRole('button', { name: 'Add a claim' }).click();
    const third = form.locator('[data-claim="2"]');
    await third.getByLabel('Claim name').fill('is_family');
    await third.getByLabel('Value from').selectOption('inGroup');
    await third.getByLabel('Group (Group id)').fill('no-such-group');
    await form.getByRole('button', { name: 'Save claims' }).click();
    await third.locator('.field-errors').getByText('There is no group "no-such-group".').waitFor();
    await shot(mine, 'panel-claims-app-manager');
    await third.getByLabel('Group (Group id)').fill('family');
    await form.getByRole('button', { name: 'Save claims' }).click();
    await mine.getByText('Claims saved.').waitFor();

    const app = await adminJson<Record<string, unknown>>('GET', '/api/admin/applications/grafana');
    expect(app).toMatchObject({
      groupsFilter: ['grafana-admins', 'family'],
      customClaims: [
        { name: 'grafana_role', inAccessToken: true, source: { type: 'groupMap', map: [{ group: 'grafana-admins', value: 'Admin' }, { group: 'grafana-editors', value: 'Editor' }], default: 'Viewer' } },
        { name: 'tier', source: { type: 'constant', value: { plan: 'gold' } } },
        { name: 'is_family', source: { type: 'inGroup', group: 'family' } },
      ],
      resourceServers: ['prom'],
    });
    // Their preview works too, and nothing the tab asked for was refused.
    const preview = mine.getByTestId('claims-preview');
    await preview.getByRole('button', { name: 'Preview' }).click();
    const shown = JSON.parse((await preview.locator('pre[data-preview="ID token"]').textContent())!);
    expect(shown).toMatchObject({ groups: ['family', 'grafana-admins'], is_family: true, grafana_role: 'Admin' });
    expect(refused).toEqual([]);
    expect(await seriousViolations(mine)).toEqual([]);
    await context.close();
  });
});
