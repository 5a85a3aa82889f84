/**
 * The LAN certificate authority can vouch only for the appliance (issue 22, item 2): a critical
 * nameConstraints extension permits the configured host names and the machine's addresses and
 * nothing else, so a certificate its key signs for any other name is refused by every client that
 * trusts the CA (checked here with Node's OpenSSL over a real TLS handshake); it lives two years and
 * is renewed on demand (admin API) or once expired; a CA from an older install (ten years, no
 * constraints) keeps serving but is reported; the fingerprint is in `gatehouse status`, the admin
 * API and the panel's overview.
 */
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:tls';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import forge from 'node-forge';
import { caStatus, certificateNames, ensureLocalTls, hostNames, renewLocalCa, tlsPaths } from '../../server/ops/tls.js';
import { formatStatus, readStatus } from '../../server/ops/status.js';
import { openDatabase } from '../../server/db/client.js';
import { caFetch } from '../helpers/ca-fetch.js';
import { OPS_ADMIN_TOKEN, startServer, tempDataDir } from '../helpers/data-dir.js';

const DAY = 24 * 3600 * 1000;

/** A leaf certificate for `names` signed with the data directory's CA key: what a thief of the key could make. */
function mintWithCaKey(dir: string, names: { dns?: string[]; ips?: string[] }) {
  const paths = tlsPaths(dir);
  const ca = forge.pki.certificateFromPem(readFileSync(paths.ca, 'utf8'));
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }) as string);
  cert.serialNumber = '0a';
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 30 * DAY);
  cert.setSubject([{ name: 'commonName', value: names.dns?.[0] ?? 'leaf' }]);
  cert.setIssuer(ca.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [...(names.dns ?? []).map((value) => ({ type: 2, value })), ...(names.ips ?? []).map((ip) => ({ type: 7, ip }))] },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(readFileSync(paths.caKey, 'utf8')), forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

/** Serves `leaf` over TLS and connects trusting only `caPem`: the handshake's verdict. */
async function handshake(leaf: { cert: string; key: string }, caPem: string, servername: string): Promise<string> {
  const server = createServer({ cert: leaf.cert, key: leaf.key }, (socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise<string>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, ca: caPem, servername, checkServerIdentity: () => undefined }, () => {
        socket.end();
        resolve('trusted');
      });
      socket.on('error', (error) => resolve(error.message));
    });
  } finally {
    server.close();
  }
}

/** A CA as an older Gatehouse made it: ten years, no name constraints. */
function legacyCa(dir: string, now: Date) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }) as string);
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(now.getTime() - 3600_000);
  cert.validity.notAfter = new Date(now.getTime() + 10 * 365 * DAY);
  const subject = [{ name: 'commonName', value: 'Gatehouse local CA (old)' }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  cert.sign(forge.pki.privateKeyFromPem(keyPem), forge.md.sha256.create());
  const paths = tlsPaths(dir);
  ensureLocalTls(dir, [], now); // creates the directory layout
  writeFileSync(paths.ca, forge.pki.certificateToPem(cert));
  writeFileSync(paths.caKey, keyPem, { mode: 0o600 });
  return forge.pki.certificateToPem(cert);
}

