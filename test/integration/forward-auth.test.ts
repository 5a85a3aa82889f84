/**
 * Forward auth (issue 34, spec forward-auth.md) through `inject`: the `forwardAuth` application
 * field, the check's situation table on both endpoints, the hand-over (start → callback), the
 * site cookie, sign-out, revocation, and the queries' plans. The real proxies and browser are in
 * test/interop/forward-auth-*.test.ts.
 */
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { makeApp, makeInstance, type TestApp } from '../helpers/app.js';
import { cookieValue, createApplication, postJson } from '../helpers/accounts.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { authorize, location, token } from '../helpers/oauth-inject.js';
import { pkcePair } from '../helpers/oauth-server.js';
import { queryPlan, usesPostgresIndex } from '../helpers/query-plan.js';
import { counterValue } from '../helpers/metrics.js';
import {
  authRequestCheck, callback, checkRequest, forwardCheck, handOver, hostStart, identityOf, personCookie, protectedApp, siteSignIn, start, startUrlFor,
  type CheckOptions,
} from '../helpers/forward-auth.js';
import { administrator, asBearer, panelSignIn } from '../helpers/admins.js';
import { engineOf } from '../../server/db/store.js';
import { loadConfig } from '../../server/config.js';
import { DECISION_TTL_MS } from '../../server/forward-auth/check.js';

/** A directory group with members, through the admin API. */
async function addGroup(t: TestApp, id: string, personIds: string[]) {
  expect((await t.admin('POST', '/api/admin/groups', { id, name: id })).statusCode).toBe(201);
  for (const personId of personIds) expect((await t.admin('PUT', `/api/admin/groups/${id}/members/${personId}`)).statusCode).toBe(204);
}

/** `gatehouse_forward_auth_checks_total` by result, from the app's registry. */
async function checkCounts(t: TestApp): Promise<{ allowed: number; redirected: number; refused: number }> {
  const count = (result: string) => counterValue(t, 'gatehouse_forward_auth_checks_total', { result });
  return { allowed: await count('allowed'), redirected: await count('redirected'), refused: await count('refused') };
}

const problemOf = (res: { statusCode: number; headers: Record<string, unknown>; json(): unknown }) => {
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  return res.json() as { status: number; code: string; detail: string };
};

describe('the forwardAuth application field', () => {
  it('stores normalised hosts, shows them on reads, and gives each host to one application (409 host_in_use)', async () => {
    const t = await makeApp();
    const created = await protectedApp(t, 'wiki', ['Wiki.LAN.example', '*.media.lan.example', 'wiki.lan.example:8443']);
    expect(created.forwardAuth).toEqual({ hosts: ['wiki.lan.example', '*.media.lan.example', 'wiki.lan.example:8443'], basic: false });
    expect((await t.admin('GET', '/api/admin/applications/wiki')).json().forwardAuth).toEqual(created.forwardAuth);
    const plain = await createApplication(t, { id: 'notes' });
    expect(plain.forwardAuth).toBeNull();

    for (const host of ['wiki.lan.example', 'WIKI.lan.example', '*.media.lan.example']) {
      const clash = await t.admin('PATCH', '/api/admin/applications/notes', { forwardAuth: { hosts: [host] } });
      expect(clash.statusCode).toBe(409);
      expect(problemOf(clash)).toMatchObject({ code: 'host_in_use', detail: `The host ${host.toLowerCase()} is already protected by another application.` });
    }
    // Another port of the same name, or a name under the wildcard's, is another host.
    const other = await t.admin('PATCH', '/api/admin/applications/notes', { forwardAuth: { hosts: ['wiki.lan.example:9000', 'a.tv.media.lan.example'] } });
    expect(other.statusCode, other.body).toBe(200);

    // Giving hosts up frees them at once; deleting the application does too.
    expect((await t.admin('PATCH', '/api/admin/applications/wiki', { forwardAuth: null })).json().forwardAuth).toBeNull();
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { forwardAuth: { hosts: ['wiki.lan.example'], basic: true } })).json().forwardAuth)
      .toEqual({ hosts: ['wiki.lan.example'], basic: true });
    expect((await t.admin('DELETE', '/api/admin/applications/notes')).statusCode).toBe(204);
    expect((await protectedApp(t, 'again', ['wiki.lan.example'])).forwardAuth.hosts).toEqual(['wiki.lan.example']);
  });

  it('refuses a pattern overlapping another application\'s unless the caller administers both (issue 49, H2)', async () => {
    const t = await makeApp();
    await protectedApp(t, 'media', ['*.media.lan.example', 'wiki.lan.example']);
    await protectedApp(t, 'mine', ['mine.lan.example']);
    const manager = await administrator(t, 'mo@example.com', 'app_manager', ['mine']);
    const { access_token: token } = await panelSignIn(t, manager);
    const patch = (bearer: string, hosts: string[]) => asBearer(t, bearer, 'PATCH', '/api/admin/applications/mine', { forwardAuth: { hosts } });
    // More specific patterns win a request, so each of these would take media's hosts over.
    for (const host of ['tv.media.lan.example', 'tv.media.lan.example:8443', '*.media.lan.example:443', 'wiki.lan.example:8443', '*.lan.example']) {
      const res = await patch(token, ['mine.lan.example', host]);
      expect(problemOf(res), host).toEqual({
        type: 'https://gatehouse.dev/problems/host-in-use', title: 'Conflict', status: 409, code: 'host_in_use',
        detail: `The host ${host} overlaps a host another application protects; only an administrator of both applications may give them overlapping hosts.`,
      });
    }
    expect((await t.admin('GET', '/api/admin/applications/mine')).json().forwardAuth.hosts).toEqual(['mine.lan.example']);
    // What overlaps nothing of media's is the manager's to take: two labels under its wildcard, the wildcard's own name.
    expect((await patch(token, ['mine.lan.example', 'a.tv.media.lan.example', 'media.lan.example', '*.wiki.lan.example'])).statusCode).toBe(200);
    // An administrator of both may: an app manager of the two, the admin token.
    const both = await administrator(t, 'bo@example.com', 'app_manager', ['mine', 'media']);
    const tv = await patch((await panelSignIn(t, both)).access_token, ['mine.lan.example', 'tv.media.lan.example']);
    expect([tv.statusCode, tv.json().forwardAuth?.hosts]).toEqual([200, ['mine.lan.example', 'tv.media.lan.example']]);
    // A host the application already holds stays when its manager changes the others.
    const kept = await patch(token, ['tv.media.lan.example', 'notes.lan.example']);
    expect([kept.statusCode, kept.json().forwardAuth?.hosts]).toEqual([200, ['tv.media.lan.example', 'notes.lan.example']]);
    expect((await t.admin('PATCH', '/api/admin/applications/mine', { forwardAuth: { hosts: ['tv.media.lan.example', 'wiki.lan.example:8443'] } })).statusCode).toBe(200);
  });

  it('refuses bad hosts, repeats, public clients and an API key changing them, naming the field', async () => {
    const t = await makeApp();
    const bad = await t.admin('POST', '/api/admin/applications', {
      id: 'wiki', name: 'Wiki', audience: 'https://wiki.example.com/api', redirectUris: ['https://wiki.example.com/cb'], clientType: 'spa',
      forwardAuth: { hosts: ['wiki.lan.example', 'https://wiki.lan.example/', '*.10.0.0.1', 'wiki.lan.example:70000', 'WIKI.lan.example', '-x.lan'] },
    });
    expect(bad.statusCode).toBe(400);
    const message = 'must be a host name with an optional port (wiki.lan.example, wiki.lan.example:8443), or *. and a host name (*.media.lan.example)';
    expect(problemOf(bad)).toMatchObject({ code: 'validation_failed' });
    expect(bad.json().errors).toEqual([
      { path: 'body.forwardAuth', message: 'forward auth needs a web (confidential) application' },
      { path: 'body.forwardAuth.hosts.1', message },
      { path: 'body.forwardAuth.hosts.2', message },
      { path: 'body.forwardAuth.hosts.3', message },
      { path: 'body.forwardAuth.hosts.4', message: 'repeats wiki.lan.example' },
      { path: 'body.forwardAuth.hosts.5', message },
    ]);
    const extra = await t.admin('POST', '/api/admin/applications', { id: 'wiki', name: 'Wiki', audience: 'a', redirectUris: ['https://wiki.example.com/cb'], forwardAuth: { hosts: [], other: 1 } });
    expect(extra.statusCode).toBe(400);

    await protectedApp(t, 'wiki', ['wiki.lan.example']);
    const spa = await t.admin('PATCH', '/api/admin/applications/wiki', { clientType: 'spa' });
    expect(spa.json().errors).toEqual([{ path: 'body.clientType', message: 'an application that protects hosts (forwardAuth) must stay a web application' }]);

    const key = (await t.admin('POST', '/api/admin/applications/wiki/api-keys', { name: 'ci', scopes: ['application:read', 'application:write'] })).json().key;
    const byKey = await t.admin('PATCH', '/api/admin/applications/wiki', { forwardAuth: { hosts: ['evil.lan.example'] } }, { authorization: `Bearer ${key}` });
    expect(byKey.statusCode).toBe(403);
    expect(problemOf(byKey).code).toBe('insufficient_scope');
  });

  it('prints the proxy snippets for the application\'s hosts (its administrators, not API keys)', async () => {
    const t = await makeApp();
    await protectedApp(t, 'wiki', ['wiki.lan.example', '*.media.lan.example']);
    await createApplication(t, { id: 'notes' });
    const caddy = await t.admin('GET', '/api/admin/applications/wiki/forward-auth/snippet?proxy=caddy&upstream=http://10.0.0.7:3000');
    expect(caddy.statusCode, caddy.body).toBe(200);
    const { snippet, hosts, proxy } = caddy.json();
    expect({ proxy, hosts }).toEqual({ proxy: 'caddy', hosts: ['wiki.lan.example', '*.media.lan.example'] });
    expect(snippet).toContain('"https://wiki.lan.example" "https://*.media.lan.example" {');
    expect(snippet).toContain('\trequest_header -Remote-User\n');
    expect(snippet).toContain(`\t\tforward_auth "${new URL(t.config.issuer).host}" {\n\t\t\turi /api/auth/forward\n`);
    expect(snippet).toContain('\t\treverse_proxy "http://10.0.0.7:3000"\n');
    const nginx = (await t.admin('GET', '/api/admin/applications/wiki/forward-auth/snippet?proxy=nginx&scheme=http')).json().snippet;
    expect(nginx).toContain('    listen 80;\n    server_name "wiki.lan.example" "*.media.lan.example";\n');
    expect(nginx).toContain(`        proxy_pass "${t.config.issuer}/api/auth/forward/auth-request";\n`);
    // It passes the host it pinned, never the client's $http_host, and names its application (H1).
    expect(nginx).toContain('        proxy_set_header X-Gatehouse-Application "wiki";\n        proxy_set_header X-Original-URL "$scheme://$gatehouse_host$request_uri";\n');
    expect(nginx).toContain('        proxy_set_header X-Forwarded-Host $gatehouse_host;\n');
    expect(nginx).toContain('    if ($gatehouse_host = "") {\n        return 421;\n    }\n');
    expect(nginx.match(/\$http_host/g)).toHaveLength(2);
    const traefik = (await t.admin('GET', '/api/admin/applications/wiki/forward-auth/snippet?proxy=traefik')).json().snippet;
    expect(traefik).toContain('rule: "Host(`wiki.lan.example`) || HostRegexp(`^[^.]+\\\\.media\\\\.lan\\\\.example$`)"');
    expect(traefik).toContain('not run by Gatehouse\'s tests');
    // Traefik routes by host (issue 49, H1): both routers match only the application's hosts.
    const routers = (parseYaml(traefik) as { http: { routers: Record<string, { rule: string }> } }).http.routers;
    const byHost = 'Host(`wiki.lan.example`) || HostRegexp(`^[^.]+\\.media\\.lan\\.example$`)';
    expect(Object.fromEntries(Object.entries(routers).map(([name, router]) => [name, router.rule])))
      .toEqual({ wiki: byHost, 'wiki-gatehouse': `(${byHost}) && PathPrefix(\`/.gatehouse/\`)` });

    const off = await t.admin('GET', '/api/admin/applications/notes/forward-auth/snippet?proxy=caddy');
    expect([off.statusCode, problemOf(off).code]).toEqual([409, 'forward_auth_not_enabled']);
    const badProxy = await t.admin('GET', '/api/admin/applications/wiki/forward-auth/snippet?proxy=apache');
    expect([badProxy.statusCode, problemOf(badProxy).code]).toEqual([400, 'validation_failed']);
    const key = (await t.admin('POST', '/api/admin/applications/wiki/api-keys', { name: 'ci', scopes: ['application:read'] })).json().key;
    const byKey = await t.admin('GET', '/api/admin/applications/wiki/forward-auth/snippet?proxy=caddy', undefined, { authorization: `Bearer ${key}` });
    expect(byKey.statusCode).toBe(403);
  });
});

