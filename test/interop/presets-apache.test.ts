/**
 * The Apache mod_auth_openidc preset for real (issue 37, item 5): the application is created from
 * the preset, Debian's Apache 2.4 with libapache2-mod-auth-openidc is configured with the file from
 * GET …/setup alone (its placeholders filled in), and a person signs in: the module sends the
 * browser to Gatehouse, takes the code back at its vanity redirect URI, exchanges it with PKCE and
 * the client secret, and serves the page with REMOTE_USER = the Gatehouse username
 * (OIDCRemoteUserClaim preferred_username). Its logout ends the Gatehouse session too.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { freePort } from '../helpers/free-port.js';
import { startApache, type Apache } from '../helpers/apache.js';
import { fill, fromPreset, setupFile, signedInBrowser } from '../helpers/preset-interop.js';
import { Browser } from '../helpers/browser-jar.js';

let server: OAuthServer;
let apache: Apache;
let dir: string;
let site: string;

beforeAll(async () => {
  server = await startOAuthServer();
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-presets-apache-'));
  const port = await freePort();
  site = `http://localhost:${port}`;
  const { app, setup } = await fromPreset(server, 'apache-mod-auth-openidc', { baseUrl: site }, 'intranet');
  expect(app.redirectUris).toEqual([`${site}/redirect_uri`]);
  const conf = join(dir, 'gatehouse-openidc.conf');
  writeFileSync(conf, fill(setupFile(setup, 'gatehouse-openidc.conf'), { clientSecret: app.clientSecret!, appSecret: randomBytes(24).toString('base64url') }));
  apache = await startApache(dir, port, ['auth_openidc'], [`Include "${conf}"`]);
}, 60_000);

afterAll(async () => {
  await apache?.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Apache httpd with mod_auth_openidc, configured from the preset\'s set-up text', () => {
  it('sends an anonymous visitor to Gatehouse with PKCE and the preset\'s scopes; answers a script\'s request with 401', async () => {
    const res = await new Browser([], { navigate: true }).request(`${site}/`);
    expect(res.status, apache.errorLog()).toBe(302);
    const authorize = new URL(res.headers.get('location')!);
    expect(authorize.origin + authorize.pathname).toBe(`${server.url}/api/auth/oauth2/authorize`);
    expect(Object.fromEntries(['client_id', 'redirect_uri', 'scope', 'response_type', 'code_challenge_method'].map((k) => [k, authorize.searchParams.get(k)]))).toEqual({
      client_id: 'intranet', redirect_uri: `${site}/redirect_uri`, scope: 'openid email profile', response_type: 'code', code_challenge_method: 'S256',
    });
    // Not a page navigation (fetch says Sec-Fetch-Mode: cors): the module answers 401, as the preset's caveat says.
    expect((await fetch(`${site}/`, { redirect: 'manual' })).status).toBe(401);
  });

  it('signs a member in: the page is served with REMOTE_USER set to their Gatehouse username, and logout ends the Gatehouse session', async () => {
    const browser = await signedInBrowser(server, 'intranet', 'ada@example.com', [new URL(site).host]);
    const visit = await browser.follow(`${site}/`);
    expect(visit.res.status, `${apache.errorLog()}\n${JSON.stringify(visit.hops)}`).toBe(200);
    expect(await visit.res.text()).toBe('the protected page\n');
    // Apache → Gatehouse → Apache's redirect URI (code exchanged there) → the page.
    expect(visit.hops.map((h) => new URL(h.url).pathname)).toEqual(['/', '/api/auth/oauth2/authorize', '/redirect_uri', '/']);
    expect(await apache.accessLogWith('ada GET / HTTP/1.1 200')).toContain('ada GET / HTTP/1.1 200');

    // The module's logout goes through Gatehouse's end-session endpoint with the ID token hint.
    const logout = await browser.follow(`${site}/redirect_uri?logout=${encodeURIComponent(`${site}/`)}`);
    expect(logout.hops.some((h) => new URL(h.url).pathname === '/api/auth/oauth2/end-session'), JSON.stringify(logout.hops)).toBe(true);
  });
});
