/**
 * Gatehouse's SAML identity provider with a real service provider (issue 42, item 7): Debian's
 * Apache 2.4 with libapache2-mod-auth-mellon (lasso and xmlsec underneath), started from its own
 * configuration in a temporary directory on loopback. The SP's key, certificate and metadata come
 * from mellon's own `mellon_create_metadata`; that metadata is imported through the admin API
 * (`POST …/saml/metadata`), and mellon reads Gatehouse's from `/saml/metadata`. Chromium then goes
 * through the whole thing as a person does: the protected page, mellon's signed AuthnRequest, the
 * hosted sign-in page, the auto-posting form (its script from our origin, no inline script), and
 * the page the app serves with the attributes mellon took from the assertion. Mellon's logout
 * (SP-initiated single logout) ends the Gatehouse session; a second visit signs in again.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { adminJsonOf, startOAuthServer, type OAuthServer, PASSWORD } from '../helpers/oauth-server.js';
import { freePort } from '../helpers/free-port.js';
import { startApache, type Apache } from '../helpers/apache.js';
import { launchChromium } from '../helpers/panel-browser.js';

let server: OAuthServer;
let apache: Apache;
let chromium: Browser;
let dir: string;
let site: string;
const ENTITY = 'urn:gatehouse-test:mellon';

beforeAll(async () => {
  server = await startOAuthServer();
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-mellon-'));
  const port = await freePort();
  // Same host as Gatehouse (another port): one site, so mellon's SameSite=Lax cookie rides the ACS POST.
  site = `http://127.0.0.1:${port}`;
  execFileSync('mellon_create_metadata', [ENTITY, `${site}/mellon`], { cwd: dir, stdio: 'pipe' });
  const base = ENTITY.replace(/[^0-9A-Za-z.]/g, '_').replace(/__+/g, '_');
  const spMetadata = readFileSync(join(dir, `${base}.xml`), 'utf8');

  await adminJsonOf(server, 'POST', '/api/admin/applications', {
    id: 'intranet', name: 'Intranet', audience: `${site}/`, redirectUris: [`${site}/`], authPolicy: { signup_policy: 'open' },
    saml: {
      entityId: ENTITY, acs: [{ url: `${site}/mellon/postResponse` }],
      attributes: [
        { name: 'mail', source: { type: 'personField', field: 'email' } },
        { name: 'uid', source: { type: 'personField', field: 'username' } },
        { name: 'displayName', source: { type: 'personField', field: 'name' } },
        { name: 'role', source: { type: 'role' } },
      ],
    },
  });
  // The SP's own metadata fills in its endpoints and its signing certificate.
  const imported = await adminJsonOf<{ saml: { acs: unknown[]; slo: unknown; spCertificates: string[] } }>(server, 'POST', '/api/admin/applications/intranet/saml/metadata', { xml: spMetadata });
  expect(imported.saml.acs).toEqual([{ url: `${site}/mellon/postResponse`, binding: 'HTTP-POST', index: 0 }]);
  expect(imported.saml.slo).toEqual({ url: `${site}/mellon/logout`, binding: 'HTTP-Redirect' });
  expect(imported.saml.spCertificates).toHaveLength(1);
  await adminJsonOf(server, 'PATCH', '/api/admin/applications/intranet', { saml: { ...imported.saml, wantAuthnRequestsSigned: true, entityId: ENTITY } });

  writeFileSync(join(dir, 'idp.xml'), await (await fetch(`${server.url}/saml/metadata?app=intranet`)).text());
  apache = await startApache(dir, port, ['auth_mellon', 'include'], [
    'AddType text/html .shtml',
    'AddOutputFilter INCLUDES .shtml',
    `<Directory "${dir}/htdocs">`,
    '  Options +Includes',
    '</Directory>',
    '<Location />',
    '  MellonEnable "auth"',
    '  AuthType "Mellon"',
    '  Require valid-user',
    '  MellonEndpointPath "/mellon"',
    `  MellonSPPrivateKeyFile "${dir}/${base}.key"`,
    `  MellonSPCertFile "${dir}/${base}.cert"`,
    `  MellonSPMetadataFile "${dir}/${base}.xml"`,
    `  MellonIdPMetadataFile "${dir}/idp.xml"`,
    '  MellonUser "uid"',
    // Secure (HttpOnly too): mellon's cookie test is SameSite=None, which browsers keep only when Secure; loopback is a secure context.
    '  MellonSecureCookie On',
    '  MellonSignatureMethod rsa-sha256',
    '</Location>',
  ]);
  writeFileSync(join(dir, 'htdocs', 'app.shtml'),
    'user=<!--#echo var="REMOTE_USER" --> mail=<!--#echo var="MELLON_mail" --> name=<!--#echo var="MELLON_displayName" --> role=<!--#echo var="MELLON_role" -->\n');
  chromium = await launchChromium();
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await apache?.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Apache with mod_auth_mellon as the service provider', () => {
  it('signs a person in through the hosted page in Chromium; the app sees the attributes; mellon\'s logout ends the Gatehouse session', async () => {
    const context = await chromium.newContext();
    const page = await context.newPage();
    const requests: string[] = [];
    page.on('request', (r) => requests.push(`${r.method()} ${r.url().split('?')[0]}`));
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/.test(m.text())) violations.push(m.text());
    });

    await page.goto(`${site}/app.shtml`);
    // Mellon sent the browser to Gatehouse's SSO endpoint, which sent it to the hosted sign-in.
    expect(new URL(page.url()).pathname, apache.errorLog()).toBe('/sign-in');
    expect(requests.some((r) => r === `GET ${server.url}/saml/sso`)).toBe(true);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.fill('input[name="email"]', 'ada@example.com');
    await page.fill('input[name="name"]', 'Ada Lovelace');
    await page.fill('input[name="password"]', PASSWORD);
    await Promise.all([page.waitForURL(`${site}/app.shtml`, { timeout: 30_000 }), page.locator('form button[type="submit"]').first().click()]);
    // The auto-posting form went to mellon's ACS by itself (our page script), then mellon to the page.
    expect(requests).toContain(`POST ${site}/mellon/postResponse`);
    const text = await page.locator('body').innerText();
    expect(text.trim(), apache.errorLog()).toBe('user=ada mail=ada@example.com name=Ada Lovelace role=member');
    expect(violations).toEqual([]);
    expect(await apache.accessLogWith('ada GET /app.shtml HTTP/1.1 200')).toContain('ada GET /app.shtml HTTP/1.1 200');

    // Signed in at Gatehouse: a new mellon session (its cookie gone) is answered without a page.
    await context.clearCookies({ domain: '127.0.0.1', name: 'mellon-cookie' });
    await page.goto(`${site}/app.shtml`);
    expect(page.url()).toBe(`${site}/app.shtml`);

    // Mellon's logout: a signed LogoutRequest to Gatehouse, which ends the session and answers.
    requests.length = 0;
    await page.goto(`${site}/mellon/logout?ReturnTo=${encodeURIComponent(`${site}/index.html`)}`);
    // Mellon → Gatehouse's SLO (its LogoutRequest) → mellon (our LogoutResponse) → where it was asked to
    // return, which is protected: mellon asks Gatehouse again, whose session is over, so the sign-in page.
    expect(requests.filter((r) => !/\.(css|js)$/.test(r))).toEqual([
      `GET ${site}/mellon/logout`, `GET ${server.url}/saml/slo`, `GET ${site}/mellon/logout`, `GET ${site}/index.html`,
      `GET ${site}/mellon/login`, `GET ${server.url}/saml/sso`, `GET ${server.url}/sign-in`,
    ]);
    expect(new URL(page.url()).pathname, apache.errorLog()).toBe('/sign-in');
    await context.close();
  });
});
