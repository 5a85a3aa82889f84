/**
 * GATEHOUSE_TLS=acme for real (spec lan-trust.md, "Real-domain certificate"; issue 46): Debian's
 * pebble issues and renews against a bind9 the test starts with its own configuration, which takes
 * dynamic updates (RFC 2136) only when signed with its TSIG key. Pebble validates DNS-01 by asking
 * that bind9 (`-dnsserver`), with no validation shortcut (test/helpers/pebble.ts). Proven:
 * - the local-CA certificate serves until the first ACME one, which is then served by the same
 *   process without a restart (with its chain, verified against pebble's root for the domain);
 * - the TXT record is removed afterwards; the account key and the certificate key are sealed
 *   under GATEHOUSE_KEY_SECRET on disk, and nothing secret shows in the admin API;
 * - the certificate is renewed by itself with a third of its lifetime left (pebble issues
 *   24-second certificates here), and on request (POST /api/admin/tls/acme/renew → 202);
 * - a wrong TSIG secret shows its reason in acme.lastError (status failed) while the local
 *   certificate keeps serving.
 */
import { X509Certificate, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { start, type Running } from '../../server/main.js';
import { tlsPaths } from '../../server/ops/tls.js';
import { acmePaths } from '../../server/trust/acme/store.js';
import { startBind9, type Bind9 } from '../helpers/bind9.js';
import { startPebble, type Pebble } from '../helpers/pebble.js';

const TOKEN = 'acme-pebble-admin-token-0123456789';
const DOMAIN = 'gh.acme.test';
const VALIDITY_SECONDS = 24;
let bind: Bind9;
let pebble: Pebble;
let root: string;
let running: Running;
let other: Running | undefined;

function acmeEnv(dataDir: string, secretFile: string): Record<string, string> {
  return {
    GATEHOUSE_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent',
    GATEHOUSE_KEY_SECRET: 'acme-pebble-key-secret-0123456789abcdef',
    GATEHOUSE_TLS: 'acme',
    GATEHOUSE_ACME_DOMAINS: DOMAIN,
    GATEHOUSE_ACME_DIRECTORY: pebble.directory,
    GATEHOUSE_ACME_CA_FILE: pebble.caFile,
    GATEHOUSE_ACME_EMAIL: 'admin@acme.test',
    GATEHOUSE_ACME_AGREE_TOS: 'yes',
    GATEHOUSE_ACME_RFC2136_SERVER: `127.0.0.1:${bind.port}`,
    GATEHOUSE_ACME_RFC2136_TSIG_NAME: bind.keyName,
    GATEHOUSE_ACME_RFC2136_TSIG_SECRET_FILE: secretFile,
  };
}

/** The certificate the HTTPS port serves for `servername` (not verified: the caller checks what it wants). */
function served(server: Running, servername = DOMAIN, ca?: string): Promise<{ cert: X509Certificate; chain: number; authorized: boolean; error?: string }> {
  const port = Number(new URL(server.url).port);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false, ...(ca ? { ca } : {}) }, () => {
      const peer = socket.getPeerCertificate(true);
      let chain = 1;
      for (let c = peer; c.issuerCertificate && c.issuerCertificate !== c; c = c.issuerCertificate) chain++;
      resolve({ cert: socket.getPeerX509Certificate()!, chain, authorized: socket.authorized, error: socket.authorizationError?.toString() });
      socket.end();
    });
    socket.on('error', reject);
  });
}

/** GET /api/admin/tls, through the app itself (the handshake is what served() checks). */
async function tlsStatus(server: Running) {
  const res = await server.app.inject({ method: 'GET', url: '/api/admin/tls', headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.statusCode, text: res.body };
}

/** Waits (polling every 250 ms) until `probe` gives a value, or fails after `ms`. */
async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const acmeState = async (server: Running) => (server.app.ctx.lanTrust.acme()!);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'gatehouse-acme-'));
  bind = await startBind9('acme.test');
  pebble = await startPebble(bind.port, VALIDITY_SECONDS);
  running = await start(loadConfig(acmeEnv(join(root, 'data'), bind.secretFile)));
}, 60_000);

