/**
 * The panel's Groups page in headless Chromium against a real server: create a group from its
 * name (the id made from it), find it by id, rename it, put people in by e-mail and take them out,
 * give a person groups from their page with the group picker, invite with groups, see a refused
 * delete explained (the applications and settings that name the group) and delete it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { adminJsonOf, OAUTH_ADMIN_TOKEN, PASSWORD, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { buildIfStale, launchChromium, panelContext, shot } from '../helpers/panel-browser.js';
import { GROUP_REFERENCES, type GroupReference } from '../../server/groups/references.js';
import { applications } from '../../server/db/schema.js';

let server: OAuthServer;
let browser: Browser;
let page: Page;
const people: Record<string, string> = {};

const adminJson = <T,>(method: string, path: string, body?: unknown) => adminJsonOf<T>(server, method, path, body);

beforeAll(async () => {
  buildIfStale();
  server = await startOAuthServer();
  await adminJson('POST', '/api/admin/applications', {
    id: 'grafana', name: 'Grafana', audience: 'https://grafana.example.com', redirectUris: ['https://grafana.example.com/login/generic_oauth'],
    clientType: 'spa', authPolicy: { signup_policy: 'open' },
  });
  for (const email of ['ann@example.com', 'bob@example.com']) {
    const res = await fetch(`${server.url}/api/auth/sign-up/email`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD, name: email.split('@')[0]!.replace(/^./, (c) => c.toUpperCase()), applicationId: 'grafana' }),
    });
    expect(res.status).toBe(201);
    people[email] = ((await res.json()) as { user: { id: string } }).user.id;
  }
  await adminJson('POST', '/api/admin/groups', { id: 'family', name: 'Family' });
  browser = await launchChromium();
  page = await (await panelContext(browser, OAUTH_ADMIN_TOKEN)).newPage();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('the Groups page', () => {
  it('creates a group from its name and finds it by id', async () => {
    await page.goto(`${server.url}/admin/`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Groups', exact: true }).click();
    await page.getByRole('heading', { name: 'Groups', level: 1 }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Media users');
    expect(await page.getByLabel('Id', { exact: true }).inputValue()).toBe('media-users');
    await page.getByLabel('Description (optional)').fill('Jellyfin and Immich');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.getByRole('link', { name: 'Media users' }).waitFor();
    expect(await adminJson('GET', '/api/admin/groups/media-users')).toMatchObject({ name: 'Media users', description: 'Jellyfin and Immich' });

    // The same id again: refused, in words, under the field.
    await page.getByLabel('Name', { exact: true }).fill('Family');
    await page.getByRole('button', { name: 'Create group' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toBe('A group with id "family" already exists.');

    await page.getByRole('searchbox', { name: 'Search groups' }).fill('MED');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.locator('tr[data-group]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-group')))).toEqual(['media-users']);
    await shot(page, 'groups-search');
  });

  it('renames a group and puts people in and out of it by e-mail', async () => {
    await page.getByRole('link', { name: 'Media users' }).click();
    await page.getByRole('heading', { name: /Media users/, level: 1 }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Media');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: /^Media media-users$/, level: 1 }).waitFor();

    await page.getByLabel('Add a person', { exact: true }).fill('nobody@example.com');
    await page.getByRole('button', { name: 'Add to group' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toBe('Nobody has the e-mail address nobody@example.com.');
    for (const email of ['ann@example.com', 'bob@example.com']) {
      await page.getByLabel('Add a person', { exact: true }).fill(email);
      await page.getByRole('button', { name: 'Add to group' }).click();
      await page.locator(`tr[data-member="${email}"]`).waitFor();
    }
    await shot(page, 'group-members');
    await page.locator('tr[data-member="bob@example.com"]').getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await page.locator('tr[data-member="bob@example.com"]').waitFor({ state: 'detached' });
    const members = await adminJson<{ members: { email: string }[] }>('GET', '/api/admin/groups/media-users/members');
    expect(members.members.map((m) => m.email)).toEqual(['ann@example.com']);
  });

  it("gives a person groups from their page with the group picker, and edits their username", async () => {
    await page.goto(`${server.url}/admin/people/${people['bob@example.com']}`);
    await page.getByRole('heading', { name: 'Bob', level: 1 }).waitFor();
    const picker = page.getByRole('group', { name: 'Groups' });
    await picker.getByLabel('Find a group').fill('fam');
    await picker.getByRole('button', { name: 'Add Family family' }).click();
    await picker.locator('li.chip[data-group="family"]').waitFor();
    await picker.getByLabel('Find a group').fill('media');
    await picker.getByLabel('Find a group').press('Enter');
    await picker.locator('li.chip[data-group="media-users"]').waitFor();
    await expect.poll(async () => (await adminJson<{ groups: { id: string }[] }>('GET', `/api/admin/people/${people['bob@example.com']}`)).groups.map((g) => g.id)).toEqual(['family', 'media-users']);
    await picker.getByRole('button', { name: 'Remove Family' }).click();
    await picker.locator('li.chip[data-group="family"]').waitFor({ state: 'detached' });

    await page.getByLabel('Username', { exact: true }).fill('ann');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toBe('The username "ann" belongs to someone else.');
    await page.getByLabel('Username', { exact: true }).fill('Robert');
    await page.getByLabel('Given name', { exact: true }).fill('Robert');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await adminJson<{ username: string; givenName: string }>('GET', `/api/admin/people/${people['bob@example.com']}`))).toMatchObject({ username: 'robert', givenName: 'Robert' });
    await shot(page, 'person-groups');

    // No mail server here: a reset link to pass on (m6), which opens the new-password form.
    await page.getByRole('button', { name: 'Make a reset link to pass on' }).click();
    const notice = page.getByTestId('reset-link');
    const url = (await notice.locator('.copy-field code').textContent()) ?? '';
    expect(url).toMatch(new RegExp(`^${server.url.replaceAll('.', '\\.')}/reset-password\\?token=[A-Za-z0-9_-]{43}$`));
    expect(await notice.locator('p.hint').textContent()).toMatch(/^Send this link to bob@example\.com yourself \(it works once, until \d\d:\d\d\)\. A newer link or a reset e-mail replaces it\./);
    const other = await page.context().newPage();
    await other.goto(url);
    await other.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await other.close();
  });

  it('invites with groups chosen in the picker', async () => {
    await page.goto(`${server.url}/admin/applications/grafana/people/invitations`);
    await page.getByLabel('Invite people').fill('cy@example.com');
    const picker = page.getByRole('group', { name: 'Groups (optional)' });
    await picker.getByLabel('Find a group').fill('family');
    await picker.getByLabel('Find a group').press('Enter');
    await picker.locator('li.chip[data-group="family"]').waitFor();
    await page.getByRole('button', { name: 'Send 1 invitation' }).click();
    await page.locator('tr[data-invitation="cy@example.com"]').waitFor();
    const list = await adminJson<{ invitations: { email: string; groups: string[] }[] }>('GET', '/api/admin/applications/grafana/invitations');
    expect(list.invitations.find((i) => i.email === 'cy@example.com')?.groups).toEqual(['family']);
  });

  it('explains a refused delete (the settings that name the group), then deletes', async () => {
    // A setting naming groups (claims and forward auth register theirs in references.ts): here
    // the application's post-logout redirect URIs stand in for such a list, in this server process.
    const reference: GroupReference = { field: 'postLogoutRedirectUris', column: applications.postLogoutRedirectUris, groupsNamed: (v) => (v as string[] | null) ?? [] };
    await adminJson('PATCH', '/api/admin/applications/grafana', { postLogoutRedirectUris: ['https://grafana.example.com/family'] });
    GROUP_REFERENCES.push({ ...reference, groupsNamed: (v) => ((v as string[] | null) ?? []).map((uri) => uri.split('/').pop()!) });
    try {
      await page.goto(`${server.url}/admin/groups/family`);
      await page.getByRole('heading', { name: /^Family family$/, level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Delete group' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
      const alert = page.locator('.danger-zone [role="alert"]');
      await expect.poll(() => alert.locator('p').first().textContent()).toBe('The group "family" is named by Grafana (postLogoutRedirectUris); remove it there first.');
      expect(await alert.getByRole('link', { name: 'grafana' }).getAttribute('href')).toBe('/admin/applications/grafana');
      await shot(page, 'group-delete-refused');
    } finally {
      GROUP_REFERENCES.pop();
    }
    await page.getByRole('button', { name: 'Delete group' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'Groups', level: 1 }).waitFor();
    await page.locator('tr[data-group="family"]').waitFor({ state: 'detached' });
    expect((await server.admin('GET', '/api/admin/groups/family')).status).toBe(404);
  });
});
