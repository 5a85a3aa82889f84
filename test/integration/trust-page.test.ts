/**
 * The trust page (spec lan-trust.md; issue 46) on a real server with a local CA, over HTTPS and
 * over the plain-http port: `/trust` (no script, the five sections), `/trust.json` (fingerprint as
 * openssl prints it, absolute URLs, the commands), the downloads with their exact content types
 * and bytes, 404 for every other `/trust/` path and without a local CA, only certificates ever
 * leaving; the panel's `trust` link and QR code; and the set-up text's `trust` lines by runtime with
 * `caPath` checked. One HTTPS server for the file; the no-CA cases on an inject app.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderSVG } from 'uqr';
import { loadConfig } from '../../server/config.js';
import { start, type Running } from '../../server/main.js';
import { tlsPaths } from '../../server/ops/tls.js';
import { caFetch, type CaFetch } from '../helpers/ca-fetch.js';
import { OPS_ADMIN_TOKEN, tempDataDir } from '../helpers/data-dir.js';
import { makeApp } from '../helpers/app.js';
import { expectProblem, expectValidation } from '../helpers/problem.js';
import { headerRecord } from '../helpers/header-record.js';

/** A plain-http request; the path goes out as written (a URL would resolve `..` first). */
function plainGet(url: string, method = 'GET'): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const { hostname, port } = new URL(url);
  const path = url.replace(/^http:\/\/[^/]+/, '');
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