afterAll(async () => {
  await other?.stop();
  await running?.stop();
  await pebble?.stop();
  await bind?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('GATEHOUSE_TLS=acme with pebble and bind9', () => {
  let first: X509Certificate;

  it('serves the local certificate until the first ACME one, then swaps it in without a restart', async () => {
    const localCa = new X509Certificate(readFileSync(tlsPaths(running.config.dataDir).ca));
    // What the listener was started with: the local CA's certificate (no ACME one existed).
    expect(new X509Certificate(running.tls!.cert).checkIssued(localCa)).toBe(true);
    const state = await until('the first ACME certificate', 60_000, async () => {
      const s = await acmeState(running);
      if (s.status === 'failed') throw new Error(`ACME failed: ${s.lastError}`);
      return s.status === 'valid' ? s : undefined;
    });
    const pebbleRoot = await pebble.root();
    const now = await served(running, DOMAIN, pebbleRoot);
    expect(now.authorized).toBe(true);
    expect(now.chain).toBeGreaterThanOrEqual(2);
    expect(now.cert.subjectAltName).toBe(`DNS:${DOMAIN}`);
    expect(now.cert.checkIssued(localCa)).toBe(false);
    first = now.cert;
    const lifetime = new Date(first.validTo).getTime() - new Date(first.validFrom).getTime();
    expect(lifetime).toBeGreaterThan((VALIDITY_SECONDS - 2) * 1000);
    expect(lifetime).toBeLessThanOrEqual((VALIDITY_SECONDS + 1) * 1000);
    expect(state).toEqual({
      status: 'valid',
      domains: [DOMAIN],
      notAfter: new Date(first.validTo).toISOString(),
      renewAt: new Date(new Date(first.validTo).getTime() - lifetime / 3).toISOString(),
      lastError: null,
    });
    expect(running.tls!.cert).toContain('BEGIN CERTIFICATE');
    expect(new X509Certificate(running.tls!.cert).serialNumber).toBe(first.serialNumber);

    // The admin API says the same, and nothing secret.
    const tls = await tlsStatus(running);
    expect(tls.status).toBe(200);
    const body = JSON.parse(tls.text);
    expect(body.mode).toBe('acme');
    expect(body.acme).toEqual(state);
    expect(body.certificate.dnsNames).toEqual([DOMAIN]);
    expect(body.trust.url).toMatch(/\/trust$/);
    expect(tls.text).not.toMatch(/PRIVATE KEY|gks1\./);
    expect(tls.text).not.toContain(readFileSync(bind.secretFile, 'utf8').trim());

    // A public certificate serves: apps need no private CA, so the set-up text has no trust lines.
    const admin = { authorization: `Bearer ${TOKEN}` };
    const created = await running.app.inject({ method: 'POST', url: '/api/admin/applications', headers: admin, payload: { preset: 'outline', presetInputs: { baseUrl: 'https://wiki.acme.test' } } });
    expect(created.statusCode).toBe(201);
    const setup = (await running.app.inject({ method: 'GET', url: '/api/admin/applications/outline/setup', headers: admin })).json();
    expect(setup.trust).toBeNull();
    expect(setup.notes.some((note: string) => note.startsWith('LAN TLS is on'))).toBe(false);
  });

  it('removed the TXT record after validation, and keeps both keys sealed on disk', async () => {
    expect(await bind.txt(`_acme-challenge.${DOMAIN}`)).toEqual([]);
    const paths = acmePaths(running.config.dataDir);
    for (const key of [paths.accountKey, paths.key]) {
      expect(readFileSync(key, 'utf8')).toMatch(/^gks1\./);
      expect(statSync(key).mode & 0o777).toBe(0o600);
    }
    expect(readFileSync(paths.cert, 'utf8')).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  it('renews by itself with a third of its lifetime left, serving the new one at once', async () => {
    const renewAt = new Date(new Date(first.validTo).getTime() - (new Date(first.validTo).getTime() - new Date(first.validFrom).getTime()) / 3).getTime();
    const next = await until('the renewed certificate', 40_000, async () => {
      const now = await served(running, DOMAIN, await pebble.root());
      return now.cert.serialNumber !== first.serialNumber ? now : undefined;
    });
    // Not before renewAt (the clock may have moved on while the order ran), and before expiry.
    expect(Date.now()).toBeGreaterThanOrEqual(renewAt);
    expect(new Date(next.cert.validFrom).getTime()).toBeGreaterThanOrEqual(renewAt - 2_000);
    expect(new Date(next.cert.validFrom).getTime()).toBeLessThan(new Date(first.validTo).getTime());
    expect(next.authorized).toBe(true);
    first = next.cert;
  });

  it('renews on request: POST /api/admin/tls/acme/renew answers 202, and a new certificate follows', async () => {
    const pebbleRoot = await pebble.root();
    const before = (await served(running, DOMAIN, pebbleRoot)).cert.serialNumber;
    const res = await running.app.inject({ method: 'POST', url: '/api/admin/tls/acme/renew', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode).toBe(202);
    expect(res.headers.location).toBe('/api/admin/tls');
    expect(res.json().domains).toEqual([DOMAIN]);
    await until('a certificate after the renew request', 40_000, async () => {
      const now = await served(running, DOMAIN, pebbleRoot);
      return now.cert.serialNumber !== before ? true : undefined;
    });
  });

  it('shows why a wrong TSIG secret fails, in lastError, while the local certificate keeps serving', async () => {
    const wrong = join(root, 'wrong.secret');
    writeFileSync(wrong, randomBytes(32).toString('base64'));
    other = await start(loadConfig(acmeEnv(join(root, 'data-2'), wrong)));
    const state = await until('the failed attempt', 30_000, async () => {
      const s = await acmeState(other!);
      return s.status === 'failed' ? s : undefined;
    });
    expect(state.lastError).toBe(`DNS server 127.0.0.1:${bind.port} refused the TSIG key "gatehouse-acme" (NOTAUTH, TSIG BADSIG): check GATEHOUSE_ACME_RFC2136_TSIG_NAME, _ALGORITHM and the secret file`);
    expect(state).toMatchObject({ status: 'failed', notAfter: null, renewAt: null });
    const localCa = new X509Certificate(readFileSync(tlsPaths(other.config.dataDir).ca));
    expect((await served(other, 'localhost')).cert.checkIssued(localCa)).toBe(true);
    const body = JSON.parse((await tlsStatus(other)).text);
    expect(body.acme).toEqual(state);
    expect(body.certificate.dnsNames).toContain('localhost');
    expect(await bind.txt(`_acme-challenge.${DOMAIN}`)).toEqual([]);
  });
});
