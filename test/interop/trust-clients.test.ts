/**
 * The trust page's files and commands, and the set-up text's trust lines, with the real software
 * (spec lan-trust.md; issue 46), against one Gatehouse with a local CA on loopback:
 * - openssl prints the fingerprint the page shows, from the DER `.cer`;
 * - python3's plistlib reads the `.mobileconfig` (one com.apple.security.root payload holding the CA);
 * - NSS certutil: the page's own `nss` command, run by sh in a fresh $HOME, makes a database in which
 *   `certutil -V` accepts the served certificate's chain (and refuses it without the command);
 * - Chromium (headless, Debian's) with that $HOME opens Gatehouse over HTTPS without a certificate
 *   error, and fails with ERR_CERT_AUTHORITY_INVALID with an empty database;
 * - Node (fetch) and python3-requests reach the discovery document with exactly the set-up text's
 *   commands and environment, and fail without them; PHP with its php.ini setting (openssl.cafile).
 * Files are fetched over the plain-http port, as a device that does not trust the CA yet would.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import { loadConfig } from '../../server/config.js';
import { start, type Running } from '../../server/main.js';
import { tlsPaths } from '../../server/ops/tls.js';
import { caFetch, type CaFetch } from '../helpers/ca-fetch.js';
import { cleanEnv as cliEnv, ensureBuilt, runCli } from '../helpers/server-process.js';

const TOKEN = 'trust-clients-admin-token-0123456789';
const PYTHON = '/usr/bin/python3';
let running: Running;
let root: string;
let downloads: string;
let https: CaFetch;
let trustJson: { fingerprintSha256: string; downloads: Record<string, string>; commands: Record<string, string> };

/**
 * A program's output, run without blocking this process's event loop: the server under test runs
 * in it, so a synchronous call that reaches the server (curl, the clients) would wait forever.
 */