describe('name constraints of the local CA', () => {
  it('permits exactly the host names and the appliance addresses, critically, for two years', () => {
    const dir = tempDataDir();
    const now = new Date();
    const tls = ensureLocalTls(dir, ['gatehouse.lan', '10.9.8.7'], now);
    const ca = forge.pki.certificateFromPem(tls.caPem!);
    const ext = ca.getExtension('nameConstraints') as { critical?: boolean; permittedSubtrees: { type: number; value: string }[]; excludedSubtrees: unknown[] } | null;
    expect(ext?.critical).toBe(true);
    const expected = hostNames(['gatehouse.lan', '10.9.8.7']);
    expect(ext!.permittedSubtrees.filter((s) => s.type === 2).map((s) => s.value).sort()).toEqual(expected.dns);
    // iPAddress subtrees: the address and an all-ones mask (one host each).
    const ips = ext!.permittedSubtrees.filter((s) => s.type === 7).map((s) => Buffer.from(s.value, 'binary'));
    expect(ips.every((b) => b.length === 8 || b.length === 32)).toBe(true);
    expect(ips.every((b) => b.subarray(b.length / 2).every((byte) => byte === 0xff))).toBe(true);
    expect(ips).toHaveLength(expected.ips.length);
    expect(ext!.permittedSubtrees.every((s) => s.type === 2 || s.type === 7)).toBe(true);
    expect(caStatus(dir, ['gatehouse.lan', '10.9.8.7'], now)).toMatchObject({ nameConstraints: { dns: expected.dns, ips: expected.ips }, uncovered: [] });

    const x509 = new X509Certificate(tls.caPem!);
    const days = (Date.parse(x509.validTo) - now.getTime()) / DAY;
    expect(days).toBeGreaterThan(729);
    expect(days).toBeLessThanOrEqual(731);
    expect(Date.parse(new X509Certificate(tls.cert).validTo)).toBeLessThanOrEqual(Date.parse(x509.validTo));
  });

  it('a certificate signed with the CA key for any other name or address is refused by a client trusting the CA', async () => {
    const dir = tempDataDir();
    const tls = ensureLocalTls(dir, ['gatehouse.lan'], new Date());
    // The appliance's own certificate is fine, and so is one for a permitted name.
    expect(await handshake({ cert: tls.cert, key: tls.key }, tls.caPem!, 'localhost')).toBe('trusted');
    expect(await handshake(mintWithCaKey(dir, { dns: ['gatehouse.lan'] }), tls.caPem!, 'gatehouse.lan')).toBe('trusted');
    for (const names of [{ dns: ['bank.example.com'] }, { dns: ['gatehouse.lan', 'mail.google.com'] }, { ips: ['10.0.0.99'] }]) {
      expect(await handshake(mintWithCaKey(dir, names), tls.caPem!, names.dns?.[0] ?? '10.0.0.99'), JSON.stringify(names)).toMatch(/permitted subtree violation/);
    }
  });

  it('leaves out (and reports) a name the CA does not permit until the CA is renewed, which covers it', () => {
    const dir = tempDataDir();
    const now = new Date();
    const first = ensureLocalTls(dir, [], now);
    const later = new Date(now.getTime() + DAY);
    const renamed = ensureLocalTls(dir, ['renamed.lan'], later);
    expect(certificateNames(renamed.cert).dns).not.toContain('renamed.lan');
    expect(renamed.fingerprint).toBe(first.fingerprint);
    expect(caStatus(dir, ['renamed.lan'], later)).toMatchObject({ uncovered: ['renamed.lan'], renewalDue: true });

    const renewed = renewLocalCa(dir, ['renamed.lan'], later);
    expect(renewed.fingerprint).not.toBe(first.fingerprint);
    expect(certificateNames(renewed.cert).dns).toContain('renamed.lan');
    expect(new X509Certificate(renewed.cert).checkIssued(new X509Certificate(renewed.caPem!))).toBe(true);
    expect(caStatus(dir, ['renamed.lan'], later)).toMatchObject({ uncovered: [], renewalDue: false, fingerprint: renewed.fingerprint });
  });

  it('renews an expired CA by itself; warns 60 days before', () => {
    const dir = tempDataDir();
    const now = new Date();
    const first = ensureLocalTls(dir, [], now);
    expect(caStatus(dir, [], new Date(now.getTime() + 669 * DAY))).toMatchObject({ renewalDue: false });
    expect(caStatus(dir, [], new Date(now.getTime() + 671 * DAY))).toMatchObject({ renewalDue: true });
    const expired = ensureLocalTls(dir, [], new Date(now.getTime() + 731 * DAY));
    expect(expired.issued).toBe(true);
    expect(expired.fingerprint).not.toBe(first.fingerprint);
  });

  it('keeps serving a CA from an older install (ten years, no constraints) but reports it until renewed', async () => {
    const dir = tempDataDir();
    const now = new Date();
    const old = legacyCa(dir, now);
    const tls = ensureLocalTls(dir, [], now);
    expect(tls.caPem).toBe(old);
    expect(new X509Certificate(tls.cert).checkIssued(new X509Certificate(old))).toBe(true);
    expect(caStatus(dir, [], now)).toMatchObject({ nameConstraints: null, renewalDue: true, uncovered: [] });
    openDatabase(join(dir, 'gatehouse.db')).$client.close();
    const status = await readStatus(dir);
    expect(formatStatus(status!)).toContain(`Local CA         SHA-256 ${tls.fingerprint}, expires ${new Date(new X509Certificate(old).validTo).toISOString()}, no name constraints (made by an older Gatehouse: renew it)`);
  });
});

