/**
 * Property-based fuzzing of the proxy configurations Gatehouse prints (server/forward-auth/
 * snippets.ts and upstream.ts; issue 49, H1, H7 and H10): every input of the generator — the
 * upstream, the application's name, id and host patterns, the scheme and the issuer — drawn from
 * hostile and valid text. What must hold:
 *
 * - the upstream rule gives back only `http(s)://host[:port]` with a host that is an address or
 *   DNS-style labels, and the endpoint answers 400 for everything else, 200 for the rest;
 * - the name changes comment lines only, and the upstream only the lines that name it, whatever
 *   they hold: nothing can add a directive, a block or a variable;
 * - what is printed loads in the real programs with exactly the values given: Debian's nginx
 *   (`nginx -t`, two applications' configurations in one http block) and Caddy (`caddy adapt`:
 *   the upstreams it dials and the hosts it matches are ours and only ours), and Traefik's YAML
 *   parses into the expected routers, services and middleware.
 *
 * `FUZZ_SEED=<n>` replays a run. The real programs load a few cases each (a second or two).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { Application } from '../../server/db/schema.js';
import { parseHostPattern } from '../../server/forward-auth/hosts.js';
import { snippet, type Proxy } from '../../server/forward-auth/snippets.js';
import { upstreamOrigin } from '../../server/forward-auth/upstream.js';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication } from '../helpers/accounts.js';
import { hostileString } from './fuzz/hostile.js';

const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const PROXIES: Proxy[] = ['caddy', 'nginx', 'traefik'];

/** What the upstream rule may give back: a scheme, an address or DNS-style name, a port. */
const SAFE_ORIGIN = /^https?:\/\/(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*)(?::\d{1,5})?$/;

/** Upstream-like text: schemes, hosts and ports made of the characters configurations care about. */
const upstreamText = fc.oneof(
  hostileString,
  fc.tuple(
    fc.constantFrom('http://', 'https://', 'HTTP://', 'ftp://', '', '//', 'http:/', 'javascript://'),
    fc.string({ unit: fc.constantFrom(...'ab1-_.;{}$"\'\\ /?#@:[]%\t\n\u0000é'.split('')), minLength: 0, maxLength: 20 }),
    fc.constantFrom('', ':80', ':8080', ':99999', ':x', '/', '/app', '?q', '#f', ';', '}'),
  ).map((parts) => parts.join('')),
  fc.constantFrom('http://127.0.0.1:8080;}', 'http://$http_x_up', 'http://a{http.request.uri}', 'http://[::1]:8443', 'http://my_app:3000', 'HTTP://Kuma:80/', 'http://bücher.lan'),
);

/** A host pattern as people type them (some invalid), normalised the way the application field stores them. */
const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,6}[a-z0-9]$/);
const hostPattern = fc.oneof(
  fc.tuple(fc.boolean(), fc.array(label, { minLength: 1, maxLength: 3 }), fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }))
    .map(([wildcard, labels, port]) => `${wildcard ? '*.' : ''}${labels.join('.')}.example${port ? `:${port}` : ''}`),
  fc.tuple(fc.nat(255), fc.nat(255), fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined })).map(([a, b, port]) => `10.0.${a}.${b}${port ? `:${port}` : ''}`),
  fc.constantFrom('Bücher.LAN.example', '*.Straße.example:8443', '[::1]:8443', '[fd00::5]', 'wiki.lan.example.', '*.10.0.0.1', 'a..b', 'x;y.example', '{x}.example', '$host.example'),
).map((raw) => parseHostPattern(raw)).filter((parsed): parsed is { pattern: string } => 'pattern' in parsed).map((p) => p.pattern);
const hosts = fc.uniqueArray(hostPattern, { minLength: 1, maxLength: 5 });
const appId = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{1,20}$/);
const appName = fc.oneof(hostileString, fc.constantFrom('Wiki', 'Zoë "x"\n}\nserver {', 'a\u2028b # c', '$http_host {upstream}'));

const application = (id: string, name: string, patterns: string[]) =>
  ({ id, name, forwardAuth: { hosts: patterns, groups: null, basic: false } }) as unknown as Application;

/** The lines that are not comments (Caddy, nginx and YAML comments start a line, after its indentation). */
const directives = (text: string) => text.split('\n').filter((line) => !line.trimStart().startsWith('#'));

let t: TestApp;
let dir: string;