describe('what the proxy configurations write (issue 49, H7 and H10)', () => {
  const UPSTREAM_RULE = 'must be http:// or https:// and a host with an optional port, nothing more (e.g. http://127.0.0.1:8080)';

  it('takes a scheme, a host and a port only as the upstream, as a URL parser gives them back (H10)', async () => {
    const t = await makeApp();
    await protectedApp(t, 'wiki', ['wiki.lan.example']);
    const print = (proxy: string, upstream: string) =>
      t.admin('GET', `/api/admin/applications/wiki/forward-auth/snippet?${new URLSearchParams({ proxy, scheme: 'http', upstream })}`);
    // nginx: `;}` leaves the block, `$http_x_up` makes proxy_pass an open relay; Caddy: `{…}` placeholders.
    const hostile = [
      'http://127.0.0.1:8080;}', 'http://$http_x_up', 'http://a{http.request.header.x}', 'http://a"b', "http://a'b", 'http://a;b',
      'http://127.0.0.1:8080/;', 'http://127.0.0.1:8080/app', 'http://x?y', 'http://x#y', 'http://user:pw@x', 'ftp://x', 'http://x:99999',
      'http://a\\b', 'http://a b', 'http://[::1', 'http://a%20b', 'http://', 'javascript://x',
    ];
    for (const upstream of hostile) {
      for (const proxy of ['nginx', 'caddy', 'traefik']) {
        const res = await print(proxy, upstream);
        expect([upstream, res.statusCode, problemOf(res).code, res.json().errors]).toEqual([upstream, 400, 'validation_failed', [{ path: 'querystring.upstream', message: UPSTREAM_RULE }]]);
      }
    }
    // What a URL parser gives back is what is written: lower case, no default port, IDN as punycode; quoted.
    const cases = [
      ['HTTP://Backend.LAN:80', 'http://backend.lan'], ['https://[::1]:8443', 'https://[::1]:8443'], ['http://my_app:3000', 'http://my_app:3000'],
      ['http://bücher.lan:8080/', 'http://xn--bcher-kva.lan:8080'],
    ];
    for (const [upstream, written] of cases) {
      expect((await print('nginx', upstream!)).json().snippet).toContain(`        proxy_pass "${written}";\n`);
      expect((await print('caddy', upstream!)).json().snippet).toContain(`\t\treverse_proxy "${written}"\n`);
      expect((await print('traefik', upstream!)).json().snippet).toContain(`          - url: "${written}"\n`);
    }
  });

  it('refuses such an upstream as a preset input too, naming it', async () => {
    const t = await makeApp();
    const made = await t.admin('POST', '/api/admin/applications', {
      preset: 'uptime-kuma', presetInputs: { baseUrl: 'https://status.lan.example', upstream: 'http://127.0.0.1:3001;}' },
    });
    expect([made.statusCode, problemOf(made).code, made.json().errors]).toEqual([400, 'validation_failed', [{ path: 'body.presetInputs.upstream', message: UPSTREAM_RULE }]]);
    const fine = await t.admin('POST', '/api/admin/applications', {
      preset: 'uptime-kuma', presetInputs: { baseUrl: 'https://status.lan.example', upstream: 'HTTP://Kuma:3001/' },
    });
    expect(fine.statusCode, fine.body).toBe(201);
    const setup = (await t.admin('GET', '/api/admin/applications/uptime-kuma/setup')).json();
    expect(setup.files.find((f: { name: string }) => f.name === 'nginx.conf').content).toContain('        proxy_pass "http://kuma:3001";\n');
  });

  it('strips identity headers in both spellings, Remote-User and Remote_User, in all three (H7)', async () => {
    const t = await makeApp();
    await protectedApp(t, 'wiki', ['wiki.lan.example']);
    const print = async (proxy: string) => (await t.admin('GET', `/api/admin/applications/wiki/forward-auth/snippet?proxy=${proxy}`)).json().snippet as string;
    const names = ['User', 'Email', 'Name', 'Groups', 'Role'];
    const caddy = await print('caddy');
    for (const name of names) expect(caddy).toContain(`\trequest_header -Remote-${name}\n\trequest_header -Remote_${name}\n`);
    const nginx = await print('nginx');
    for (const name of names) expect(nginx).toContain(`        proxy_set_header Remote_${name} "";\n`);
    // Traefik removes every request header its regular expression matches (Go writes Remote_User as Remote_user).
    const regex = (parseYaml(await print('traefik')) as { http: { middlewares: Record<string, { forwardAuth: { authResponseHeadersRegex: string } }> } })
      .http.middlewares['gatehouse-wiki']!.forwardAuth.authResponseHeadersRegex;
    expect(regex).toBe('(?i)^remote[-_]');
    for (const header of ['Remote-User', 'Remote_user', 'REMOTE_GROUPS', 'remote-role']) expect(new RegExp(regex.replace('(?i)', ''), 'i').test(header)).toBe(true);
  });
});

