/**
 * The control panel in headless Chromium against a real server on a temporary data directory:
 * sign-in with the admin token, the application wizard (secret shown once, integration snippet),
 * the application's page by task (Overview, Connect, Test sign-in, Access, People, Claims,
 * Advanced), token signing, sign-in policy, a shared sign-in of two applications, invitations
 * (send three, revoke one), suspending a member, API keys (create, shown once, revoke) and the
 * test sign-in round trip.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { adminJsonOf, OAUTH_ADMIN_TOKEN, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { buildIfStale, launchChromium, seriousViolations, shot } from '../helpers/panel-browser.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

let server: OAuthServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let clientSecret = '';
let receiver: Receiver;
/** The application page's row of sections (not the main navigation, which has a People too). */
const section = (name: string) => page.getByRole('navigation', { name: 'Application sections' }).getByRole('link', { name, exact: true });
/** A part of a section (Advanced › API keys, People › Members). */
const part = (name: string) => page.locator('nav.subtabs').getByRole('link', { name, exact: true });

const adminJson = <T,>(method: string, path: string, body?: unknown) => adminJsonOf<T>(server, method, path, body);

beforeAll(async () => {
  buildIfStale();
  // The webhook receiver listens on 127.0.0.1: the operator's opt-in.
  // No scheduled sweep: the Data lifecycle story starts the first pass itself.
  server = await startOAuthServer({ GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: '1', GATEHOUSE_SWEEP_INTERVAL: '0' });
  receiver = await startReceiver();
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'light' });
  page = await context.newPage();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await receiver?.close();
});