function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { ...options, encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ status: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

/** Environment without any CA variable of the test runner's own. */
const cleanEnv = (extra: Record<string, string> = {}) => {
  const env = { ...process.env };
  for (const name of ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE']) delete env[name];
  return { ...env, ...extra };
};

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'gatehouse-trust-clients-'));
  const dataDir = join(root, 'data');
  running = await start(loadConfig({ GATEHOUSE_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent', GATEHOUSE_TLS: 'auto', GATEHOUSE_HTTP_REDIRECT_PORT: '0' }));
  https = caFetch(readFileSync(tlsPaths(dataDir).ca, 'utf8'));
  // A device: the JSON and the files over plain http, with curl.
  downloads = join(root, 'downloads');
  mkdirSync(downloads);
  trustJson = JSON.parse((await run('curl', ['-fsS', `${running.redirectUrl}/trust.json`])).stdout);
  for (const url of Object.values(trustJson.downloads)) expect((await run('curl', ['-fsS', '-O', url], { cwd: downloads })).status).toBe(0);
}, 60_000);

afterAll(async () => {
  await running?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('the downloads, read by the real tools', () => {
  it('openssl prints the page\'s fingerprint from the DER file Windows imports', () => {
    const out = execFileSync('openssl', ['x509', '-inform', 'DER', '-in', join(downloads, 'gatehouse-ca.cer'), '-noout', '-fingerprint', '-sha256'], { encoding: 'utf8' });
    expect(out.trim()).toBe(`sha256 Fingerprint=${trustJson.fingerprintSha256}`);
  });

  it('python3 plistlib reads the profile: a Configuration holding the CA as one com.apple.security.root payload', () => {
    const script = `
import json, plistlib, sys
p = plistlib.load(open(sys.argv[1], 'rb'))
inner = p['PayloadContent']
print(json.dumps({
  'type': p['PayloadType'], 'version': p['PayloadVersion'], 'identifier': p['PayloadIdentifier'], 'uuid': len(p['PayloadUUID']),
  'payloads': [{'type': q['PayloadType'], 'version': q['PayloadVersion'], 'der': q['PayloadContent'].hex(), 'identifier': q['PayloadIdentifier']} for q in inner],
}))`;
    const out = JSON.parse(execFileSync(PYTHON, ['-c', script, join(downloads, 'gatehouse-ca.mobileconfig')], { encoding: 'utf8' }));
    expect(out).toEqual({
      type: 'Configuration',
      version: 1,
      identifier: 'local.gatehouse.trust.127-0-0-1',
      uuid: 36,
      payloads: [{ type: 'com.apple.security.root', version: 1, der: readFileSync(join(downloads, 'gatehouse-ca.cer')).toString('hex'), identifier: 'local.gatehouse.trust.127-0-0-1.root' }],
    });
  });
});

describe('NSS and Chromium, with the database the page\'s own command makes', () => {
  let home: string;
  let emptyHome: string;

  beforeAll(() => {
    home = join(root, 'home');
    emptyHome = join(root, 'empty-home');
    for (const h of [home, emptyHome]) {
      mkdirSync(join(h, '.pki', 'nssdb'), { recursive: true });
      execFileSync('certutil', ['-N', '-d', `sql:${join(h, '.pki', 'nssdb')}`, '--empty-password']);
    }
    // Exactly the command the page shows, by a shell, where the file was downloaded.
    execFileSync('sh', ['-c', trustJson.commands.nss!], { cwd: downloads, env: cleanEnv({ HOME: home }) });
  });

  it('certutil -V accepts the served certificate\'s chain, and refuses it without the CA', () => {
    const served = join(root, 'served.pem');
    writeFileSync(served, running.tls!.cert);
    const verify = (h: string) => {
      const db = `sql:${join(h, '.pki', 'nssdb')}`;
      execFileSync('certutil', ['-A', '-d', db, '-n', 'gatehouse-server', '-t', ',,', '-i', served]);
      return spawnSync('certutil', ['-V', '-d', db, '-n', 'gatehouse-server', '-u', 'V'], { encoding: 'utf8' });
    };
    const ok = verify(home);
    expect(ok.stdout.trim()).toBe('certutil: certificate is valid');
    expect(ok.status).toBe(0);
    const refused = verify(emptyHome);
    expect(`${refused.stdout}${refused.stderr}`).toContain("certutil: certificate is invalid: Peer's Certificate issuer is not recognized.");
    expect(refused.status).not.toBe(0);
    execFileSync('certutil', ['-D', '-d', `sql:${join(home, '.pki', 'nssdb')}`, '-n', 'gatehouse-server']);
  });

  it('Chromium opens Gatehouse without a certificate error with it, and refuses without it', async () => {
    const open = async (h: string) => {
      const browser = await chromium.launch({
        executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
        headless: true,
        env: cleanEnv({ HOME: h }),
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
      try {
        const page = await browser.newPage();
        const response = await page.goto(`${running.url}/trust`);
        return { status: response?.status(), title: await page.title() };
      } catch (error) {
        return { error: (error as Error).message };
      } finally {
        await browser.close();
      }
    };
    expect(await open(home)).toEqual({ status: 200, title: 'Trust Gatehouse on this device' });
    expect((await open(emptyHome)).error).toContain('net::ERR_CERT_AUTHORITY_INVALID');
  });
});

describe('app servers, with exactly the set-up text\'s lines', () => {
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await https(`${running.url}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: await res.json() };
  };

  /** Creates the application from its preset and runs its trust commands (download, fingerprint check) by sh. */
  async function trustFor(preset: string, baseUrl: string) {
    expect((await admin('POST', '/api/admin/applications', { preset, presetInputs: { baseUrl } })).status).toBe(201);
    const caPath = join(root, preset, 'certs', 'gatehouse-ca.pem');
    const { status, body } = await admin('GET', `/api/admin/applications/${preset}/setup?caPath=${encodeURIComponent(caPath)}`);
    expect(status).toBe(200);
    const trust = body.trust as { env: Record<string, string>; settings: { file: string; name: string; value: string }[]; commands: string[]; runtime: string };
    const outputs: string[] = [];
    for (const command of trust.commands) {
      const done = await run('sh', ['-c', command], { env: cleanEnv() });
      expect(done.status, `${command}: ${done.stderr}`).toBe(0);
      outputs.push(done.stdout);
    }
    expect(outputs[1]!.trim()).toBe(`sha256 Fingerprint=${trustJson.fingerprintSha256}`);
    return trust;
  }

  const discovery = () => `${running.url}/.well-known/openid-configuration`;

  it('Node (fetch) reaches discovery with NODE_EXTRA_CA_CERTS from the set-up text, and fails without it', async () => {
    const trust = await trustFor('outline', 'https://wiki.lan.example');
    expect(trust.runtime).toBe('node');
    const script = 'fetch(process.argv[1]).then((r) => r.json()).then((d) => console.log(d.issuer), (e) => { console.log(`failed: ${e.cause?.code ?? e.message}`); process.exitCode = 1; })';
    const ok = await run(process.execPath, ['-e', script, discovery()], { env: cleanEnv(trust.env) });
    expect(ok.stdout.trim()).toBe(running.config.issuer);
    const refused = await run(process.execPath, ['-e', script, discovery()], { env: cleanEnv() });
    expect(refused.stdout.trim()).toBe('failed: UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it('python3-requests reaches discovery with REQUESTS_CA_BUNDLE and SSL_CERT_FILE from the set-up text, and fails without them', async () => {
    const trust = await trustFor('paperless-ngx', 'https://paperless.lan.example');
    expect(trust.runtime).toBe('python');
    const script = `
import sys, requests, urllib.request, json
try:
    print(requests.get(sys.argv[1], timeout=10).json()['issuer'])
    print(json.load(urllib.request.urlopen(sys.argv[1], timeout=10))['issuer'])
except Exception as e:
    print('failed:', type(e).__name__)`;
    const ok = await run(PYTHON, ['-c', script, discovery()], { env: cleanEnv(trust.env) });
    expect(ok.stdout.trim().split('\n')).toEqual([running.config.issuer, running.config.issuer]);
    const refused = await run(PYTHON, ['-c', script, discovery()], { env: cleanEnv() });
    expect(refused.stdout.trim()).toBe('failed: SSLError');
  });

  it('gatehouse app setup prints the same lines for the CA path given, and names a bad one', async () => {
    ensureBuilt();
    const env = cliEnv({ GATEHOUSE_DATA_DIR: running.config.dataDir, GATEHOUSE_URL: running.url, ADMIN_TOKEN: TOKEN });
    const out = await runCli(['app', 'setup', 'outline', '--ca-path', '/srv/outline/ca.pem'], env);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain([
      `--- trust the local CA (node; SHA-256 ${trustJson.fingerprintSha256}) ---`,
      'NODE_EXTRA_CA_CERTS=/srv/outline/ca.pem',
      `$ curl -fsS --insecure --create-dirs -o /srv/outline/ca.pem ${running.url}/trust/gatehouse-ca.pem`,
      '$ openssl x509 -noout -fingerprint -sha256 -in /srv/outline/ca.pem',
    ].join('\n'));
    const bad = await runCli(['app', 'setup', 'outline', '--ca-path', 'srv/ca.pem'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('query.caPath: must be an absolute path of letters, digits, ".", "_", "/" and "-" only');
  });

  it('PHP reaches discovery with the php.ini setting from the set-up text, and fails without it', async () => {
    const trust = await trustFor('roundcube', 'https://mail.lan.example');
    expect(trust.runtime).toBe('php');
    const script = '$d = @file_get_contents($argv[1]); echo $d === false ? "failed" : json_decode($d)->issuer;';
    const ini = trust.settings.filter((s) => s.file === 'php.ini' && s.name === 'openssl.cafile').flatMap((s) => ['-d', `${s.name}=${s.value}`]);
    expect(ini).toHaveLength(2);
    const ok = await run('php', [...ini, '-r', script, discovery()], { env: cleanEnv() });
    expect(ok.stdout.trim()).toBe(running.config.issuer);
    const refused = await run('php', ['-r', script, discovery()], { env: cleanEnv() });
    expect(refused.stdout.trim()).toBe('failed');
  });
});