describe('the check', () => {
  async function signedIn(t: TestApp, email = 'ada@example.com', name = 'Zoë Ørsted', proxy = '127.0.0.1') {
    await protectedApp(t, 'wiki', ['wiki.localhost', '*.media.localhost']);
    const cookie = await personCookie(t, email, 'wiki', name);
    const site = await siteSignIn(t, cookie, 'http://wiki.localhost/page?x=1', proxy);
    return { cookie, site };
  }

  it('answers the situation table on both endpoints', async () => {
    const t = await makeApp();
    const { site } = await signedIn(t);
    const before = await checkCounts(t);

    // Signed in: 200 and the identity headers, ASCII-safe.
    for (const check of [forwardCheck, authRequestCheck]) {
      const res = await check(t, { host: 'wiki.localhost', uri: '/page?x=1', site, browser: true });
      expect(identityOf(res)).toEqual({ user: 'ada', email: 'ada@example.com', name: 'Zo%C3%AB %C3%98rsted', groups: '', role: 'member' });
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toBe('');
    }

    // No credential, a browser navigating: /forward redirects to the start URL; nginx's endpoint says 401 with it in Location.
    const rd = 'http://wiki.localhost/page?x=1&y=%C3%A9';
    const redirect = await forwardCheck(t, { host: 'wiki.localhost', uri: '/page?x=1&y=%C3%A9', browser: true });
    expect(redirect.statusCode).toBe(302);
    expect(redirect.headers.location).toBe(startUrlFor(t.config.issuer, rd));
    const nginx401 = await authRequestCheck(t, { host: 'wiki.localhost', uri: '/page?x=1&y=%C3%A9', browser: true });
    expect(nginx401.statusCode).toBe(401);
    expect(nginx401.headers.location).toBe(startUrlFor(t.config.issuer, rd));
    expect(nginx401.headers['www-authenticate']).toBe('Bearer realm="gatehouse"');

    // No credential, anything else (an API call, a form post): 401 on both.
    for (const res of [
      await forwardCheck(t, { host: 'wiki.localhost' }),
      await forwardCheck(t, { host: 'wiki.localhost', method: 'POST', browser: true }),
      await authRequestCheck(t, { host: 'wiki.localhost' }),
    ]) {
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="gatehouse"');
      expect(res.headers.location).toBeUndefined();
      expect(problemOf(res)).toEqual({
        type: 'https://gatehouse.dev/problems/unauthorized', title: 'Unauthorized', status: 401, detail: 'Sign in to use this site.', code: 'unauthorized',
      });
    }

    // A host nobody protects, or one label too deep under the wildcard: 403.
    for (const host of ['other.localhost', 'a.b.media.localhost']) {
      const res = await forwardCheck(t, { host, site, browser: true });
      expect([res.statusCode, problemOf(res).code]).toEqual([403, 'host_not_protected']);
    }
    // The cookie of one host is no credential on another host of the same application.
    const elsewhere = await forwardCheck(t, { host: 'tv.media.localhost', site, browser: true });
    expect(elsewhere.statusCode).toBe(302);
    // A cookie that is not one of ours: as if none.
    expect((await forwardCheck(t, { host: 'wiki.localhost', site: 'x'.repeat(43) })).statusCode).toBe(401);

    const after = await checkCounts(t);
    expect({ allowed: after.allowed - before.allowed, redirected: after.redirected - before.redirected, refused: after.refused - before.refused })
      .toEqual({ allowed: 2, redirected: 3, refused: 6 });
  });

  it('decides only for the application the asking configuration was made for (issue 49, H1)', async () => {
    const t = await makeApp();
    await protectedApp(t, 'wiki', ['wiki.localhost']);
    await protectedApp(t, 'blog', ['blog.localhost']);
    const cookie = await personCookie(t, 'eve@example.com', 'blog');
    const site = await siteSignIn(t, cookie, 'http://blog.localhost/');
    // Blog's own configuration: Eve passes (and the decision is remembered).
    expect(identityOf(await authRequestCheck(t, { host: 'blog.localhost', site })).user).toBe('eve');
    // Wiki's nginx block asked about blog's host (it is the default server, and a client sent
    // Host: blog.localhost): refused, from memory as from the database, on both endpoints.
    for (const check of [authRequestCheck, forwardCheck]) {
      const crossed = await check(t, { host: 'blog.localhost', site, application: 'wiki', headers: { 'x-gatehouse-application': 'wiki' } });
      expect(problemOf(crossed)).toEqual({
        type: 'https://gatehouse.dev/problems/host-mismatch', title: 'Forbidden', status: 403, code: 'host_mismatch',
        detail: 'This host belongs to another application than the one this proxy configuration was made for.',
      });
    }
    const fresh = await makeApp();
    await protectedApp(fresh, 'wiki', ['wiki.localhost']);
    await protectedApp(fresh, 'blog', ['blog.localhost']);
    const freshSite = await siteSignIn(fresh, await personCookie(fresh, 'eve@example.com', 'blog'), 'http://blog.localhost/');
    expect((await authRequestCheck(fresh, { host: 'blog.localhost', site: freshSite, application: 'wiki' })).statusCode).toBe(403);
    // An nginx configuration that names no application (printed before this rule) is refused:
    // it cannot say which host it was made for.
    const unnamed = await authRequestCheck(t, { host: 'blog.localhost', site, application: null });
    expect([unnamed.statusCode, problemOf(unnamed).code]).toEqual([403, 'configuration_outdated']);
    expect(problemOf(unnamed).detail).toContain('print it again (gatehouse app show <id> --proxy nginx)');
    // Caddy and Traefik route by host and send no such header: their endpoint decides as before.
    expect(identityOf(await forwardCheck(t, { host: 'blog.localhost', site })).user).toBe('eve');
  });

  it('answers over real HTTP, before Fastify, as the route does: from the database, from memory, refusals; each check counted once', async () => {
    const t = await makeApp();
    const { site } = await signedIn(t);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const kept = ['cache-control', 'content-type', 'location', 'www-authenticate', 'remote-user', 'remote-email', 'remote-name', 'remote-groups', 'remote-role'];
    const shape = (status: number, headers: Record<string, unknown>, body: string) =>
      ({ status, headers: Object.fromEntries(kept.filter((name) => headers[name] !== undefined).map((name) => [name, String(headers[name])])), body });
    const overHttp = (endpoint: 'forward' | 'auth-request', o: CheckOptions) => new Promise<ReturnType<typeof shape>>((resolve, reject) => {
      const { url, headers } = checkRequest(endpoint, o);
      const req = httpRequest({ host: '127.0.0.1', port, path: url, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => { body += chunk; }).on('end', () => resolve(shape(res.statusCode!, res.headers, body)));
      });
      req.on('error', reject).end();
    });
    // Closed with the app after the test (helpers/app.ts).
    const cases: [Parameters<typeof overHttp>[0], CheckOptions, number][] = [
      ['forward', { host: 'wiki.localhost', site, browser: true }, 200], // the database, then remembered
      ['forward', { host: 'wiki.localhost', site, browser: true }, 200], // from memory
      ['auth-request', { host: 'wiki.localhost', site }, 200],
      ['forward', { host: 'wiki.localhost', browser: true }, 302],
      ['auth-request', { host: 'wiki.localhost', browser: true }, 401],
      ['forward', { host: 'other.localhost', site, browser: true }, 403],
      ['forward', { host: 'wiki.localhost', site: 'x'.repeat(43) }, 401],
    ];
    const before = await checkCounts(t);
    for (const [endpoint, o, status] of cases) {
      const early = await overHttp(endpoint, o);
      const routed = await (endpoint === 'forward' ? forwardCheck : authRequestCheck)(t, o);
      expect(early.status).toBe(status);
      expect(early).toEqual(shape(routed.statusCode, routed.headers, routed.body));
    }
    expect((await overHttp('forward', { host: 'wiki.localhost', site })).headers['remote-user']).toBe('ada');
    const after = await checkCounts(t);
    expect({ allowed: after.allowed - before.allowed, redirected: after.redirected - before.redirected, refused: after.refused - before.refused })
      .toEqual({ allowed: 7, redirected: 4, refused: 4 });
  });

  it('believes forwarded headers only from the configured proxies (loopback when unset): 403 for anyone else', async () => {
    const t = await makeApp();
    const { site } = await signedIn(t);
    const forged = await forwardCheck(t, { host: 'wiki.localhost', site, peer: '203.0.113.9' });
    expect(forged.statusCode).toBe(403);
    expect(problemOf(forged)).toEqual({
      type: 'https://gatehouse.dev/problems/untrusted-proxy', title: 'Forbidden', status: 403, code: 'untrusted_proxy',
      detail: 'Forwarded request headers are accepted only from the proxies named by GATEHOUSE_TRUST_PROXY.',
    });
    expect((await authRequestCheck(t, { host: 'wiki.localhost', site, peer: '203.0.113.9' })).statusCode).toBe(403);

    const behind = await makeApp({ config: { trustProxy: loadConfig({ GATEHOUSE_TRUST_PROXY: '10.0.0.0/24' }).trustProxy } });
    const { site: site2 } = await signedIn(behind, 'ada@example.com', 'Ada', '10.0.0.5');
    expect((await forwardCheck(behind, { host: 'wiki.localhost', site: site2, peer: '10.0.0.5' })).statusCode).toBe(200);
    // Named proxies replace the loopback default.
    expect((await forwardCheck(behind, { host: 'wiki.localhost', site: site2, peer: '127.0.0.1' })).statusCode).toBe(403);
  });

  it('accepts our Bearer access tokens for the application\'s audience; anything else is 401 invalid_token', async () => {
    const t = await makeApp();
    // One application per signing algorithm: the check verifies with the same function as userinfo.
    const apps: Record<string, { clientSecret: string }> = {};
    for (const [id, signingAlg] of [['wiki', 'RS256'], ['ecwiki', 'ES256'], ['edwiki', 'EdDSA']] as const) {
      apps[id] = await protectedApp(t, id, [`${id}.localhost`], { redirectUris: [`https://${id}.example.com/callback`], signingAlg });
    }
    await protectedApp(t, 'blog', ['blog.localhost']);
    const cookie = await personCookie(t, 'ada@example.com', 'wiki', 'Ada');
    const accessTokenFor = async (id: string) => {
      await postJson(t, '/api/auth/sign-in/email', { email: 'ada@example.com', password: 'correct horse battery', applicationId: id }, { cookie });
      const pkce = pkcePair();
      const code = location(await authorize(t, {
        response_type: 'code', client_id: id, redirect_uri: `https://${id}.example.com/callback`, scope: 'openid', state: 's',
        code_challenge: pkce.challenge, code_challenge_method: 'S256',
      }, cookie)).searchParams.get('code')!;
      const issued = await token(t, {
        grant_type: 'authorization_code', code, redirect_uri: `https://${id}.example.com/callback`, code_verifier: pkce.verifier,
        client_id: id, client_secret: apps[id]!.clientSecret,
      });
      return issued.json().access_token as string;
    };
    const accessToken = await accessTokenFor('wiki');
    for (const id of ['ecwiki', 'edwiki']) {
      const other = await accessTokenFor(id);
      expect(JSON.parse(Buffer.from(other.split('.')[0]!, 'base64url').toString()).alg).toBe(id === 'ecwiki' ? 'ES256' : 'EdDSA');
      expect(identityOf(await forwardCheck(t, { host: `${id}.localhost`, authorization: `Bearer ${other}` })).user).toBe('ada');
    }
    const app = apps.wiki!;

    const ok = await forwardCheck(t, { host: 'wiki.localhost', authorization: `Bearer ${accessToken}` });
    expect(identityOf(ok)).toEqual({ user: 'ada', email: 'ada@example.com', name: 'Ada', groups: '', role: 'member' });
    const invalid = 'Bearer realm="gatehouse", error="invalid_token", error_description="The access token is for another audience."';
    const wrongAudience = await authRequestCheck(t, { host: 'blog.localhost', authorization: `Bearer ${accessToken}` });
    expect([wrongAudience.statusCode, wrongAudience.headers['www-authenticate']]).toEqual([401, invalid]);
    // Each endpoint reads only the headers its proxy sets: a client's own X-Original-URL through
    // Caddy (or X-Forwarded-Host through nginx) cannot point the check at another application.
    const smuggled = [
      await forwardCheck(t, { host: 'blog.localhost', authorization: `Bearer ${accessToken}`, headers: { 'x-original-url': 'http://wiki.localhost/' } }),
      await authRequestCheck(t, { host: 'blog.localhost', authorization: `Bearer ${accessToken}`, headers: { 'x-forwarded-host': 'wiki.localhost' } }),
    ];
    expect(smuggled.map((r) => [r.statusCode, r.headers['www-authenticate']])).toEqual([[401, invalid], [401, invalid]]);
    const garbage = await forwardCheck(t, { host: 'wiki.localhost', authorization: 'Bearer not-a-token', browser: true });
    expect(garbage.statusCode).toBe(401);
    expect(garbage.headers['www-authenticate']).toBe('Bearer realm="gatehouse", error="invalid_token", error_description="The access token is invalid, expired or revoked."');
    expect(problemOf(garbage).code).toBe('invalid_token');

    // Revoked (RFC 7009): refused from the next check.
    const revoked = await t.app.inject({
      method: 'POST', url: '/api/auth/oauth2/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: accessToken, client_id: 'wiki', client_secret: app.clientSecret }).toString(),
    });
    expect(revoked.statusCode).toBe(200);
    // Once the check's remembered decision has lapsed (DECISION_TTL_MS on Date.now()): the wall
    // clock moved past it, not slept through (issue 45; the real-time bounds are the tests below).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + DECISION_TTL_MS + 100 });
    try {
      expect((await forwardCheck(t, { host: 'wiki.localhost', authorization: `Bearer ${accessToken}` })).statusCode).toBe(401);
    } finally {
      vi.useRealTimers();
    }
  });

  it('takes HTTP Basic with an app password for applications with forwardAuth.basic (DAV clients)', async () => {
    const t = await makeApp();
    await protectedApp(t, 'files', ['files.localhost'], { forwardAuth: { hosts: ['files.localhost'], basic: true } });
    await protectedApp(t, 'wiki', ['wiki.localhost']);
    const cookie = await personCookie(t, 'ada@example.com', 'files', 'Ada');
    const made = await postJson(t, '/api/me/app-passwords', { applicationId: 'files', name: 'Phone calendar' }, { cookie });
    expect(made.statusCode, made.body).toBe(201);
    const password = made.json().password as string;
    const basic = (login: string, secret: string) => `Basic ${Buffer.from(`${login}:${secret}`).toString('base64')}`;

    for (const login of ['ada', 'ADA@example.com']) {
      const ok = await forwardCheck(t, { host: 'files.localhost', method: 'PROPFIND', authorization: basic(login, password) });
      expect(identityOf(ok)).toEqual({ user: 'ada', email: 'ada@example.com', name: 'Ada', groups: '', role: 'member' });
    }
    const challenge = 'Basic realm="Files", charset="UTF-8"';
    const wrong = await authRequestCheck(t, { host: 'files.localhost', authorization: basic('ada', 'aaaaa-bbbbb-ccccc-ddddd-eeeee-fffff') });
    expect([wrong.statusCode, wrong.headers['www-authenticate'], problemOf(wrong).code]).toEqual([401, challenge, 'invalid_credentials']);
    const otherName = await forwardCheck(t, { host: 'files.localhost', authorization: basic('bob', password) });
    expect(otherName.statusCode).toBe(401);
    // No credential: both challenges, so a DAV client asks for its name and password.
    const none = await forwardCheck(t, { host: 'files.localhost', method: 'PROPFIND' });
    expect([none.statusCode, none.headers['www-authenticate']]).toEqual([401, `Bearer realm="gatehouse", ${challenge}`]);
    // An application without basic ignores Basic (and cannot have app passwords made for it).
    const elsewhere = await forwardCheck(t, { host: 'wiki.localhost', authorization: basic('ada', password) });
    expect([elsewhere.statusCode, elsewhere.headers['www-authenticate']]).toEqual([401, 'Bearer realm="gatehouse"']);
    const refused = await postJson(t, '/api/me/app-passwords', { applicationId: 'wiki', name: 'x' }, { cookie: await personCookie(t, 'cy@example.com', 'wiki') });
    expect([refused.statusCode, problemOf(refused).code]).toEqual([409, 'app_passwords_not_accepted']);
    // Suspended: the same app password is refused (403 from the membership).
    const [member] = (await t.admin('GET', '/api/admin/applications/files/users')).json().users;
    expect((await t.admin('PATCH', `/api/admin/applications/files/users/${member.id}`, { status: 'suspended' })).statusCode).toBe(200);
    expect((await forwardCheck(t, { host: 'files.localhost', authorization: basic('ada', password) })).statusCode).toBe(401);
    // A disabled person's app passwords stop too (as for LDAP binds).
    expect((await t.admin('PATCH', `/api/admin/applications/files/users/${member.id}`, { status: 'active' })).statusCode).toBe(200);
    expect(identityOf(await forwardCheck(t, { host: 'files.localhost', authorization: basic('ada', password) })).user).toBe('ada');
    expect((await t.admin('PATCH', `/api/admin/people/${member.userId}`, { status: 'disabled' })).statusCode).toBe(200);
    const disabled = await forwardCheck(t, { host: 'files.localhost', authorization: basic('ada', password) });
    expect([disabled.statusCode, problemOf(disabled).code]).toEqual([401, 'invalid_credentials']);
  });

  it('refuses a suspended or removed member with 403 (the hosted refusal page to a browser at /forward)', async () => {
    const t = await makeApp();
    const { site } = await signedIn(t);
    const [member] = (await t.admin('GET', '/api/admin/applications/wiki/users')).json().users;
    expect((await t.admin('PATCH', `/api/admin/applications/wiki/users/${member.id}`, { status: 'suspended' })).statusCode).toBe(200);

    const page = await forwardCheck(t, { host: 'wiki.localhost', site, browser: true });
    expect(page.statusCode).toBe(403);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('data-reason="suspended"');
    // Served on the protected host: its stylesheet and links are the issuer's.
    const origin = new URL(t.config.issuer).origin;
    expect(page.body).toContain(`<base href="${origin}/">`);
    expect(page.headers['content-security-policy']).toContain(`style-src 'self' ${origin};`);
    const api = await forwardCheck(t, { host: 'wiki.localhost', site });
    expect([api.statusCode, problemOf(api)]).toEqual([403, expect.objectContaining({ code: 'access_refused', detail: 'Your access to Wiki is suspended.' })]);
    expect((await authRequestCheck(t, { host: 'wiki.localhost', site, browser: true })).statusCode).toBe(403);

    expect((await t.admin('DELETE', `/api/admin/applications/wiki/users/${member.id}`)).statusCode).toBe(204);
    const removed = await forwardCheck(t, { host: 'wiki.localhost', site, browser: true });
    expect([removed.statusCode, /data-reason="([a-z_]+)"/.exec(removed.body)?.[1]]).toEqual([403, 'not_member']);
  });

  it('sends a password-only session to step up where the application requires MFA', async () => {
    const t = await makeApp();
    const { site } = await signedIn(t);
    expect((await t.admin('PATCH', '/api/admin/applications/wiki/auth-policy', { mfa: 'required' })).statusCode).toBe(200);
    const stepUp = await forwardCheck(t, { host: 'wiki.localhost', uri: '/page', site, browser: true });
    expect([stepUp.statusCode, stepUp.headers.location]).toEqual([302, startUrlFor(t.config.issuer, 'http://wiki.localhost/page')]);
    expect((await authRequestCheck(t, { host: 'wiki.localhost', site, browser: true })).statusCode).toBe(401);
    expect((await forwardCheck(t, { host: 'wiki.localhost', site })).statusCode).toBe(401);
  });

  it('admits members of one of the allowedGroups only, names their groups, and stops within 2 s of a removal', async () => {
    const t = await makeApp();
    const { site } = await signedIn(t);
    const ada = (await t.admin('GET', '/api/admin/applications/wiki/users')).json().users[0].userId as string;
    await addGroup(t, 'media', [ada]);
    await addGroup(t, 'family', [ada]);
    await addGroup(t, 'admins', []);
    // Bob joins while the application has no rule, and is in none of its groups.
    const bobCookie = await personCookie(t, 'bob@example.com', 'wiki');
    // forwardAuth.groups moved to the application's group rule (decision 0450): a body that still
    // sends a list is refused with where it went, and nothing is written.
    const hostsBefore = (await t.admin('GET', '/api/admin/applications/wiki')).json().forwardAuth;
    for (const groups of [['media'], ['media', 'family']]) {
      const moved = await t.admin('PATCH', '/api/admin/applications/wiki', { forwardAuth: { hosts: ['wiki.localhost', '*.media.localhost'], groups } });
      expect([moved.statusCode, moved.json().code, moved.json().errors]).toEqual([400, 'validation_failed', [{
        path: 'body.forwardAuth.groups',
        message: 'has moved to allowedGroups, the application\'s group rule that every protocol honours: send "allowedGroups": [...] beside forwardAuth instead',
      }]]);
    }
    expect((await t.admin('GET', '/api/admin/applications/wiki')).json()).toMatchObject({ allowedGroups: null, forwardAuth: hostsBefore });
    // The contract's shape (and every export before the move) says `groups: null`; null and the
    // empty list meant no rule, so they are taken, and leave the application's rule alone.
    for (const groups of [null, []]) {
      const same = await t.admin('PATCH', '/api/admin/applications/wiki', { forwardAuth: { hosts: ['wiki.localhost', '*.media.localhost'], groups } });
      expect([same.statusCode, same.json().allowedGroups, same.json().forwardAuth]).toEqual([200, null, { hosts: ['wiki.localhost', '*.media.localhost'], basic: false }]);
    }
    const missing = await t.admin('PATCH', '/api/admin/applications/wiki', { allowedGroups: ['media', 'nobody'] });
    expect([missing.statusCode, missing.json().errors]).toEqual([400, [{ path: 'body.allowedGroups.1', message: 'there is no group "nobody"' }]]);
    const set = await t.admin('PATCH', '/api/admin/applications/wiki', { allowedGroups: ['admins', 'media'] });
    expect([set.statusCode, set.json().allowedGroups, set.json().forwardAuth]).toEqual([200, ['admins', 'media'], { hosts: ['wiki.localhost', '*.media.localhost'], basic: false }]);
    expect(identityOf(await forwardCheck(t, { host: 'wiki.localhost', site })).groups).toBe('family,media');
    // Remote-Groups is kept to the application's groupsFilter, as the groups claim is.
    expect((await t.admin('PATCH', '/api/admin/applications/wiki', { groupsFilter: ['family'] })).statusCode).toBe(200);
    expect(identityOf(await forwardCheck(t, { host: 'wiki.localhost', site })).groups).toBe('family');

    // A group the rule names cannot be deleted from under it.
    const inUse = await t.admin('DELETE', '/api/admin/groups/media');
    expect([inUse.statusCode, problemOf(inUse).code, problemOf(inUse).detail]).toEqual([409, 'group_in_use', 'The group "media" is named by Wiki (allowedGroups); remove it there first.']);

    expect((await t.admin('DELETE', `/api/admin/groups/media/members/${ada}`)).statusCode).toBe(204);
    const removed = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - removed < 6_000) {
      status = (await forwardCheck(t, { host: 'wiki.localhost', site })).statusCode;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(Date.now() - removed).toBeLessThan(2_500);
    const refused = await forwardCheck(t, { host: 'wiki.localhost', site, browser: true });
    expect([refused.statusCode, /data-reason="([a-z_]+)"/.exec(refused.body)?.[1]]).toEqual([403, 'group_missing']);
    expect(refused.body).toContain('Wiki is open only to members of certain groups');
    // The hand-over refuses too, a member outside the groups.
    const start403 = await start(t, 'http://wiki.localhost/', bobCookie);
    expect([start403.statusCode, /data-reason="([a-z_]+)"/.exec(start403.body)?.[1]]).toEqual([403, 'group_missing']);
    // And an open application with a rule takes no sign-ups (a new account is in no group).
    const signUp = await postJson(t, '/api/auth/sign-up/email', { email: 'cy@example.com', password: 'correct horse battery', applicationId: 'wiki' });
    expect([signUp.statusCode, signUp.json().code, signUp.json().detail]).toEqual([403, 'signup_not_allowed', 'Wiki is open only to members of certain groups (its group rule).']);
  });

  it('stops at once when the sign-in ends here: sign-out, the account page, the admin API', async () => {
    const t = await makeApp();
    const check = (site: string) => forwardCheck(t, { host: 'wiki.localhost', site, browser: true }).then((r) => r.statusCode);

    // Sign-out of the Gatehouse session.
    const a = await signedIn(t);
    expect(await check(a.site)).toBe(200);
    expect((await postJson(t, '/api/auth/sign-out', undefined, { cookie: a.cookie })).statusCode).toBe(204);
    expect(await check(a.site)).toBe(302);

    // The account page's "sign out this device", from another session of the same person.
    const b = await personCookie(t, 'bob@example.com', 'wiki');
    const bSite = await siteSignIn(t, b, 'http://wiki.localhost/');
    const other = await postJson(t, '/api/auth/sign-in/email', { email: 'bob@example.com', password: 'correct horse battery', applicationId: 'wiki' });
    const otherCookie = `gatehouse_session=${cookieValue(other, 'gatehouse_session')}`;
    const sessions = (await t.app.inject({ method: 'GET', url: '/api/me/sessions', headers: { cookie: otherCookie } })).json().sessions as { id: string; current: boolean }[];
    const target = sessions.find((s) => !s.current)!;
    expect(await check(bSite)).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: `/api/me/sessions/${target.id}`, headers: { cookie: otherCookie } })).statusCode).toBe(204);
    expect(await check(bSite)).toBe(302);

    // The admin API resetting a member's second factors ends all their sessions.
    const c = await personCookie(t, 'cy@example.com', 'wiki');
    const cSite = await siteSignIn(t, c, 'http://wiki.localhost/');
    const member = ((await t.admin('GET', '/api/admin/applications/wiki/users?q=cy')).json().users as { id: string }[])[0]!;
    expect(await check(cSite)).toBe(200);
    expect((await t.admin('DELETE', `/api/admin/applications/wiki/users/${member.id}/second-factor`)).statusCode).toBe(204);
    expect(await check(cSite)).toBe(302);

    // People management: "sign out everywhere", and disabling the person (which also stops their
    // tokens: the refusal names the account).
    const d = await personCookie(t, 'dee@example.com', 'wiki');
    const dSite = await siteSignIn(t, d, 'http://wiki.localhost/');
    const dee = ((await t.admin('GET', '/api/admin/applications/wiki/users?q=dee')).json().users as { userId: string }[])[0]!.userId;
    expect(await check(dSite)).toBe(200);
    expect((await t.admin('POST', `/api/admin/people/${dee}/sign-out`)).statusCode).toBeLessThan(300);
    expect(await check(dSite)).toBe(302);
    const dSite2 = await siteSignIn(t, await personCookie(t, 'eve@example.com', 'wiki'), 'http://wiki.localhost/');
    const eve = ((await t.admin('GET', '/api/admin/applications/wiki/users?q=eve')).json().users as { userId: string }[])[0]!.userId;
    expect((await t.admin('PATCH', `/api/admin/people/${eve}`, { status: 'disabled' })).statusCode).toBe(200);
    expect(await check(dSite2)).toBe(302);
  });

  it('stops within 5 seconds on another instance sharing the database (cached decisions live 2 s)', async () => {
    const t = await makeApp();
    const { cookie, site } = await signedIn(t);
    const other = await makeInstance(t);
    expect((await forwardCheck(other, { host: 'wiki.localhost', site })).statusCode).toBe(200);
    expect((await postJson(t, '/api/auth/sign-out', undefined, { cookie })).statusCode).toBe(204);
    const ended = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - ended < 6_000) {
      status = (await forwardCheck(other, { host: 'wiki.localhost', site })).statusCode;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(401);
    expect(Date.now() - ended).toBeLessThan(5_000);
  });
});