beforeAll(async () => {
  t = await makeApp({ perFile: true });
  await createApplication(t, {
    id: 'wiki', clientType: 'web', audience: 'https://wiki.example.com/api', redirectUris: ['https://wiki.example.com/cb'], forwardAuth: { hosts: ['wiki.lan.example'] },
  });
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-fuzz-snippets-'));
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi', 'caddy']) mkdirSync(join(dir, sub));
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=fuzz.example']);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function run(command: string, args: string[], env: NodeJS.ProcessEnv = { PATH: process.env.PATH }): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { env, timeout: 60_000, maxBuffer: 8 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }));
  });
}

describe(`fuzzing the proxy configurations' inputs (seed ${SEED})`, () => {
  it('the upstream rule gives back a scheme, a host and a port only; the endpoint refuses everything else', async () => {
    fc.assert(fc.property(upstreamText, (text) => {
      const origin = upstreamOrigin(text);
      if (origin !== undefined) expect(origin, JSON.stringify(text)).toMatch(SAFE_ORIGIN);
    }), { seed: SEED, numRuns: 3_000 });
    // Through the endpoint, which every way in (panel, CLI, presets) shares.
    await fc.assert(fc.asyncProperty(upstreamText, fc.constantFrom(...PROXIES), async (text, proxy) => {
      const res = await t.admin('GET', `/api/admin/applications/wiki/forward-auth/snippet?${new URLSearchParams({ proxy, upstream: text })}`);
      const origin = text.length <= 300 ? upstreamOrigin(text) : undefined;
      if (origin === undefined) {
        expect([res.statusCode, res.json().code], JSON.stringify(text)).toEqual([400, 'validation_failed']);
      } else {
        expect(res.statusCode, JSON.stringify(text)).toBe(200);
        expect(res.json().snippet).toContain(`"${origin}"`);
      }
    }), { seed: SEED, numRuns: 150 });
  });

  it('a name changes comment lines only, an upstream the lines that carry it: no input adds a directive', () => {
    const upstream = upstreamText.map(upstreamOrigin).filter((o): o is string => o !== undefined);
    fc.assert(fc.property(appId, appName, hosts, upstream, fc.constantFrom('http' as const, 'https' as const), fc.constantFrom(...PROXIES), (id, name, patterns, origin, scheme, proxy) => {
      const plain = snippet(proxy, application(id, 'Name', patterns), 'https://id.lan.example', { upstream: 'http://127.0.0.1:8080', scheme });
      const named = snippet(proxy, application(id, name, patterns), 'https://id.lan.example', { upstream: 'http://127.0.0.1:8080', scheme });
      expect(directives(named)).toEqual(directives(plain));
      const elsewhere = snippet(proxy, application(id, name, patterns), 'https://id.lan.example', { upstream: origin, scheme });
      const changed = directives(elsewhere).filter((line, i) => line !== directives(named)[i]);
      expect(directives(elsewhere)).toHaveLength(directives(named).length);
      // The one line that names the upstream: quoted as a whole, nothing after it.
      expect(changed.length, elsewhere).toBeLessThanOrEqual(1);
      for (const line of changed) expect(line.trim()).toMatch(new RegExp(`^(proxy_pass|reverse_proxy|- url:) "${origin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}";?$`));
    }), { seed: SEED, numRuns: 400 });
  });

  it('Traefik\'s YAML parses into exactly the given routers, services and middleware', () => {
    const upstream = upstreamText.map(upstreamOrigin).filter((o): o is string => o !== undefined);
    fc.assert(fc.property(appId, appName, hosts, upstream, (id, name, patterns, origin) => {
      const parsed = parseYaml(snippet('traefik', application(id, name, patterns), 'https://id.lan.example', { upstream: origin, scheme: 'https' })) as {
        http: { middlewares: Record<string, unknown>; routers: Record<string, { rule: string; service: string }>; services: Record<string, { loadBalancer: { servers: { url: string }[] } }> };
      };
      expect(Object.keys(parsed.http.middlewares)).toEqual([`gatehouse-${id}`]);
      expect(Object.keys(parsed.http.routers)).toEqual([id, `${id}-gatehouse`]);
      expect(Object.fromEntries(Object.entries(parsed.http.services).map(([k, v]) => [k, v.loadBalancer.servers.map((s) => s.url)])))
        .toEqual({ [id]: [origin], [`gatehouse-${id}`]: ['https://id.lan.example'] });
      // The routers match the application's hosts and nothing else.
      const names = [...new Set(patterns.map((p) => p.replace(/:\d+$/, '')))];
      const rule = parsed.http.routers[id]!.rule;
      expect(rule.split(' || ').length).toBe(names.length);
      expect(parsed.http.routers[`${id}-gatehouse`]!.rule).toBe(`(${rule}) && PathPrefix(\`/.gatehouse/\`)`);
    }), { seed: SEED, numRuns: 300 });
  });

  it('loads in Debian\'s nginx and Caddy with exactly the values given', async () => {
    // Addresses only: nginx resolves proxy_pass names as it loads.
    const ipUpstream = fc.tuple(fc.constantFrom('http', 'https'), fc.nat(255), fc.integer({ min: 1, max: 65535 }))
      .map(([scheme, last, port]) => upstreamOrigin(`${scheme}://10.1.0.${last}:${port}`)!);
    let cases = 0;
    await fc.assert(fc.asyncProperty(
      fc.tuple(appId, appName.filter((n) => n.length < 200), hosts, ipUpstream, fc.constantFrom('http' as const, 'https' as const)),
      fc.tuple(appId, hosts),
      async ([id, name, patterns, origin, scheme], [otherId, otherPatterns]) => {
        cases += 1;
        const issuer = 'http://127.0.0.1:8787';
        const nginxText = [
          snippet('nginx', application(id, name, patterns), issuer, { upstream: origin, scheme }),
          // A second application's configuration beside it: the shared map and $gatehouse_host do not clash.
          snippet('nginx', application(`${otherId}-2`, 'Other', otherPatterns), issuer, { upstream: 'http://10.2.0.1:80', scheme: 'http' }),
        ].join('\n').replaceAll('/etc/ssl/certs/your-site.pem', join(dir, 'cert.pem')).replaceAll('/etc/ssl/private/your-site.key', join(dir, 'key.pem'));
        const conf = join(dir, 'nginx.conf');
        writeFileSync(conf, [
          `pid ${join(dir, 'nginx.pid')};`, 'events { worker_connections 16; }', 'http {', '  access_log off;',
          ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${join(dir, kind === 'client_body' ? 'body' : kind)};`),
          nginxText, '}', '',
        ].join('\n'));
        const tested = await run('nginx', ['-t', '-q', '-p', `${dir}/`, '-e', join(dir, 'error.log'), '-c', conf]);
        expect(tested.code, `${tested.stderr}\n${nginxText}`).toBe(0);

        const caddyfile = join(dir, 'Caddyfile');
        writeFileSync(caddyfile, snippet('caddy', application(id, name, patterns), issuer, { upstream: origin, scheme }));
        const adapted = await run('caddy', ['adapt', '--config', caddyfile, '--adapter', 'caddyfile'], { PATH: process.env.PATH, HOME: dir, XDG_DATA_HOME: join(dir, 'caddy'), XDG_CONFIG_HOME: join(dir, 'caddy') });
        expect(adapted.code, adapted.stderr).toBe(0);
        const json = JSON.parse(adapted.stdout) as { apps: { http: { servers: Record<string, { listen: string[]; routes: { match?: { host?: string[] }[] }[] }> } } };
        // Every site Caddy serves from it answers for our hosts only: no route without a host matcher, on our ports only.
        const servers = Object.values(json.apps.http.servers);
        for (const server of servers) for (const route of server.routes) expect(route.match?.every((m) => m.host?.length), JSON.stringify(server)).toBe(true);
        const ports = new Set(patterns.map((p) => /:(\d+)$/.exec(p.replace(/^\[[^\]]*\]/, ''))?.[1] ?? (scheme === 'https' ? '443' : '80')));
        expect(new Set(servers.flatMap((server) => server.listen.map((l) => l.replace(/^:/, ''))))).toEqual(ports);
        const found = { dials: new Set<string>(), hosts: new Set<string>() };
        walk(json, found);
        const url = new URL(origin);
        const port = url.port || (url.protocol === 'https:' ? '443' : '80');
        expect([...found.dials].sort()).toEqual(['127.0.0.1:8787', `${url.hostname}:${port}`].sort());
        expect([...found.hosts].sort()).toEqual([...new Set(patterns.map((p) => p.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1')))].sort());
      },
    ), { seed: SEED, numRuns: 8 });
    expect(cases).toBe(8);
  }, 120_000);
});

/** Every `dial` of a reverse proxy's upstreams and every `host` matcher in Caddy's JSON configuration. */
function walk(node: unknown, found: { dials: Set<string>; hosts: Set<string> }): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, found);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  if (typeof record.dial === 'string') found.dials.add(record.dial);
  if (Array.isArray(record.host)) for (const host of record.host) found.hosts.add(String(host));
  for (const value of Object.values(record)) walk(value, found);
}
