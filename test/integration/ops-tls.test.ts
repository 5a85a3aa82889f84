import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:tls';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import forge from 'node-forge';
import { certificateNames, ensureLocalTls, normalizeIp, tlsPaths } from '../../server/ops/tls.js';
import { caFetch } from '../helpers/ca-fetch.js';
import { OPS_ADMIN_TOKEN, startServer, tempDataDir } from '../helpers/data-dir.js';

const DAY = 24 * 3600 * 1000;

function lanAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((i) => !i.internal)
    .map((i) => normalizeIp(i.address));
}

describe('local certificate authority', () => {
  it('issues a CA and a server certificate naming every host name and address, keys 0600', () => {
    const dir = tempDataDir();
    const now = new Date();
    const tls = ensureLocalTls(dir, ['gatehouse.lan', '10.9.8.7'], now);
    const paths = tlsPaths(dir);
    expect(tls.issued).toBe(true);
    for (const key of [paths.caKey, paths.key]) expect(statSync(key).mode & 0o777).toBe(0o600);

    const names = certificateNames(tls.cert);
    const host = hostname().toLowerCase();
    expect(names.dns).toEqual(expect.arrayContaining(['localhost', host, `${host}.local`, 'gatehouse.lan']));
    expect(names.ips).toEqual(expect.arrayContaining(['127.0.0.1', normalizeIp('::1'), '10.9.8.7', ...lanAddresses()]));

    const ca = new X509Certificate(tls.caPem!);
    const server = new X509Certificate(tls.cert);
    expect(ca.ca).toBe(true);
    expect(server.ca).toBe(false);
    expect(server.checkIssued(ca)).toBe(true);
    expect(server.verify(ca.publicKey)).toBe(true);
    expect(forge.pki.certificateFromPem(tls.cert).siginfo.algorithmOid).toBe(forge.pki.oids.sha256WithRSAEncryption);
    // Two years (issue 22: shorter, renewed on demand); test/integration/ops-tls-constraints.test.ts.
    const caDays = (new Date(ca.validTo).getTime() - now.getTime()) / DAY;
    expect(caDays).toBeGreaterThan(729);
    const serverDays = (new Date(server.validTo).getTime() - now.getTime()) / DAY;
    expect(serverDays).toBeGreaterThan(360);
    expect(serverDays).toBeLessThanOrEqual(366);
    expect(tls.fingerprint).toBe(ca.fingerprint256);

    // Nothing changed: the same certificate is kept.
    const again = ensureLocalTls(dir, ['gatehouse.lan', '10.9.8.7'], new Date(now.getTime() + DAY));
    expect(again.issued).toBe(false);
    expect(again.cert).toBe(tls.cert);
  });

  it('renews a certificate near expiry, one missing a name the CA covers, and one from another CA, keeping the CA', () => {
    const dir = tempDataDir();
    const now = new Date();
    const first = ensureLocalTls(dir, [], now);

    const nearExpiry = ensureLocalTls(dir, [], new Date(now.getTime() + 340 * DAY));
    expect(nearExpiry.issued).toBe(true);
    expect(nearExpiry.caPem).toBe(first.caPem);
    expect(nearExpiry.cert).not.toBe(first.cert);

    // A certificate signed by some other CA is replaced by one from ours.
    const stranger = ensureLocalTls(tempDataDir(), [], now);
    writeFileSync(tlsPaths(dir).cert, stranger.cert);
    writeFileSync(tlsPaths(dir).key, stranger.key);
    const reissued = ensureLocalTls(dir, [], new Date(now.getTime() + 342 * DAY));
    expect(reissued.issued).toBe(true);
    expect(new X509Certificate(reissued.cert).checkIssued(new X509Certificate(first.caPem!))).toBe(true);
  });
});