describe('the hand-over', () => {
  it('starts only for a URL on a protected host (400 and no redirect otherwise), and signs in first', async () => {
    const t = await makeApp();
    await protectedApp(t, 'wiki', ['wiki.localhost']);
    for (const rd of ['http://evil.example/', 'javascript:alert(1)', 'http://user:pw@wiki.localhost/', '/relative', 'ftp://wiki.localhost/']) {
      const res = await start(t, rd);
      expect(res.statusCode, rd).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.body).toContain('not a site protected by this server');
    }
    expect((await t.app.inject({ method: 'GET', url: '/api/auth/forward/start' })).statusCode).toBe(400);
    const anonymous = await start(t, 'http://wiki.localhost/a?b=c');
    expect(anonymous.statusCode).toBe(302);
    const signIn = new URL(String(anonymous.headers.location), 'http://x');
    expect(signIn.pathname).toBe('/sign-in');
    expect(Object.fromEntries(signIn.searchParams)).toEqual({ client_id: 'wiki', return_to: '/api/auth/forward/start?rd=http%3A%2F%2Fwiki.localhost%2Fa%3Fb%3Dc' });
    // The sign-in page resumes the hand-over and lets its form's redirects reach the protected host.
    const page = await t.app.inject({ method: 'GET', url: String(anonymous.headers.location) });
    expect(page.body).toContain('value="/api/auth/forward/start?rd=http%3A%2F%2Fwiki.localhost%2Fa%3Fb%3Dc"');
    expect(page.headers['content-security-policy']).toContain("form-action 'self' http://wiki.localhost:* https://wiki.localhost:*");
  });

  it('hands a one-time code to the host, which sets a host-only site cookie and goes back to rd', async () => {
    const t = await makeApp();
    await protectedApp(t, 'wiki', ['wiki.localhost:8080', 'wiki.localhost']);
    const cookie = await personCookie(t, 'ada@example.com', 'wiki');
    const { to, state } = await handOver(t, 'http://wiki.localhost:8080/docs?page=2', cookie);
    expect(`${to.origin}${to.pathname}`).toBe('http://wiki.localhost:8080/.gatehouse/callback');
    expect(to.searchParams.get('rd')).toBe('http://wiki.localhost:8080/docs?page=2');
    expect(to.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // Bound to the host: a code tried on another host is refused (and spent).
    const foreign = await callback(t, 'wiki.localhost', to.search.slice(1), { cookie: state });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.body).toContain('already been used, has expired or belongs to another site');
    expect(cookieValue(foreign, 'gatehouse_site')).toBeUndefined();
    expect((await callback(t, 'wiki.localhost:8080', to.search.slice(1), { cookie: state })).statusCode).toBe(400);

    const again = (await handOver(t, 'http://wiki.localhost:8080/docs?page=2', cookie, state)).to;
    const back = await callback(t, 'wiki.localhost:8080', again.search.slice(1), { cookie: state });
    expect([back.statusCode, back.headers.location, back.headers['cache-control']]).toEqual([302, 'http://wiki.localhost:8080/docs?page=2', 'no-store']);
    const set = String(back.headers['set-cookie']);
    expect(set).toMatch(/^gatehouse_site=[A-Za-z0-9_-]{43}; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Lax$/);
    // Single use.
    const spent = await callback(t, 'wiki.localhost:8080', again.search.slice(1), { cookie: state });
    expect([spent.statusCode, spent.headers['content-type']]).toEqual([400, 'text/html; charset=utf-8']);

    // Over https the cookie is Secure; an expired code (60 s) is refused.
    const secure = await handOver(t, 'https://wiki.localhost/', cookie);
    expect(String((await callback(t, 'wiki.localhost', secure.to.search.slice(1), { 'x-forwarded-proto': 'https', cookie: secure.state })).headers['set-cookie'])).toContain('; Secure');
    const late = await handOver(t, 'https://wiki.localhost/', cookie, secure.state);
    t.clock.advance(61_000);
    const expired = await callback(t, 'wiki.localhost', late.to.search.slice(1), { 'x-forwarded-proto': 'https', cookie: late.state });
    expect([expired.statusCode, expired.body.includes('already been used, has expired')]).toEqual([400, true]);

    // Audited like a sign-in.
    const audit = (await t.admin('GET', '/api/admin/audit-log?action=forward_auth.signed_in')).json();
    expect(audit.entries.map((e: { applicationId: string; details: { host: string } }) => [e.applicationId, e.details.host]))
      .toEqual([['wiki', 'wiki.localhost'], ['wiki', 'wiki.localhost:8080']]);
  });

  it('refuses a forged X-Forwarded-Host on the callback from an untrusted address', async () => {
    const t = await makeApp();
    await protectedApp(t, 'wiki', ['wiki.localhost']);
    const cookie = await personCookie(t, 'ada@example.com', 'wiki');
    const { to, state } = await handOver(t, 'http://wiki.localhost/', cookie);
    const forged = await t.app.inject({
      method: 'GET', url: `/.gatehouse/callback${to.search}`, remoteAddress: '203.0.113.9', headers: { host: 'wiki.localhost', 'x-forwarded-host': 'wiki.localhost', cookie: state },
    });
    expect(forged.statusCode).toBe(403);
    expect(forged.body).toContain('did not come through a proxy this server trusts');
  });

  it('binds the code to the browser that started the hand-over: another browser, or one with its own verifier, cannot spend it (issue 49, H6)', async () => {
    const t = await makeApp();
    await protectedApp(t, 'wiki', ['wiki.localhost']);
    await protectedApp(t, 'blog', ['blog.localhost']);
    const ada = await personCookie(t, 'ada@example.com', 'wiki');
    const eve = await personCookie(t, 'eve@example.com', 'wiki');
    // Without a challenge the start issues no code: it sends the browser to the protected host first…
    const first = await start(t, 'http://wiki.localhost/docs', ada);
    expect([first.statusCode, first.headers.location, first.headers['cache-control']])
      .toEqual([302, 'http://wiki.localhost/.gatehouse/start?rd=http%3A%2F%2Fwiki.localhost%2Fdocs', 'no-store']);
    // …which keeps a verifier in a host-only cookie and comes back with its challenge.
    const atHost = await hostStart(t, 'wiki.localhost', 'http://wiki.localhost/docs');
    expect(String(atHost.headers['set-cookie'])).toMatch(/^gatehouse_state=[A-Za-z0-9_-]{43}; Max-Age=600; Path=\/; HttpOnly; SameSite=Lax$/);
    const verifier = cookieValue(atHost, 'gatehouse_state')!;
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    expect([atHost.statusCode, atHost.headers.location, atHost.headers['cache-control']])
      .toEqual([302, `${t.config.issuer}/api/auth/forward/start?rd=http%3A%2F%2Fwiki.localhost%2Fdocs&challenge=${challenge}`, 'no-store']);
    // A second tab's start keeps the verifier the browser holds; over https the cookie is __Host- and Secure.
    const twice = await hostStart(t, 'wiki.localhost', 'http://wiki.localhost/other', { cookie: `gatehouse_state=${verifier}` });
    expect(new URL(String(twice.headers.location)).searchParams.get('challenge')).toBe(challenge);
    const secure = await hostStart(t, 'wiki.localhost', 'https://wiki.localhost/');
    expect(String(secure.headers['set-cookie'])).toMatch(/^__Host-gatehouse_state=[A-Za-z0-9_-]{43}; Max-Age=600; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    // Only for an rd on this very host: else the 400 page, no redirect, no cookie.
    for (const [host, rd] of [['wiki.localhost', 'http://blog.localhost/'], ['wiki.localhost', 'http://evil.example/'], ['evil.example', 'http://evil.example/']]) {
      const res = await hostStart(t, host!, rd!);
      expect([res.statusCode, res.headers.location, res.headers['set-cookie']], `${host} ${rd}`).toEqual([400, undefined, undefined]);
      expect(res.body).toContain('not a site protected by this server');
    }
    // A malformed challenge is no challenge: back to the host.
    const bad = await t.app.inject({ method: 'GET', url: '/api/auth/forward/start?rd=http%3A%2F%2Fwiki.localhost%2Fdocs&challenge=short', headers: { cookie: ada } });
    expect([bad.statusCode, bad.headers.location]).toEqual([302, 'http://wiki.localhost/.gatehouse/start?rd=http%3A%2F%2Fwiki.localhost%2Fdocs']);

    // Ada's code, seen in transit, is worth nothing in another browser: one without the verifier…
    const { to, state } = await handOver(t, 'http://wiki.localhost/docs', ada);
    const query = to.search.slice(1);
    const none = await callback(t, 'wiki.localhost', query);
    expect([none.statusCode, none.headers['content-type'], cookieValue(none, 'gatehouse_site')]).toEqual([400, 'text/html; charset=utf-8', undefined]);
    expect(none.body).toContain('This sign-in was started in another browser');
    // …one with its own (Eve's)…
    const { state: evesState } = await handOver(t, 'http://wiki.localhost/', eve);
    const theirs = await callback(t, 'wiki.localhost', query, { cookie: evesState });
    expect([theirs.statusCode, cookieValue(theirs, 'gatehouse_site')]).toEqual([400, undefined]);
    expect(theirs.body).toContain('already been used, has expired or belongs to another site');
    // …or one that holds a second verifier planted beside its own (a parent domain's cookie).
    const planted = await callback(t, 'wiki.localhost', query, { cookie: `${evesState}; ${state}` });
    expect([planted.statusCode, cookieValue(planted, 'gatehouse_site')]).toEqual([400, undefined]);
    expect(planted.body).toContain('This sign-in was started in another browser');
    // None of those spent it: the browser that started signs in.
    const back = await callback(t, 'wiki.localhost', query, { cookie: state });
    expect([back.statusCode, back.headers.location]).toEqual([302, 'http://wiki.localhost/docs']);
    expect(identityOf(await forwardCheck(t, { host: 'wiki.localhost', site: cookieValue(back, 'gatehouse_site')! })).email).toBe('ada@example.com');

    // Login CSRF: Eve's own code sent to Ada's browser does not sign Ada's browser in as Eve.
    const evesCode = await handOver(t, 'http://wiki.localhost/', eve, evesState);
    const forced = await callback(t, 'wiki.localhost', evesCode.to.search.slice(1), { cookie: state });
    expect([forced.statusCode, cookieValue(forced, 'gatehouse_site')]).toEqual([400, undefined]);
    const audit = (await t.admin('GET', '/api/admin/audit-log?action=forward_auth.signed_in')).json();
    expect(audit.entries.map((e: { target: string; details: { host: string } }) => e.details.host)).toEqual(['wiki.localhost']);
  });

  it('refuses who the application refuses, and asks for consent where the application is explicit', async () => {
    const t = await makeApp();
    await protectedApp(t, 'wiki', ['wiki.localhost'], { authPolicy: { signup_policy: 'closed' } });
    await protectedApp(t, 'blog', ['blog.localhost'], { consent: 'explicit' });
    const cookie = await personCookie(t, 'ada@example.com', 'blog');
    const refused = await start(t, 'http://wiki.localhost/', cookie);
    // Signed in for blog only: wiki's realm asks for a sign-in first.
    expect(new URL(String(refused.headers.location), 'http://x').pathname).toBe('/sign-in');
    // Signing in for wiki too keeps the browser's session (same person): the cookie stays.
    const signedIn = await postJson(t, '/api/auth/sign-in/email', { email: 'ada@example.com', password: 'correct horse battery', applicationId: 'wiki' }, { cookie });
    expect([signedIn.statusCode, cookieValue(signedIn, 'gatehouse_session')]).toEqual([200, undefined]);
    const both = cookie;
    const closed = await start(t, 'http://wiki.localhost/', both);
    expect([closed.statusCode, /data-reason="([a-z_]+)"/.exec(closed.body)?.[1]]).toEqual([403, 'closed']);

    const ask = await start(t, 'http://blog.localhost/post', both);
    const consent = String(ask.headers.location);
    expect(consent).toBe(`/consent?${new URLSearchParams({ return_to: '/api/auth/forward/start?rd=http%3A%2F%2Fblog.localhost%2Fpost' }).toString()}`);
    const { res: page, cookie: withCsrf } = await openPage(t, consent, both);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Allow Blog?');
    const denied = await postForm(t, '/consent', { csrf_token: csrfFrom(page), return_to: '/api/auth/forward/start?rd=http%3A%2F%2Fblog.localhost%2Fpost', decision: 'deny' }, withCsrf);
    expect([denied.statusCode, denied.headers.location]).toEqual([403, undefined]);
    const approved = await postForm(t, '/consent', { csrf_token: csrfFrom(page), return_to: '/api/auth/forward/start?rd=http%3A%2F%2Fblog.localhost%2Fpost', decision: 'approve' }, withCsrf);
    expect([approved.statusCode, approved.headers.location]).toEqual([303, '/api/auth/forward/start?rd=http%3A%2F%2Fblog.localhost%2Fpost']);
    const handed = await handOver(t, 'http://blog.localhost/post', both);
    expect(handed.to.href).toMatch(/^http:\/\/blog\.localhost\/\.gatehouse\/callback\?code=/);
  });

  it('signs out of the site at /.gatehouse/sign-out and hands over to the confirmed end of the Gatehouse session', async () => {
    const t = await makeApp();
    await protectedApp(t, 'wiki', ['wiki.localhost']);
    const cookie = await personCookie(t, 'ada@example.com', 'wiki');
    const site = await siteSignIn(t, cookie, 'http://wiki.localhost/');
    const out = await t.app.inject({
      method: 'GET', url: '/.gatehouse/sign-out', headers: { host: 'wiki.localhost', 'x-forwarded-host': 'wiki.localhost', 'x-forwarded-proto': 'http', cookie: `gatehouse_site=${site}` },
    });
    expect([out.statusCode, out.headers.location]).toEqual([303, `${t.config.issuer}/api/auth/oauth2/end-session?client_id=wiki`]);
    expect(String(out.headers['set-cookie'])).toMatch(/^gatehouse_site=; Max-Age=0; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Lax$/);
    expect((await forwardCheck(t, { host: 'wiki.localhost', site })).statusCode).toBe(401);
    // The issuer asks before it ends the Gatehouse session.
    const confirm = await openPage(t, '/api/auth/oauth2/end-session?client_id=wiki', cookie);
    expect(confirm.res.statusCode).toBe(200);
    expect(confirm.res.body).toContain('name="csrf_token"');
  });
});

