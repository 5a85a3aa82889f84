/**
 * LAN TLS for the panel and for devices (issue 25): `GET /api/admin/tls` reads the local CA and the
 * served certificate; the plain-http port serves the CA (`/ca.pem`) and a page with its
 * fingerprint (`/ca`), and still redirects everything else to https. Backups status on a real
 * data directory.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { fingerprint, tlsPaths } from '../../server/ops/tls.js';
import { caFetch } from '../helpers/ca-fetch.js';
import { freePort, OPS_ADMIN_TOKEN, startServer, tempDataDir } from '../helpers/data-dir.js';

function plainGet(url: string, method = 'GET'): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('LAN TLS status and the CA over plain http', () => {
  it('reports the CA, the certificate and where devices fetch the CA; serves it over the redirect port', async () => {
    const dir = tempDataDir();
    const port = await freePort();
    const running = await startServer(dir, { GATEHOUSE_TLS: 'auto', GATEHOUSE_HTTP_REDIRECT_PORT: String(port), HOST: '127.0.0.1' });
    const caPem = readFileSync(tlsPaths(dir).ca, 'utf8');
    const fetchCa = caFetch(caPem);
    const res = await fetchCa(`${running.url}/api/admin/tls`, { headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body.mode).toBe('auto');
    expect(body.ca).toMatchObject({ fingerprint: fingerprint(caPem), subject: expect.stringContaining('Gatehouse') });
    expect(body.certificate.dnsNames).toEqual(expect.arrayContaining(['localhost']));
    expect(body.certificate.ipAddresses).toEqual(expect.arrayContaining(['127.0.0.1', '0:0:0:0:0:0:0:1']));
    expect(new Date(body.renewsAt).getTime()).toBe(new Date(body.certificate.notAfter).getTime() - 30 * 24 * 3600 * 1000);
    expect(body.caUrl).toBe(`${running.url}/ca.pem`);
    expect(body.plainHttpCaUrl).toBe(`http://127.0.0.1:${port}/ca`);

    const page = await plainGet(`http://127.0.0.1:${port}/ca`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    expect(page.headers['strict-transport-security']).toBeUndefined();
    expect(page.body).toContain(`<code id="fingerprint">${fingerprint(caPem)}</code>`);
    expect(page.body).toContain('<a href="/ca.pem" download="gatehouse-ca.pem">');

    const pem = await plainGet(`http://127.0.0.1:${port}/ca.pem`);
    expect(pem.status).toBe(200);
    expect(pem.headers['content-type']).toBe('application/x-pem-file');
    expect(pem.headers['content-disposition']).toBe('attachment; filename="gatehouse-ca.pem"');
    expect(pem.body).toBe(caPem);
    expect((await plainGet(`http://127.0.0.1:${port}/ca.pem`, 'HEAD')).body).toBe('');
    const post = await plainGet(`http://127.0.0.1:${port}/ca.pem`, 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');

    const other = await plainGet(`http://127.0.0.1:${port}/admin/?x=1`);
    expect(other.status).toBe(301);
    expect(other.headers.location).toBe(`https://127.0.0.1:${new URL(running.url).port}/admin/?x=1`);
    const caAgain = await plainGet(`http://127.0.0.1:${port}/cab`);
    expect(caAgain.status).toBe(301);
  });

  it('reports the backup schedule and the newest backup on a real data directory', async () => {
    const dir = tempDataDir();
    const running = await startServer(dir, { GATEHOUSE_BACKUP_PASSPHRASE: 'a passphrase for the test' });
    const get = (path: string, method = 'GET') => fetch(`${running.url}${path}`, { method, headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } });
    const before = Date.now();
    const first = (await (await get('/api/admin/backups/status')).json()) as Record<string, unknown>;
    expect(first).toMatchObject({ scheduled: true, blockedReason: null, intervalSeconds: 86400, keep: 7, passphraseSet: true, encryption: 'passphrase', lastBackupAt: null, lastRun: null });
    const next = new Date(first.nextRunAt as string).getTime();
    expect(next).toBeGreaterThan(before + 86400_000 - 60_000);
    expect(next).toBeLessThanOrEqual(Date.now() + 86400_000);
    const taken = (await (await get('/api/admin/backups', 'POST')).json()) as { createdAt: string; encrypted: boolean };
    expect(taken.encrypted).toBe(true);
    expect(((await (await get('/api/admin/backups/status')).json()) as Record<string, unknown>).lastBackupAt).toBe(taken.createdAt);
  });
});