describe('HTTPS listener', () => {
  it('renews an expired certificate on start and serves HTTPS verified against only <data>/tls/ca.pem', async () => {
    const dir = tempDataDir();
    // Material issued 400 days ago: the CA is still valid, the server certificate has expired.
    const old = ensureLocalTls(dir, [], new Date(Date.now() - 400 * DAY));
    expect(new Date(new X509Certificate(old.cert).validTo).getTime()).toBeLessThan(Date.now());

    const running = await startServer(dir, { GATEHOUSE_TLS: 'auto', GATEHOUSE_HTTP_REDIRECT_PORT: '0' });
    expect(running.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(running.config.issuer).toBe(running.url);
    expect(running.tls!.fingerprint).toBe(old.fingerprint);
    expect(running.tls!.cert).not.toBe(old.cert);
    expect(running.tls!.notAfter.getTime()).toBeGreaterThan(Date.now() + 300 * DAY);

    const caPem = readFileSync(join(dir, 'tls', 'ca.pem'), 'utf8');
    const fetchWithCa = caFetch(caPem);
    const health = await fetchWithCa(`${running.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', database: 'reachable' });

    const ca = await fetchWithCa(`${running.url}/ca.pem`);
    expect(ca.status).toBe(200);
    expect(ca.headers.get('content-type')).toBe('application/x-pem-file');
    expect(await ca.text()).toBe(caPem);
    // The control panel's overview links to it, so administrators can hand it to devices.
    const overview = await fetchWithCa(`${running.url}/api/admin/overview`, { headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } });
    expect(overview.status).toBe(200);
    expect((await overview.json()).caCertificateUrl).toBe(`${running.url}/ca.pem`);

    // Without the CA the certificate is not trusted (no insecure switch anywhere).
    await expect(fetch(`${running.url}/healthz`)).rejects.toThrow();
    // A certificate from another CA does not validate this server.
    const other = ensureLocalTls(tempDataDir(), [], new Date());
    await expect(caFetch(other.caPem!)(`${running.url}/healthz`)).rejects.toThrow(/self.signed|unable to verify|certificate/i);

    // The plain-http listener only redirects.
    const redirect = await new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
      httpRequest(`${running.redirectUrl}/.well-known/openid-configuration?x=1`, (res) => {
        res.resume();
        resolve({ status: res.statusCode!, location: res.headers.location });
      })
        .on('error', reject)
        .end();
    });
    const port = new URL(running.url).port;
    expect(redirect).toEqual({ status: 301, location: `https://127.0.0.1:${port}/.well-known/openid-configuration?x=1` });
  });

  it('answers /ca.pem with 404 problem details when there is no local CA', async () => {
    const running = await startServer(tempDataDir());
    expect(running.url).toMatch(/^http:\/\//);
    const response = await fetch(`${running.url}/ca.pem`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await response.json()).code).toBe('ca_not_found');
  });

  it('re-issues the certificate while running when it needs it, serving it without a restart; a name the CA does not cover waits for a CA renewal', async () => {
    const dir = tempDataDir();
    const running = await startServer(dir, { GATEHOUSE_TLS: 'auto' });
    const caPem = readFileSync(join(dir, 'tls', 'ca.pem'), 'utf8');
    const port = Number(new URL(running.url).port);
    const served = () =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port, ca: caPem, servername: 'localhost' }, () => {
          const cert = socket.getPeerX509Certificate()!;
          socket.end();
          resolve(`${cert.fingerprint256} ${cert.subjectAltName ?? ''}`);
        });
        socket.on('error', reject);
      });
    const before = await served();
    expect(running.refreshTls()).toBe(false);

    // A new name outside the CA's name constraints cannot be added to the certificate.
    if (running.config.tls.mode !== 'auto') throw new Error('TLS mode should be auto');
    running.config.tls.extraNames.push('renamed.lan');
    expect(running.refreshTls()).toBe(false);
    expect(await served()).toBe(before);
    // A certificate file that is no longer ours (restored, replaced) is re-issued and served at once.
    const stranger = ensureLocalTls(tempDataDir(), [], new Date());
    writeFileSync(join(dir, 'tls', 'server.pem'), stranger.cert);
    expect(running.refreshTls()).toBe(true);
    const after = await served();
    expect(after).not.toBe(before);
    expect(after).not.toContain('renamed.lan');
    expect(readFileSync(join(dir, 'tls', 'ca.pem'), 'utf8')).toBe(caPem);
    expect((await caFetch(caPem)(`${running.url}/healthz`)).status).toBe(200);
  });
});