describe('data', () => {
  it('finds a site session, a code and a host through indexes', async () => {
    const t = await makeApp();
    const postgres = engineOf(t.db) === 'postgres';
    const lookup = 'SELECT s.id FROM forward_auth_sessions f JOIN sessions s ON s.id = f.session_id JOIN people p ON p.id = f.person_id '
      + 'LEFT JOIN memberships m ON m.application_id = f.application_id AND m.person_id = f.person_id WHERE f.token_hash = ?';
    const plans = {
      lookup: await queryPlan(t.db, lookup, 'h'),
      code: await queryPlan(t.db, 'DELETE FROM forward_auth_codes WHERE code_hash = ?', 'h'),
      hosts: await queryPlan(t.db, 'SELECT application_id FROM forward_auth_hosts WHERE host IN (?, ?)', 'a', 'b'),
      bySession: await queryPlan(t.db, 'DELETE FROM forward_auth_sessions WHERE session_id IN (?)', 's'),
    };
    if (postgres) {
      expect(usesPostgresIndex(plans.lookup, 'forward_auth_sessions_token_uq')).toBe(true);
      expect(usesPostgresIndex(plans.code, 'forward_auth_codes_pkey')).toBe(true);
      expect(usesPostgresIndex(plans.hosts, 'forward_auth_hosts_pkey')).toBe(true);
      expect(usesPostgresIndex(plans.bySession, 'forward_auth_sessions_session_idx')).toBe(true);
    } else {
      expect(plans.lookup).toContain('SEARCH f USING INDEX forward_auth_sessions_token_uq (token_hash=?)');
      expect(plans.lookup).not.toMatch(/SCAN/);
      expect(plans.code).toContain('SEARCH forward_auth_codes USING INDEX sqlite_autoindex_forward_auth_codes_1 (code_hash=?)');
      expect(plans.hosts).toContain('SEARCH forward_auth_hosts USING INDEX sqlite_autoindex_forward_auth_hosts_1 (host=?)');
      expect(plans.bySession).toMatch(/SEARCH forward_auth_sessions USING (COVERING )?INDEX forward_auth_sessions_session_idx \(session_id=\?\)/);
    }
  });
});