describe('control panel', () => {
  it('serves the panel at /admin/ with a same-origin CSP and SPA fallback', async () => {
    const index = await fetch(`${server.url}/admin/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(index.headers.get('content-security-policy')).toBe(
      "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    const deep = await fetch(`${server.url}/admin/applications/notes/members`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toBe(await index.text());
    const missingAsset = await fetch(`${server.url}/admin/assets/nope.js`);
    expect(missingAsset.status).toBe(404);
    const bare = await fetch(`${server.url}/admin`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/admin/');

    const overview = await server.admin('GET', '/api/admin/overview');
    expect(overview.status).toBe(200);
    const body = (await overview.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      version: '0.1.0',
      issuer: server.url,
      counts: { applications: 0, people: 0, memberships: 0, pendingInvitations: 0, ssoGroups: 0 },
      discoveryUrl: `${server.url}/.well-known/openid-configuration`,
      jwksUrl: `${server.url}/api/auth/jwks`,
      caCertificateUrl: null, // no local CA without LAN TLS
      radius: { enabled: false, auth: null, accounting: null, conversations: 0 }, // the RADIUS plugin's part, off by default
    });
    expect(Object.keys(body).sort()).toEqual(['caCertificateUrl', 'counts', 'discoveryUrl', 'issuer', 'jwksUrl', 'ldap', 'radius', 'signingKey', 'uptimeSeconds', 'version']);
    const anonymous = await fetch(`${server.url}/api/admin/overview`);
    expect(anonymous.status).toBe(401);
  });

  it('signs in with the admin token (a wrong one is refused in words)', async () => {
    await page.goto(`${server.url}/admin/`);
    await page.getByLabel('Admin token').fill('not-the-token');
    await page.getByRole('button', { name: 'Use the admin token' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/not a valid admin token/i);
    await shot(page, '01-sign-in');
    await page.getByLabel('Admin token').fill(OAUTH_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Use the admin token' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByText('Pending invitations').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('gatehouse.adminToken'))).toBe(OAUTH_ADMIN_TOKEN);
    await shot(page, '02-overview');
  });

  it('creates an application through the wizard and shows the secret once with the integration snippet', async () => {
    await page.getByRole('link', { name: 'Applications' }).click();
    await page.getByText('No applications yet').waitFor();
    await shot(page, '03-applications-empty');
    await page.getByRole('link', { name: 'New application' }).click();
    // The wizard asks what is being connected first; an app without a preset is "Something else".
    await page.getByRole('heading', { name: 'What are you connecting?' }).waitFor();
    await page.getByTestId('something-else').click();
    await page.getByLabel('Name').fill('Team Notes');
    expect(await page.getByLabel('Client ID').inputValue()).toBe('team-notes');
    await page.getByLabel(/Web app with a backend/).check();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByLabel('Redirect URIs').fill('https://notes.example.com/auth/callback');
    expect(await page.getByLabel('Audience').inputValue()).toBe('https://notes.example.com/api');
    await page.getByRole('button', { name: 'Create application' }).click();

    const secret = page.getByTestId('copy-client-secret');
    await secret.waitFor();
    clientSecret = (await secret.textContent()) ?? '';
    expect(clientSecret.length).toBeGreaterThanOrEqual(32);
    const snippet = page.getByTestId('integration-snippet');
    await expect.poll(() => snippet.textContent()).toContain(`issuer: '${server.url}'`);
    const text = (await snippet.textContent()) ?? '';
    expect(text).toContain("audience: 'https://notes.example.com/api'");
    expect(text).toContain(`${server.url}/.well-known/openid-configuration`);
    expect(text).toContain("import { createRemoteJWKSet, jwtVerify } from 'jose'");
    // The .env block has the secret line, with the secret itself while it is shown (issue 36).
    expect(text).toContain(`GATEHOUSE_CLIENT_ID=team-notes\nGATEHOUSE_CLIENT_SECRET=${clientSecret}\nGATEHOUSE_AUDIENCE=https://notes.example.com/api`);
    await page.getByRole('button', { name: 'Next: Test sign-in' }).waitFor();
    await shot(page, '04-wizard-secret-once');

    const app = await adminJson<{ clientType: string; redirectUris: string[] }>('GET', '/api/admin/applications/team-notes');
    expect(app.clientType).toBe('web');
    expect(app.redirectUris).toEqual(['https://notes.example.com/auth/callback']);

    // Shown once: the application's page never shows it again. It opens on its Overview, which
    // leads a newcomer to Test sign-in while nobody has signed in yet.
    await page.getByRole('button', { name: /Done — open Team Notes/ }).click();
    await page.getByRole('heading', { name: /Team Notes/ }).waitFor();
    await page.getByTestId('next-step').getByRole('link', { name: 'Test sign-in' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/admin/applications/team-notes');
    await section('Connect').click();
    expect(new URL(page.url()).pathname).toBe('/admin/applications/team-notes/connect');
    await page.getByText('For developers: the issuer, the client and token verification').click();
    expect(await page.content()).not.toContain(clientSecret);
    // Later the .env block keeps the line, with a placeholder: the secret is kept only as a hash.
    await expect.poll(() => page.getByTestId('integration-snippet').textContent()).toContain('GATEHOUSE_CLIENT_SECRET=<the client secret shown when it was created or rotated>');
    await shot(page, '05-application-connect');

    // Token signing (issue 38): RS256 by default, with the line on which apps need it; ES256 saved.
    await section('Advanced').click();
    await part('Token signing').click();
    expect(new URL(page.url()).pathname).toBe('/admin/applications/team-notes/advanced/signing');
    const signing = page.getByTestId('token-signing');
    expect(await signing.getByLabel('Signing algorithm').inputValue()).toBe('RS256');
    expect(await signing.textContent()).toContain('Immich and python-social-auth (Django) expect RS256');
    await signing.getByLabel('Signing algorithm').selectOption('ES256');
    await signing.getByRole('button', { name: 'Save token signing' }).click();
    await page.getByText('New tokens are signed with ES256.').waitFor();
    expect((await adminJson<{ signingAlg: string }>('GET', '/api/admin/applications/team-notes')).signingAlg).toBe('ES256');
    // Back to the default for the steps below.
    await signing.getByLabel('Signing algorithm').selectOption('RS256');
    await signing.getByRole('button', { name: 'Save token signing' }).click();
    await page.getByText('New tokens are signed with RS256.').waitFor();
  });

  it('edits the sign-in policy: open sign-up and a profile field', async () => {
    await section('Access').click();
    await page.getByText(/Open — anyone may create/).click();
    await page.getByText('Email', { exact: false }).first().waitFor();
    await page.getByRole('button', { name: 'Add profile field' }).click();
    await page.getByLabel('Field key').fill('department');
    await page.getByLabel('Field label').fill('Department');
    await page.getByLabel('Field type').selectOption('select');
    await page.getByLabel('Options').fill('Sales, Engineering');
    await page.getByLabel('Required', { exact: true }).check();
    await page.getByRole('button', { name: 'Save sign-in policy' }).click();
    await page.getByText('Sign-in policy saved.').waitFor();
    await shot(page, '06-sign-in-policy');
    const policy = await adminJson<Record<string, unknown>>('GET', '/api/admin/applications/team-notes/auth-policy');
    expect(policy).toEqual({
      signup_policy: 'open',
      allowed_providers: ['email'],
      profile_fields: [
        { key: 'department', label: 'Department', type: 'select', required: true, user_editable: true, options: ['Sales', 'Engineering'] },
      ],
      mfa: 'optional',
    });

    // A limit set through the API survives a save from the panel, and limits can be set here too.
    const department = { key: 'department', label: 'Department', type: 'select', required: true, user_editable: true, options: ['Sales', 'Engineering'] };
    const nickname = { key: 'nickname', label: 'Nickname', type: 'string', required: false, user_editable: true, max_length: 40 };
    await adminJson('PATCH', '/api/admin/applications/team-notes/auth-policy', { profile_fields: [department, nickname] });
    await page.reload();
    await expect.poll(() => page.getByLabel('Maximum length').inputValue()).toBe('40');
    await page.getByRole('button', { name: 'Add profile field' }).click();
    await page.getByLabel('Field key').nth(2).fill('age');
    await page.getByLabel('Field label').nth(2).fill('Age');
    await page.getByLabel('Field type').nth(2).selectOption('integer');
    await page.getByLabel('Minimum').fill('18');
    await page.getByLabel('Options').first().fill('Sales, Engineering, Support');
    await page.getByRole('button', { name: 'Save sign-in policy' }).click();
    await page.getByText('Sign-in policy saved.').waitFor();
    const saved = await adminJson<{ profile_fields: unknown[] }>('GET', '/api/admin/applications/team-notes/auth-policy');
    expect(saved.profile_fields).toEqual([
      { ...department, options: ['Sales', 'Engineering', 'Support'] },
      nickname,
      { key: 'age', label: 'Age', type: 'integer', required: false, user_editable: true, min: 18 },
    ]);
    await adminJson('PATCH', '/api/admin/applications/team-notes/auth-policy', { profile_fields: [department] });
  });

  it('puts two applications in one shared sign-in (the API’s SSO group)', async () => {
    await adminJson('POST', '/api/admin/applications', {
      id: 'wiki',
      name: 'Wiki',
      audience: 'https://wiki.example.com/api',
      redirectUris: ['https://wiki.example.com/callback'],
      clientType: 'spa',
    });
    await page.locator('#main-nav').getByRole('link', { name: 'Shared sign-in' }).click();
    await page.getByText('No shared sign-in').waitFor();
    await page.getByLabel('New shared sign-in').fill('Office apps');
    await page.getByRole('button', { name: 'Create shared sign-in' }).click();
    const add = page.getByLabel('Add application to Office apps');
    await add.waitFor();
    await add.selectOption('team-notes');
    await page.getByRole('link', { name: 'Team Notes' }).waitFor();
    await add.selectOption('wiki');
    await page.getByRole('link', { name: 'Wiki' }).waitFor();
    await shot(page, '07-sso-groups');
    const group = await adminJson<{ applicationIds: string[] }>('GET', '/api/admin/sso-groups/office-apps');
    expect([...group.applicationIds].sort()).toEqual(['team-notes', 'wiki']);
    await page.getByRole('link', { name: 'Team Notes' }).click();
    await section('Access').click();
    await expect.poll(() => page.getByTestId('sso-sharing').textContent()).toBe('Signing in here signs in to wiki too, through the shared sign-in Office apps.');
  });

  it('shows problem details in words, checks redirect URIs line by line as they are typed, and keeps the wizard input', async () => {
    await page.goto(`${server.url}/admin/applications/new`);
    await page.getByTestId('something-else').click();
    await page.getByLabel('Name').fill('Wiki');
    // A client id already taken is reported on step 1, at the field, before anything else is typed.
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('An application with id "wiki" already exists; choose another client ID.').waitFor();
    expect(await page.getByLabel('Client ID').getAttribute('aria-invalid')).toBe('true');
    await shot(page, '07b-wizard-id-taken');
    expect(await page.locator('ol.steps li.on').textContent()).toBe('2. Name and type');
    await page.getByLabel('Client ID').fill('wiki-2');
    await page.getByRole('button', { name: 'Next' }).click();
    // As typed, each line in words: a custom scheme (not a native app), two URIs on one line, a repeat.
    const redirects = page.getByLabel('Redirect URIs', { exact: true });
    await redirects.fill('ftp://wiki2.example.com/callback\nhttps://a.example.com/cb https://b.example.com/cb\nftp://wiki2.example.com/callback');
    const messages = page.locator('.field-errors').first();
    await expect
      .poll(() => messages.locator('p').allTextContents())
      .toEqual([
        'Line 1: Custom URI schemes are allowed only for native clients.',
        'Line 2: Must not contain spaces.',
        'Line 3: Custom URI schemes are allowed only for native clients.',
        'Line 3: the same as line 1.',
      ]);
    expect(await redirects.getAttribute('aria-invalid')).toBe('true');
    expect(await redirects.getAttribute('aria-describedby')).toContain(await messages.getAttribute('id'));
    await shot(page, '08-problem-in-words');
    // Nothing is sent while a line is wrong.
    await page.getByRole('button', { name: 'Create application' }).click();
    expect(await page.getByRole('alert').count()).toBe(0);
    await redirects.fill('ftp://wiki2.example.com/callback');
    await page.getByRole('button', { name: 'Back' }).click();
    await page.getByLabel('Client ID').fill('Wiki Two');
    await page.getByText('Use 2 to 63 characters: lower-case letters, digits, - and _, starting with a letter or digit.').waitFor();
    await page.getByLabel('Client ID').fill('wiki-two');
    await page.getByRole('button', { name: 'Next' }).click();
    await redirects.waitFor();
    expect(await redirects.inputValue()).toBe('ftp://wiki2.example.com/callback');
    await redirects.fill('https://wiki2.example.com/callback');
    await expect.poll(() => messages.locator('p').count()).toBe(0);
    // Created: step 3 leads on to a test sign-in.
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByRole('button', { name: 'Next: Test sign-in' }).click();
    await page.getByText('the way the app will', { exact: false }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/admin/applications/wiki-two/test');
    expect((await server.admin('DELETE', '/api/admin/applications/wiki-two')).status).toBe(204);
  });

  it('invites people (pasting several addresses) and revokes one after confirming', async () => {
    await page.goto(`${server.url}/admin/applications/team-notes/people/invitations`);
    await page.getByText('No pending invitations.').waitFor();
    await page.getByLabel('Invite people').fill('Ann <ann@example.com>, bob@example.com\ncid@example.com; ann@example.com\nnot-an-address');
    // The bad line is marked as typed; the valid addresses are still counted and sent.
    await page.getByText('3 addresses found; 1 not an address, skipped (marked below)').waitFor();
    await page.getByText('Line 3: “not-an-address” is not an e-mail address.').waitFor();
    await page.getByRole('button', { name: 'Send 3 invitations' }).click();
    await page.getByText('3 of 3 done').waitFor();
    await expect.poll(() => page.getByTestId('skipped').textContent()).toBe('1 address was not invited:not-an-address — not an e-mail address');
    await page.getByText(/3 invitation e-mails were not sent/).waitFor();
    // No mail server here: the toast does not claim they were sent.
    await page.getByText('3 invitations created; none was e-mailed. Copy the links below.').waitFor();
    await page.locator('tr[data-invitation="cid@example.com"]').waitFor();
    // The accept link can be copied during this visit.
    await page.getByRole('button', { name: 'Copy invitation link for bob@example.com' }).waitFor();
    await shot(page, '08-invitations');
    // And after leaving the tab and coming back (m6): the panel keeps the links in its memory.
    await page.locator('nav.subtabs').getByRole('link', { name: 'Members' }).click();
    await page.getByLabel('Search members').waitFor();
    await page.locator('nav.subtabs').getByRole('link', { name: 'Invitations' }).click();
    await page.locator('tr[data-invitation="cid@example.com"]').waitFor();
    for (const email of ['ann@example.com', 'bob@example.com', 'cid@example.com']) {
      await page.getByRole('button', { name: `Copy invitation link for ${email}` }).waitFor();
    }

    // Keyboard: Escape cancels a confirmation and nothing is revoked.
    await page.locator('tr[data-invitation="ann@example.com"]').getByRole('button', { name: 'Revoke' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').getByText('Revoke the invitation for ann@example.com?').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });

    await page.locator('tr[data-invitation="bob@example.com"]').getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Revoke the invitation for bob@example.com?').waitFor();
    await shot(page, '09-confirm-revoke');
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('Invitation for bob@example.com revoked.').waitFor();
    await expect.poll(() => page.locator('tr[data-invitation]').count()).toBe(2);

    // Addresses the server skips are listed with its reason.
    await page.getByLabel('Invite people').fill('cid@example.com');
    await page.getByRole('button', { name: 'Send 1 invitation' }).click();
    await page.getByText('No new invitations: every address was skipped.').waitFor();
    await expect.poll(() => page.getByTestId('skipped').textContent()).toBe('1 address was not invited:cid@example.com — already has a pending invitation');

    const list = await adminJson<{ invitations: { email: string; status: string }[] }>('GET', '/api/admin/applications/team-notes/invitations');
    expect(Object.fromEntries(list.invitations.map((i) => [i.email, i.status]))).toEqual({
      'ann@example.com': 'pending',
      'bob@example.com': 'revoked',
      'cid@example.com': 'pending',
    });
  });

  it('suspends a member after confirming', async () => {
    // A person joins through open sign-up in this browser (the cookie is reused by the test sign-in).
    const signUp = await context.request.post(`${server.url}/api/auth/sign-up/email`, {
      data: { email: 'dee@example.com', password: 'correct horse battery', name: 'Dee', applicationId: 'team-notes' },
    });
    expect(signUp.status()).toBe(201);
    await part('Members').click();
    const row = page.locator('tr[data-member="dee@example.com"]');
    await row.waitFor();
    await page.getByLabel('Search members').fill('nobody');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No members match these filters.').waitFor();
    await page.getByLabel('Search members').fill('dee');
    await page.getByRole('button', { name: 'Search' }).click();
    await row.waitFor();
    await row.getByRole('button', { name: 'Suspend' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Suspend' }).click();
    await page.getByText('dee@example.com suspended.').waitFor();
    await row.getByRole('button', { name: 'Activate' }).waitFor();
    await shot(page, '10-members');
    const users = await adminJson<{ users: { email: string; status: string }[] }>('GET', '/api/admin/applications/team-notes/users');
    expect(users.users.map((u) => [u.email, u.status])).toEqual([['dee@example.com', 'suspended']]);

    await row.getByRole('button', { name: 'Activate' }).click();
    await page.getByText('dee@example.com activated.').waitFor();
  });

  it('creates an API key (shown once) and revokes it', async () => {
    await section('Advanced').click();
    await part('API keys').click();
    await page.getByText('No API keys.').waitFor();
    await page.getByLabel('Key name').fill('Provisioning');
    await page.getByLabel('invitations:write').check();
    await page.getByRole('button', { name: 'Create API key' }).click();
    const key = page.getByTestId('copy-api-key');
    await key.waitFor();
    const value = (await key.textContent()) ?? '';
    const probe = await fetch(`${server.url}/api/admin/applications/team-notes/users`, { headers: { authorization: `Bearer ${value}` } });
    expect(probe.status).toBe(200);
    await shot(page, '11-api-keys');

    await page.locator('tr[data-api-key="Provisioning"]').getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('Key Provisioning revoked.').waitFor();
    await page.getByText('No API keys.').waitFor();
    const after = await fetch(`${server.url}/api/admin/applications/team-notes/users`, { headers: { authorization: `Bearer ${value}` } });
    expect(after.status).toBe(401);
  });

  it('sets a webhook, sends a test event and lists the delivery', async () => {
    await part('Webhooks').click();
    await page.getByText('No deliveries yet.').waitFor();
    await page.getByLabel('Webhook URL').fill(`${receiver.url}/hooks`);
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByTestId('copy-webhook-secret').waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('Test event queued.').waitFor();
    const [delivered] = await receiver.waitFor(1);
    expect(JSON.parse(delivered!.body)).toMatchObject({ type: 'webhook.test', applicationId: 'team-notes' });
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return page.locator('tr', { hasText: 'webhook.test' }).textContent();
      })
      .toContain('succeeded');
    await shot(page, '12-webhooks');
  });

  it('runs the test sign-in round trip and shows the decoded access token', async () => {
    await section('Test sign-in').click();
    // No client secret: the admin API exchanges the code (issue 33). One click adds the panel's
    // callback to the redirect URIs and starts (this browser has Dee's session for the app).
    expect(await page.getByLabel('Client secret').count()).toBe(0);
    const popupPromise = page.waitForEvent('popup');
    await page.getByRole('button', { name: 'Add it and start' }).click();
    const popup = await popupPromise;
    await popup.waitForLoadState().catch(() => {});
    const result = page.getByTestId('test-sign-in-result');
    await result.waitFor({ timeout: 20_000 });
    expect(await page.getByTestId('signed-in-person').textContent()).toBe('Dee <dee@example.com>');
    const text = (await result.textContent()) ?? '';
    expect(text).toContain('https://notes.example.com/api');
    expect(text).toContain('member role here: member');
    expect(text).toMatch(/"role": "member"/);
    expect(text).toMatch(/"status": "active"/);
    await shot(page, '13-test-sign-in');
    // The page's record is updated, so Connect (which saves the whole list) keeps the new URI.
    await section('Connect').click();
    await expect.poll(() => page.locator('textarea[name="redirectUris"]').inputValue()).toContain(`${server.url}/admin/callback`);
  });

  it('connects an app from a preset: the searchable list, its inputs checked in words, the set-up page, and Test sign-in with the preset\'s checks', async () => {
    await page.goto(`${server.url}/admin/applications/new`);
    await page.getByRole('heading', { name: 'What are you connecting?' }).waitFor();
    expect(await page.locator('button.preset').count()).toBeGreaterThanOrEqual(20);
    await page.getByLabel('Search apps').fill('outl');
    await expect.poll(() => page.locator('button.preset strong').allTextContents()).toEqual(['Outline']);
    await page.getByLabel('Search apps').fill('zzz');
    await page.getByText('No preset matches "zzz".', { exact: false }).waitFor();
    await page.getByLabel('Search apps').fill('outline');
    await page.locator('button[data-preset="outline"]').click();
    await page.getByRole('heading', { name: 'Connect Outline' }).waitFor();
    // Nothing typed: said at the field; a malformed address: the server's words at the field.
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByText('This is required.').waitFor();
    const address = page.getByLabel('Outline address (URL)');
    await address.fill('ftp://wiki.lan.example');
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByText('Must be an http(s) URL').waitFor();
    expect(await address.getAttribute('aria-invalid')).toBe('true');
    await address.fill('https://wiki.lan.example');
    await page.getByRole('button', { name: 'Create application' }).click();
    // The set-up page: the secret once, above the settings and the .env, which have it in place
    // (not a placeholder), and no note to replace a placeholder.
    const secret = (await page.getByTestId('shown-once').getByTestId('copy-client-secret').textContent()) ?? '';
    expect(secret).toMatch(/^ghs_/);
    const setup = page.getByTestId('setup');
    await expect.poll(() => setup.textContent()).toContain(`OIDC_CLIENT_SECRET=${secret}`);
    expect(await setup.textContent()).not.toContain('<client-secret>');
    expect(await page.locator('ol.steps li.on').textContent()).toBe('3. Set up the app');
    await shot(page, '13b-preset-setup');

    // Test sign-in asks for the preset's scopes and shows its checks in words.
    await adminJson('PATCH', '/api/admin/applications/outline/auth-policy', { signup_policy: 'open' });
    await page.getByRole('button', { name: 'Next: Test sign-in' }).click();
    await page.getByText('Asks for the scopes the app asks for: openid offline_access profile email.').waitFor();
    const popupPromise = page.waitForEvent('popup');
    await page.getByRole('button', { name: 'Add it and start' }).click();
    const popup = await popupPromise;
    await popup.getByLabel('Password').waitFor();
    if (await popup.getByLabel('E-mail').count()) await popup.getByLabel('E-mail').fill('dee@example.com');
    await popup.getByLabel('Password').fill('correct horse battery');
    // This browser is signed in as Dee for another application: the page offers to continue as her.
    await popup.getByRole('button', { name: /^(Sign in|Continue as)/ }).first().click();
    const checks = page.getByTestId('test-sign-in-checks');
    await checks.waitFor({ timeout: 20_000 });
    const lines = await checks.locator('li').allTextContents();
    expect(lines[0]).toBe('passes a refresh token was issued (Outline keeps the session with it): a refresh token was issued');
    expect(lines[1]).toMatch(/^(passes|fails) preferred_username is in the ID token \(OIDC_USERNAME_CLAIM\): /);
    await shot(page, '13c-test-sign-in-checks');
    // The later stories count the applications made before this one.
    await adminJson('DELETE', '/api/admin/applications/outline');
  });

  it('shows providers and the audit log, in both themes', async () => {
    await page.getByRole('link', { name: 'Sign-in providers' }).click();
    await page.getByText('GOOGLE_CLIENT_ID').waitFor();
    await shot(page, '14-providers');
    await page.getByRole('link', { name: 'Audit log' }).click();
    // Names, not ids: the application and the person link to their pages; details are key/value.
    const created = page.locator('tr[data-action="application.created"]').last();
    await created.getByRole('link', { name: 'Team Notes' }).first().waitFor();
    expect(await created.locator('dl.kv dt').allTextContents()).toEqual(['name', 'clientType']);
    expect(await created.locator('dl.kv dd').allTextContents()).toEqual(['Team Notes', 'web']);
    // Where the change came from (issue 36): the request's address, under who made it.
    expect(await created.locator('td').nth(1).textContent()).toBe('Administratorfrom 127.0.0.1');
    const signedUp = page.locator('tr[data-action="person.signed_up"]').first();
    expect(await signedUp.getByRole('link', { name: 'Dee <dee@example.com>' }).first().getAttribute('href')).toMatch(/^\/admin\/people\/usr_/);
    await shot(page, '15-audit-log');
    // Filters: by action (a list of the actions the log holds), by who (an e-mail address), by date.
    const actions = await page.getByLabel('Action').locator('option').allTextContents();
    expect(actions[0]).toBe('Any action');
    expect(actions.slice(1)).toEqual((await adminJson<{ actions: string[] }>('GET', '/api/admin/audit-log/actions')).actions);
    expect(actions).toEqual(expect.arrayContaining(['api_key.created', 'application.created', 'person.signed_up']));
    await page.getByLabel('Action').selectOption('api_key.created');
    await expect.poll(async () => [...new Set(await page.locator('tr[data-action]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action'))))]).toEqual(['api_key.created']);
    expect(page.url()).toContain('action=api_key.created');
    await page.getByLabel('Action').selectOption('');
    await page.getByLabel('Who').selectOption('person');
    await page.getByLabel('Their e-mail address').fill('dee@example.com');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(async () => [...new Set(await page.locator('tr[data-action]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action'))))]).toEqual(['person.signed_up']);
    await page.getByLabel('From').fill('2099-01-01');
    await page.getByText('No entries match these filters.').waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await created.waitFor();
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByText('Pending invitations').waitFor();
    await shot(page, '16-overview-dark');
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).toBe('rgb(20, 23, 28)');

    const overview = await adminJson<{ counts: Record<string, number>; signingKey: string | null }>('GET', '/api/admin/overview');
    expect(overview.counts).toEqual({ applications: 2, people: 1, memberships: 1, pendingInvitations: 2, ssoGroups: 1 });
    expect(overview.signingKey).toMatch(/^kid_/);
    await page.getByText(overview.signingKey!).waitFor();
  });

  it('shows the sweeper and the deletes under way, and runs a sweep on demand', async () => {
    await page.getByRole('link', { name: 'Data lifecycle' }).click();
    await page.getByRole('heading', { name: 'Retention sweeper' }).waitFor();
    await page.getByText('The schedule is off (GATEHOUSE_SWEEP_INTERVAL=0); a pass runs only when started here.').waitFor();
    await expect.poll(() => page.getByTestId('sweeper-last-run').textContent()).toBe('No pass yet.');
    await page.getByText('No deletes under way: every deleted application, group and member is gone entirely.').waitFor();
    expect(await page.getByRole('region', { name: 'How long ended data is kept' }).locator('tbody tr').allTextContents()).toEqual([
      'Refresh tokens and one-time links7 daysGATEHOUSE_RETENTION_TOKENS_DAYS',
      'Sessions7 daysGATEHOUSE_RETENTION_SESSIONS_DAYS',
      'Webhook deliveries30 daysGATEHOUSE_RETENTION_WEBHOOKS_DAYS',
      'Audit log entries400 daysGATEHOUSE_RETENTION_AUDIT_DAYS',
      'Invitations90 daysGATEHOUSE_RETENTION_INVITATIONS_DAYS',
    ]);
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.getByText('Sweep started.').waitFor();
    await expect.poll(() => page.getByTestId('sweeper-last-run').textContent(), { timeout: 15_000 }).toMatch(/^Last pass: .+ \(\d+ ms\): (nothing was due|\d+ rows? deleted)/);
    await page.getByText('1 pass so far', { exact: false }).waitFor();
    await shot(page, '16b-data-lifecycle');
    const ops = await adminJson<{ sweeper: { runs: number; running: boolean } }>('GET', '/api/admin/operations');
    expect([ops.sweeper.runs, ops.sweeper.running]).toEqual([1, false]);
  });

  it('lists past the first 200 rows with "Load more"', async () => {
    const emails = Array.from({ length: 201 }, (_, i) => `person${String(i).padStart(3, '0')}@example.com`);
    for (let i = 0; i < emails.length; i += 100) {
      await adminJson('POST', '/api/admin/applications/wiki/invitations', { emails: emails.slice(i, i + 100), role: 'member' });
    }
    await page.goto(`${server.url}/admin/applications/wiki/people/invitations`);
    await expect.poll(() => page.locator('tr[data-invitation]').count()).toBe(200);
    await page.getByRole('button', { name: 'Load more (showing 200)' }).click();
    await expect.poll(() => page.locator('tr[data-invitation]').count()).toBe(201);
    await page.locator('tr[data-invitation="person200@example.com"]').waitFor();
    expect(await page.getByRole('button', { name: /Load more/ }).count()).toBe(0);
  });

  it('names an app manager by picking applications by name, not typing client IDs (issue 44, m5)', async () => {
    await page.locator('#main-nav').getByRole('link', { name: 'Administrators' }).click();
    const form = page.getByRole('form', { name: 'Name an administrator' });
    await form.getByLabel('E-mail address of an existing person').fill('dee@example.com');
    await form.getByLabel('Role').selectOption('app_manager');
    const picker = form.getByRole('group', { name: 'Applications they manage' });
    await picker.getByLabel('Find an application').fill('team');
    await picker.getByRole('button', { name: 'Add Team Notes team-notes' }).click();
    await picker.locator('li.chip[data-application="team-notes"]').waitFor();
    await form.getByRole('button', { name: 'Add' }).click();
    await page.getByText("Dee's role is saved.").waitFor();
    const dee = () => adminJson<{ administrators: { email: string; role: string; applications: string[] }[] }>('GET', '/api/admin/administrators').then((l) => l.administrators.find((a) => a.email === 'dee@example.com'));
    expect(await dee()).toMatchObject({ role: 'app_manager', applications: ['team-notes'] });

    // In the row: Enter takes the first match; the chip's × removes one.
    const row = page.locator('tr[data-administrator="dee@example.com"]');
    const rowPicker = row.getByRole('group', { name: 'Applications Dee manages' });
    await rowPicker.getByLabel('Find an application').fill('wiki');
    await rowPicker.getByLabel('Find an application').press('Enter');
    await rowPicker.getByRole('button', { name: 'Remove Team Notes' }).click();
    await shot(page, '16c-administrators-app-picker');
    await row.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await dee())?.applications).toEqual(['wiki']);
    expect(await seriousViolations(page)).toEqual([]);
    // As before, for the stories below.
    await row.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await page.getByText('Dee is no longer an administrator.').waitFor();
    await row.waitFor({ state: 'detached' });
    expect(await dee()).toBeUndefined();
  });

  it('deletes an application after confirming', async () => {
    await page.goto(`${server.url}/admin/applications/wiki/advanced`);
    await page.getByRole('button', { name: 'Delete application' }).click();
    await page.getByRole('dialog').getByText('Delete Wiki?').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Wiki deleted.').waitFor();
    await page.getByRole('heading', { name: 'Applications' }).waitFor();
    expect((await server.admin('GET', '/api/admin/applications/wiki')).status).toBe(404);
  });

  it('uses the Electron preload bridge instead of the sign-in screen when it is present', async () => {
    // The same build in the desktop app: window.gatehouse.getConfig() supplies URL and token.
    // The desktop window's size (electron/window.ts).
    const desktop = await browser.newContext({ viewport: { width: 1200, height: 820 } });
    // The shell reads the token on every call: the first answer is one rotated away since, so the
    // panel's first request gets 401, asks again and retries with the current token.
    let calls = 0;
    await desktop.exposeFunction('shellConfig', () => ({
      serverUrl: server.url,
      adminToken: calls++ === 0 ? 'rotated-away-admin-token-0123456789' : OAUTH_ADMIN_TOKEN,
    }));
    await desktop.addInitScript(() => {
      const shell = window as unknown as { shellConfig(): Promise<{ serverUrl: string; adminToken: string }> };
      Object.defineProperty(window, 'gatehouse', { value: Object.freeze({ getConfig: () => shell.shellConfig() }) });
    });
    const tab = await desktop.newPage();
    await tab.goto(`${server.url}/admin/applications`);
    await tab.getByRole('link', { name: 'Team Notes' }).waitFor();
    expect(await tab.getByRole('link', { name: 'Wiki' }).count()).toBe(0);
    expect(await tab.getByLabel('Admin token').count()).toBe(0);
    expect(await tab.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    expect(await tab.evaluate(() => sessionStorage.getItem('gatehouse.adminToken'))).toBeNull();
    // The first answer, then one more for each request refused with the rotated-away token: the
    // panel opens with two (the page's list and /api/admin/me, its role); the second may start
    // after the first retry has already taken the current token (timing), so two or three calls.
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(calls).toBeLessThanOrEqual(3);
    await shot(tab, '17-desktop-bridge');
    // The same application page as in a browser: its sections in one row, Test sign-in on screen.
    await tab.getByRole('link', { name: 'Team Notes' }).click();
    const sections = tab.getByRole('navigation', { name: 'Application sections' });
    expect(await sections.getByRole('link').allTextContents()).toEqual(['Overview', 'Connect', 'Test sign-in', 'Access', 'People', 'Claims', 'Advanced']);
    const test = (await sections.getByRole('link', { name: 'Test sign-in' }).boundingBox())!;
    expect(test.y + test.height).toBeLessThanOrEqual(820);
    await sections.getByRole('link', { name: 'Test sign-in' }).click();
    await tab.getByRole('button', { name: 'Start test sign-in' }).waitFor();
    await shot(tab, '18-desktop-application');
    await desktop.close();
  });
});