describe('the CA on a running server', () => {
  it('GET /api/admin/tls shows the CA and its fingerprint; renewing it swaps the served certificate at once', async () => {
    const dir = tempDataDir();
    const running = await startServer(dir, { GATEHOUSE_TLS: 'auto' });
    const caPem = readFileSync(join(dir, 'tls', 'ca.pem'), 'utf8');
    const fingerprint = new X509Certificate(caPem).fingerprint256;
    const admin = (fetcher: ReturnType<typeof caFetch>, method: string, path: string) =>
      fetcher(`${running.url}${path}`, { method, headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } });
    const trustingOld = caFetch(caPem);

    const shown = await admin(trustingOld, 'GET', '/api/admin/tls');
    expect(shown.status).toBe(200);
    const body = await shown.json();
    expect(body).toMatchObject({
      mode: 'auto',
      ca: { fingerprint, notAfter: new Date(new X509Certificate(caPem).validTo).toISOString() },
      certificate: { notAfter: running.tls!.notAfter.toISOString() },
      caUrl: `${running.url}/ca.pem`,
      caRenewalDue: false,
      uncovered: [],
    });
    expect(body.caNameConstraints.dns).toContain('localhost');
    expect(body.caNameConstraints.ips).toContain('127.0.0.1');
    // The CLI's status shows the same fingerprint.
    expect(formatStatus((await readStatus(dir))!)).toContain(`Local CA         SHA-256 ${fingerprint}, expires `);

    const renewed = await admin(trustingOld, 'POST', '/api/admin/tls/ca/renew');
    expect(renewed.status).toBe(200);
    const next = await renewed.json();
    expect(next.ca.fingerprint).not.toBe(fingerprint);
    expect(next.caRenewalDue).toBe(false);
    const newPem = readFileSync(join(dir, 'tls', 'ca.pem'), 'utf8');
    expect(new X509Certificate(newPem).fingerprint256).toBe(next.ca.fingerprint);
    // Served at once: a new connection verifies with the new CA, not with the old one.
    const port = Number(new URL(running.url).port);
    const verdict = (ca: string) =>
      new Promise<string>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
          socket.end();
          resolve('trusted');
        });
        socket.on('error', (error) => resolve(error.message));
      });
    expect(await verdict(newPem)).toBe('trusted');
    expect(await verdict(caPem)).toMatch(/self.signed|unable to (get|verify)|signature/i);
    const audit = await (await admin(caFetch(newPem), 'GET', '/api/admin/audit-log?action=tls.ca_renewed')).json();
    expect(audit.entries).toMatchObject([{ actor: 'admin', details: { previousFingerprint: fingerprint, fingerprint: next.ca.fingerprint } }]);
  });

  it('without TLS: mode off and no CA; renewing answers 409 tls_not_local', async () => {
    const running = await startServer(tempDataDir());
    const get = await fetch(`${running.url}/api/admin/tls`, { headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } });
    expect(await get.json()).toEqual({
      mode: 'off', ca: null, certificate: null, renewsAt: null, caUrl: null, plainHttpCaUrl: null, caNameConstraints: null, caRenewalDue: false, uncovered: [], trust: null, acme: null,
    });
    const renew = await fetch(`${running.url}/api/admin/tls/ca/renew`, { method: 'POST', headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } });
    expect(renew.status).toBe(409);
    expect((await renew.json()).code).toBe('tls_not_local');
  });

  it('the plain-http redirect keeps a Host the certificate names, and sends any other Host to the issuer', async () => {
    const running = await startServer(tempDataDir(), { GATEHOUSE_TLS: 'auto', GATEHOUSE_HTTP_REDIRECT_PORT: '0', GATEHOUSE_TLS_NAMES: 'gatehouse.lan' });
    const port = new URL(running.url).port;
    const redirect = (host: string) =>
      new Promise<string | undefined>((resolve, reject) => {
        const target = new URL(running.redirectUrl!);
        httpRequest({ host: target.hostname, port: target.port, path: '/admin/?x=1', headers: { host } }, (res) => {
          res.resume();
          resolve(res.headers.location);
        })
          .on('error', reject)
          .end();
      });
    expect(await redirect(`gatehouse.lan:${new URL(running.redirectUrl!).port}`)).toBe(`https://gatehouse.lan:${port}/admin/?x=1`);
    expect(await redirect('localhost')).toBe(`https://localhost:${port}/admin/?x=1`);
    for (const host of ['evil.example', 'evil.example:80', 'gatehouse.lan.evil.example', '[::2]:80']) {
      expect(await redirect(host), host).toBe(`${running.url}/admin/?x=1`);
    }
  });
});
