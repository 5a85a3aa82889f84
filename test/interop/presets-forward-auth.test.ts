/**
 * The forward-auth presets for real (issue 37, item 5: "Caddy and nginx for the forward-auth
 * presets"): Home Assistant's and Uptime Kuma's applications are created from their presets, and
 * Debian's Caddy 2.6 and nginx 1.22 run the configuration files of GET …/setup alone (the
 * Caddyfile and nginx.conf, as written, for the preset's `upstream`), each in front of a stand-in
 * for the app that echoes what it receives (neither app runs here). A member of the allowed
 * group reaches the app through the proxies' own redirects, with the identity headers Gatehouse
 * sets and none a client forged (in either spelling, Remote-User or Remote_User); a member outside
 * the group and a script without a session do not. The app's WebSocket (both apps' pages live on
 * one) passes through each proxy for a member, with the identity headers (issue 44, M2).
 *
 * The protected hosts are `localhost:<port>` (plain http on loopback, as the base URL's rules
 * allow); Gatehouse stays on 127.0.0.1, so the site cookie and Gatehouse's are on different hosts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startOAuthServer, adminJsonOf, type OAuthServer } from '../helpers/oauth-server.js';
import { freePort } from '../helpers/free-port.js';
import { get, startCaddy, startEcho, startNginx, type Echo, type Proxy } from '../helpers/proxies.js';
import { fromPreset, setupFile, setupSetting, signedInBrowser, type Setup } from '../helpers/preset-interop.js';

interface Site {
  preset: 'home-assistant' | 'uptime-kuma';
  proxyName: 'caddy' | 'nginx';
  url: string;
  port: number;
  setup: Setup;
  proxy: Proxy;
}

let server: OAuthServer;
let echo: Echo;
const sites: Site[] = [];

beforeAll(async () => {
  // The proxies connect from 127.0.0.1: Gatehouse believes their forwarded headers, nobody else's.
  server = await startOAuthServer({ GATEHOUSE_TRUST_PROXY: '127.0.0.1' });
  echo = await startEcho();
  await adminJsonOf(server, 'POST', '/api/admin/groups', { id: 'household', name: 'Household' });
  for (const [preset, proxyName] of [['home-assistant', 'caddy'], ['uptime-kuma', 'nginx']] as const) {
    const port = await freePort();
    const url = `http://localhost:${port}`;
    const { app, setup } = await fromPreset(server, preset, { baseUrl: url, upstream: echo.url, allowedGroup: 'household' });
    expect(app.id).toBe(preset);
    expect(setupSetting(setup, 'Protected host')).toBe(`localhost:${port}`);
    const proxy = proxyName === 'caddy'
      ? await startCaddy(setupFile(setup, 'Caddyfile'), port)
      // The configuration listens on every address; this test's nginx only on loopback.
      : await startNginx(setupFile(setup, 'nginx.conf').replaceAll(`listen ${port};`, `listen 127.0.0.1:${port};`), port);
    sites.push({ preset, proxyName, url, port, setup, proxy });
  }
}, 60_000);

afterAll(async () => {
  for (const site of sites) await site.proxy.stop();
  await echo?.close();
  await server?.stop();
});

interface Echoed {
  url: string;
  headers: Record<string, string | undefined>;
}

const identity = (echoed: Echoed) => Object.fromEntries(['remote-user', 'remote-email', 'remote-groups'].map((h) => [h, echoed.headers[h]]));

/** A WebSocket to the site through its proxy: the open socket and its first message, or the HTTP status that refused it. */
function openSocket(port: number, path: string, headers: Record<string, string>) {
  return new Promise<{ ws: WebSocket; first: string } | { status: number }>((resolve, reject) => {
    const ws = new WebSocket(`ws://localhost:${port}${path}`, { headers, family: 4 });
    ws.once('message', (data) => resolve({ ws, first: String(data) }));
    ws.once('unexpected-response', (_request, response) => {
      resolve({ status: response.statusCode ?? 0 });
      response.resume();
      ws.terminate();
    });
    ws.once('error', reject);
  });
}

/** A person signed in to Gatehouse (joining by the app's open sign-up), put in the household group when `household`. */
async function person(site: Site, email: string, household: boolean) {
  const browser = await signedInBrowser(server, site.preset, email, [new URL(site.url).host]);
  if (household) await adminJsonOf(server, 'PUT', `/api/admin/groups/household/members/${browser.personId}`);
  return browser;
}