let running: Running;
let dir: string;
let caPem: string;
let https: CaFetch;
let plainBase: string;
const admin = (path: string, init: { method?: string; body?: unknown } = {}) =>
  https(`${running.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });

beforeAll(async () => {
  // Not tempDataDir(): that one is removed after each test, and this server serves the whole file.
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-trust-'));
  running = await start(loadConfig({ GATEHOUSE_DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN: OPS_ADMIN_TOKEN, LOG_LEVEL: 'silent', GATEHOUSE_TLS: 'auto', GATEHOUSE_HTTP_REDIRECT_PORT: '0' }));
  caPem = readFileSync(tlsPaths(dir).ca, 'utf8');
  https = caFetch(caPem);
  plainBase = running.redirectUrl!;
});
afterAll(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** What `openssl x509 -noout -fingerprint -sha256` prints after `=`. */
const opensslFingerprint = () => execFileSync('openssl', ['x509', '-noout', '-fingerprint', '-sha256', '-in', tlsPaths(dir).ca], { encoding: 'utf8' }).trim().split('=')[1];

const FILES = {
  'gatehouse-ca.pem': 'application/x-pem-file',
  'gatehouse-ca.crt': 'application/x-x509-ca-cert',
  'gatehouse-ca.cer': 'application/pkix-cert',
  'gatehouse-ca.mobileconfig': 'application/x-apple-aspen-config',
  'firefox-policies.json': 'application/json',
} as const;

describe('the trust page', () => {
  it('/trust.json over HTTPS and plain http: the fingerprint exactly as openssl prints it, absolute URLs for that listener, the commands', async () => {
    const fingerprint = opensslFingerprint();
    expect(fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    for (const base of [running.url, plainBase]) {
      const res = base === running.url ? await https(`${base}/trust.json`) : await plainGet(`${base}/trust.json`);
      expect(res.status).toBe(200);
      const headers = res instanceof Response ? headerRecord(res.headers) : res.headers;
      expect(headers['content-type']).toBe('application/json; charset=utf-8');
      expect(headers['cache-control']).toBe('no-cache');
      expect(headers['x-content-type-options']).toBe('nosniff');
      const body = res instanceof Response ? await res.json() : JSON.parse(res.body.toString('utf8'));
      expect(body).toEqual({
        fingerprintSha256: fingerprint,
        notAfter: new Date(new X509Certificate(caPem).validTo).toISOString(),
        downloads: {
          pem: `${base}/trust/gatehouse-ca.pem`,
          crt: `${base}/trust/gatehouse-ca.crt`,
          cer: `${base}/trust/gatehouse-ca.cer`,
          mobileconfig: `${base}/trust/gatehouse-ca.mobileconfig`,
          firefoxPolicies: `${base}/trust/firefox-policies.json`,
        },
        commands: {
          windowsCertutil: 'certutil -addstore -f Root gatehouse-ca.cer',
          windowsPowerShell: 'Import-Certificate -FilePath gatehouse-ca.cer -CertStoreLocation Cert:\\LocalMachine\\Root',
          debian: 'sudo cp gatehouse-ca.crt /usr/local/share/ca-certificates/ && sudo update-ca-certificates',
          trustAnchor: 'sudo trust anchor --store gatehouse-ca.crt',
          nss: 'certutil -d sql:$HOME/.pki/nssdb -A -t "C,," -n "Gatehouse CA" -i gatehouse-ca.crt',
        },
      });
    }
    expect(plainBase).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('/trust is a page without script, with the five sections, the fingerprint and every download; over plain http it says to compare the fingerprint', async () => {
    const res = await https(`${running.url}/trust`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; img-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'$/);
    const html = await res.text();
    expect(html).not.toMatch(/<script|javascript:|\son[a-z]+=/i);
    for (const id of ['ios', 'windows', 'linux', 'firefox', 'android']) expect(html).toContain(`<section id="${id}">`);
    expect(html).toContain(`<code id="fingerprint">${opensslFingerprint()}</code>`);
    expect(html).toContain('Settings › General › About › Certificate Trust Settings');
    expect(html).toContain('since Android 7, apps ignore certificates you install yourself');
    for (const name of Object.keys(FILES)) expect(html).toContain(`href="${running.url}/trust/${name}" download="${name}"`);
    expect(html).toContain('certutil -d sql:$HOME/.pki/nssdb -A -t &#34;C,,&#34; -n &#34;Gatehouse CA&#34; -i gatehouse-ca.crt');
    expect(html).not.toContain('id="plain-http"');

    const plain = await plainGet(`${plainBase}/trust`);
    expect(plain.status).toBe(200);
    expect(plain.headers['strict-transport-security']).toBeUndefined();
    const plainHtml = plain.body.toString('utf8');
    expect(plainHtml).toContain('<p id="plain-http"><strong>This page came over plain http');
    expect(plainHtml).toContain(`href="${plainBase}/trust/gatehouse-ca.crt"`);
    expect((await plainGet(`${plainBase}/trust`, 'HEAD')).body.length).toBe(0);
    expect((await plainGet(`${plainBase}/trust`, 'POST')).status).toBe(405);
  });

  it('offers each download with its exact content type, as an attachment, with the CA\'s bytes (DER for .cer), on both ports', async () => {
    const der = Buffer.from(new X509Certificate(caPem).raw);
    expect(der.equals(execFileSync('openssl', ['x509', '-in', tlsPaths(dir).ca, '-outform', 'DER']))).toBe(true);
    for (const [name, type] of Object.entries(FILES)) {
      for (const res of [await https(`${running.url}/trust/${name}`), await plainGet(`${plainBase}/trust/${name}`)]) {
        const headers = res instanceof Response ? headerRecord(res.headers) : res.headers;
        const body = res instanceof Response ? Buffer.from(await res.arrayBuffer()) : res.body;
        expect(res.status, name).toBe(200);
        expect(headers['content-type'], name).toBe(type);
        expect(headers['content-disposition']).toBe(`attachment; filename="${name}"`);
        expect(headers['cache-control']).toBe('no-cache');
        expect(headers['x-content-type-options']).toBe('nosniff');
        if (name.endsWith('.pem') || name.endsWith('.crt')) expect(body.toString('utf8')).toBe(caPem);
        if (name.endsWith('.cer')) expect(body.equals(der)).toBe(true);
        if (name === 'firefox-policies.json') {
          expect(JSON.parse(body.toString('utf8'))).toEqual({ policies: { Certificates: { ImportEnterpriseRoots: true, Install: ['gatehouse-ca.crt'] } } });
        }
        if (name.endsWith('.mobileconfig')) expect(body.toString('utf8')).toContain(`<string>com.apple.security.root</string>`);
        expect(body.toString('latin1')).not.toContain('PRIVATE KEY');
      }
    }
  });

  it('answers 404 for every other /trust/ path, on both ports, and never hands out a key', async () => {
    const paths = ['/trust/', '/trust/ca-key.pem', '/trust/server-key.pem', '/trust/../tls/ca-key.pem', '/trust/%2e%2e/tls/ca-key.pem', '/trust/gatehouse-ca.pem/x', '/trust/GATEHOUSE-CA.PEM', '/trust/gatehouse-ca.key', '/trust/constructor', '/trust/__proto__', '/trust/toString'];
    for (const path of paths) {
      // inject: the path reaches the HTTPS app as written.
      expectProblem(await running.app.inject({ method: 'GET', url: path }), 404, 'route_not_found');
      const plain = await plainGet(`${plainBase}${path}`);
      expect(plain.status, path).toBe(404);
      expect(plain.body.toString('utf8')).toBe('Not found.\n');
    }
    // Outside /trust the plain-http port still only redirects.
    const other = await plainGet(`${plainBase}/trustee`);
    expect(other.status).toBe(301);
  });

  it('gives the panel the trust link and a QR code of it; the QR code is the admin\'s only', async () => {
    const tls = await (await admin('/api/admin/tls')).json();
    expect(tls.trust).toEqual({ url: `${running.url}/trust`, plainHttpUrl: `${plainBase}/trust`, fingerprintSha256: opensslFingerprint() });
    expect(tls.acme).toBeNull();
    const qr = await admin('/api/admin/tls/trust-qr.svg');
    expect(qr.status).toBe(200);
    expect(qr.headers.get('content-type')).toBe('image/svg+xml');
    expect(await qr.text()).toBe(renderSVG(`${running.url}/trust`, { ecc: 'M', border: 2, pixelSize: 6 }));
    const anonymous = await https(`${running.url}/api/admin/tls/trust-qr.svg`);
    expect(anonymous.status).toBe(401);
  });

  it('follows a renewed CA at once: the page, the JSON and the files name the new one', async () => {
    const before = opensslFingerprint();
    const renewed = await admin('/api/admin/tls/ca/renew', { method: 'POST' });
    expect(renewed.status).toBe(200);
    const after = opensslFingerprint();
    expect(after).not.toBe(before);
    expect((await renewed.json()).trust.fingerprintSha256).toBe(after);
    caPem = readFileSync(tlsPaths(dir).ca, 'utf8');
    https = caFetch(caPem);
    expect((await (await https(`${running.url}/trust.json`)).json()).fingerprintSha256).toBe(after);
    expect((await plainGet(`${plainBase}/trust/gatehouse-ca.pem`)).body.toString('utf8')).toBe(caPem);
  });
});

describe('set-up text trust lines', () => {
  it('puts the runtime\'s lines into each preset\'s set-up (Node, Python, PHP, Nextcloud, system), with the caPath asked for', async () => {
    const cases: [string, Record<string, string>, string, Record<string, string>, { file: string; name: string; value: string }[], string[]][] = [
      ['outline', { baseUrl: 'https://wiki.lan.example' }, 'node', { NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/gatehouse-ca.pem' }, [], []],
      ['paperless-ngx', { baseUrl: 'https://paperless.lan.example' }, 'python', { REQUESTS_CA_BUNDLE: '/etc/ssl/certs/gatehouse-ca.pem', SSL_CERT_FILE: '/etc/ssl/certs/gatehouse-ca.pem' }, [], []],
      ['roundcube', { baseUrl: 'https://mail.lan.example' }, 'php', {}, [
        { file: 'php.ini', name: 'curl.cainfo', value: '/etc/ssl/certs/gatehouse-ca.pem' },
        { file: 'php.ini', name: 'openssl.cafile', value: '/etc/ssl/certs/gatehouse-ca.pem' },
      ], []],
      ['nextcloud', { baseUrl: 'https://cloud.lan.example' }, 'nextcloud', {}, [{ file: 'config.php', name: 'allow_local_remote_servers', value: 'true' }], ['occ security:certificates:import /etc/ssl/certs/gatehouse-ca.pem']],
      ['gitea', { baseUrl: 'https://git.lan.example' }, 'system', { SSL_CERT_FILE: '/etc/ssl/certs/gatehouse-ca.pem' }, [], []],
    ];
    for (const [preset, presetInputs, runtime, env, settings, extra] of cases) {
      const created = await admin('/api/admin/applications', { method: 'POST', body: { preset, presetInputs } });
      expect(created.status, preset).toBe(201);
      const id = (await created.json()).id;
      const setup = await (await admin(`/api/admin/applications/${id}/setup`)).json();
      expect(setup.trust, preset).toEqual({
        caUrl: `${running.url}/trust/gatehouse-ca.pem`,
        fingerprintSha256: opensslFingerprint(),
        caPath: '/etc/ssl/certs/gatehouse-ca.pem',
        runtime,
        env,
        settings,
        commands: [
          `curl -fsS --insecure --create-dirs -o /etc/ssl/certs/gatehouse-ca.pem ${running.url}/trust/gatehouse-ca.pem`,
          'openssl x509 -noout -fingerprint -sha256 -in /etc/ssl/certs/gatehouse-ca.pem',
          ...extra,
        ],
      });
      // The notes say the same lines in words (Roundcube's name its own setting, oauth_verify_peer).
      if (preset === 'roundcube') continue;
      const note = setup.notes.find((n: string) => n.startsWith('LAN TLS is on'));
      for (const [name, value] of Object.entries(env)) expect(note, preset).toContain(`${name}=${value}`);
      for (const s of settings) expect(note, preset).toContain(`set ${s.name} = ${s.value} in ${s.file}`);
      for (const c of extra) expect(note, preset).toContain(`run ${c}`);
    }
    const custom = await (await admin('/api/admin/applications/outline/setup?caPath=/srv/outline/certs/gatehouse-ca.pem')).json();
    expect(custom.trust.env).toEqual({ NODE_EXTRA_CA_CERTS: '/srv/outline/certs/gatehouse-ca.pem' });
    expect(custom.trust.commands[0]).toBe(`curl -fsS --insecure --create-dirs -o /srv/outline/certs/gatehouse-ca.pem ${running.url}/trust/gatehouse-ca.pem`);
  });

  it('refuses a hostile or relative caPath with 400 validation_failed naming query.caPath', async () => {
    for (const caPath of ['relative/ca.pem', '/etc/ssl/$(reboot).pem', '/etc/ssl/a b.pem', '/etc/../root/.ssh/id_rsa', '/etc/ssl/./ca.pem', '/etc/ssl/', "/etc/ssl/ca.pem';rm", '', `/${'a'.repeat(300)}`, '/etc/ssl/ca.pem\n']) {
      const res = await admin(`/api/admin/applications/outline/setup?caPath=${encodeURIComponent(caPath)}`);
      const body = await res.json();
      expectValidation({ statusCode: res.status, headers: headerRecord(res.headers), json: () => body }, ['query.caPath']);
    }
    const unknown = await admin('/api/admin/applications/outline/setup?path=/x');
    expect(unknown.status).toBe(400);
  });
});

describe('without a local CA', () => {
  it('answers 404 for the trust page, its JSON, files and QR code; trust is null in the TLS status and set-up text', async () => {
    const t = await makeApp();
    for (const path of ['/trust', '/trust.json', '/trust/gatehouse-ca.pem', '/trust/firefox-policies.json', '/trust/other']) {
      expectProblem(await t.app.inject({ method: 'GET', url: path }), 404, 'ca_not_found');
    }
    expectProblem(await t.admin('GET', '/api/admin/tls/trust-qr.svg'), 404, 'ca_not_found');
    expectProblem(await t.admin('POST', '/api/admin/tls/acme/renew'), 409, 'tls_not_acme');
    const tls = (await t.admin('GET', '/api/admin/tls')).json();
    expect(tls).toMatchObject({ mode: 'off', trust: null, acme: null });
    await t.admin('POST', '/api/admin/applications', { preset: 'outline', presetInputs: { baseUrl: 'https://wiki.lan.example' } });
    const setup = (await t.admin('GET', '/api/admin/applications/outline/setup')).json();
    expect(setup.trust).toBeNull();
    expect(setup.notes.some((n: string) => n.startsWith('LAN TLS is on'))).toBe(false);
    // A data directory with LAN TLS configured but no CA made yet: still nothing to hand out.
    const empty = tempDataDir();
    writeFileSync(join(empty, 'marker'), '');
    const u = await makeApp({ config: { dataDir: empty, tls: { mode: 'auto', extraNames: [] } } });
    expectProblem(await u.app.inject({ method: 'GET', url: '/trust.json' }), 404, 'ca_not_found');
  });
});