describe.each([['home-assistant', 'Caddy'], ['uptime-kuma', 'nginx']])('the %s preset behind %s, configured from its set-up text alone', (preset) => {
  const site = () => sites.find((s) => s.preset === preset)!;

  it('sends a browser without a session to Gatehouse, and answers a script with 401', async () => {
    const { url, port, proxy } = site();
    const visit = await get(port, `localhost:${port}`, '/lovelace?x=1', { accept: 'text/html' });
    expect(visit.status, proxy.log()).toBe(302);
    const start = new URL(visit.headers.location!);
    expect(start.origin + start.pathname).toBe(`${server.url}/api/auth/forward/start`);
    expect(start.searchParams.get('rd')).toBe(`${url}/lovelace?x=1`);
    const script = await get(port, `localhost:${port}`, '/api/states', { accept: 'application/json' });
    expect([script.status, script.headers['www-authenticate']]).toEqual([401, 'Bearer realm="gatehouse"']);
  });

  it('lets a member of the allowed group through the hand-over; the app gets Gatehouse\'s identity headers and never a forged one', async () => {
    const { preset, url, port, proxy } = site();
    const browser = await person(site(), `ada.${preset}@example.com`, true);
    const visit = await browser.follow(`${url}/lovelace?x=1`);
    expect(visit.res.status, `${proxy.log()}\n${JSON.stringify(visit.hops)}`).toBe(200);
    // The proxy → Gatehouse's start (session found) → the site's /.gatehouse/start (the verifier
    // the code is bound to, issue 49 H6) → the start with its challenge → the site's
    // /.gatehouse/callback → the page.
    expect(visit.hops.map((h) => `${new URL(h.url).host} ${new URL(h.url).pathname}`)).toEqual([
      `localhost:${port} /lovelace`,
      `${new URL(server.url).host} /api/auth/forward/start`,
      `localhost:${port} /.gatehouse/start`,
      `${new URL(server.url).host} /api/auth/forward/start`,
      `localhost:${port} /.gatehouse/callback`,
      `localhost:${port} /lovelace`,
    ]);
    const echoed = (await visit.res.json()) as Echoed;
    expect(echoed.url).toBe('/lovelace?x=1');
    expect(identity(echoed)).toEqual({ 'remote-user': `ada.${preset}`, 'remote-email': `ada.${preset}@example.com`, 'remote-groups': 'household' });

    // Identity headers a client sends are dropped by the configuration before the app sees them.
    const cookie = `gatehouse_site=${browser.cookie('localhost', 'gatehouse_site')}`;
    const forged = await get(port, `localhost:${port}`, '/', {
      cookie, 'remote-user': 'root', 'remote-groups': 'admins', 'remote-email': 'root@example.com', remote_user: 'root', remote_groups: 'admins',
    });
    expect(forged.status).toBe(200);
    expect(identity(JSON.parse(forged.body) as Echoed)).toEqual(identity(echoed));
    expect(Object.keys((JSON.parse(forged.body) as Echoed).headers).filter((name) => /^remote_/.test(name))).toEqual([]);
  });

  it('carries the app\'s WebSocket for a member, with the identity headers; none without a session (issue 44, M2)', async () => {
    const { preset, url, port, proxy } = site();
    const browser = await person(site(), `lin.${preset}@example.com`, true);
    expect((await browser.follow(`${url}/`)).res.status, proxy.log()).toBe(200);
    const cookie = `gatehouse_site=${browser.cookie('localhost', 'gatehouse_site')}`;
    const socket = await openSocket(port, '/api/websocket', { cookie });
    expect('status' in socket, `${JSON.stringify(socket)}\n${proxy.log()}`).toBe(false);
    const { ws, first } = socket as Exclude<typeof socket, { status: number }>;
    const hello = JSON.parse(first) as Echoed;
    expect([hello.url, hello.headers.upgrade, hello.headers['remote-user']]).toEqual(['/api/websocket', 'websocket', `lin.${preset}`]);
    ws.send('ping');
    expect(String(await new Promise((resolve) => ws.once('message', resolve)))).toBe('ping');
    ws.close();
    // Without a session the check refuses the upgrade; the app never sees it.
    expect(await openSocket(port, '/api/websocket', {})).toEqual({ status: 401 });
  });

  it('refuses a signed-in member outside the allowed group: Gatehouse\'s 403 page at the hand-over, no site cookie, the app never reached', async () => {
    const { preset, url, port, proxy } = site();
    const browser = await person(site(), `grace.${preset}@example.com`, false);
    const visit = await browser.follow(`${url}/lovelace`);
    expect(visit.res.status, `${proxy.log()}\n${JSON.stringify(visit.hops)}`).toBe(403);
    expect(visit.hops.map((h) => `${new URL(h.url).host} ${new URL(h.url).pathname}`)).toEqual([
      `localhost:${port} /lovelace`,
      `${new URL(server.url).host} /api/auth/forward/start`,
    ]);
    expect(visit.res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await visit.res.text()).toContain('data-reason="group_missing"');
    expect(browser.cookie('localhost', 'gatehouse_site')).toBeUndefined();
  });
});
