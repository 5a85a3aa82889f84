/**
 * Webhook targets webhooks may never reach (server/webhooks/target-address.ts), at the moment of
 * delivery: an address saved before the rule, and a host name whose resolution lands on one.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedLookup, isForbiddenAddress, ownEndpoints, type TargetPolicy } from '../../server/webhooks/target-address.js';
import { postWebhook } from '../../server/webhooks/send.js';
import { loadConfig } from '../../server/config.js';
import { start } from '../../server/main.js';
import { tempDir, removeTempDirs } from '../helpers/server-process.js';

const STRICT: TargetPolicy = { allowLoopback: false, isOwnEndpoint: () => false };
const LOOPBACK_OK: TargetPolicy = { allowLoopback: true, isOwnEndpoint: () => false };

function resolve(hostname: string, all: boolean, policy: TargetPolicy = LOOPBACK_OK, port = 80) {
  return new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[] }>((done) =>
    guardedLookup(policy, port)(hostname, { all }, (error, address) => done({ error, address })),
  );
}

describe('webhook target addresses at delivery time', () => {
  it('refuses a link-local literal without connecting', async () => {
    expect(await postWebhook('http://169.254.169.254/latest/meta-data/', '{}', {}, 2000, STRICT)).toEqual({
      ok: false,
      statusCode: null,
      error: 'request failed: 169.254.169.254 is an address webhooks may not reach',
    });
  });

  it('knows the metadata and NAT64 spellings of forbidden addresses, and leaves private ones alone', () => {
    const verdicts = Object.fromEntries(
      [
        'fd00:ec2::254', '[64:ff9b::a9fe:a9fe]', '64:ff9b::ff:1', '64:ff9b::e000:1', '64:ff9b::ffff:ffff', '::ffff:169.254.169.254',
        'fd00:ec2::253', '64:ff9b::a00:1', '64:ff9b::c0a8:1', 'fd12::1', '10.0.0.5', '::1',
      ].map((a) => [a, isForbiddenAddress(a)]),
    );
    expect(verdicts).toEqual({
      'fd00:ec2::254': true, '[64:ff9b::a9fe:a9fe]': true, '64:ff9b::ff:1': true, '64:ff9b::e000:1': true, '64:ff9b::ffff:ffff': true, '::ffff:169.254.169.254': true,
      'fd00:ec2::253': false, '64:ff9b::a00:1': false, '64:ff9b::c0a8:1': false, 'fd12::1': false, '10.0.0.5': false, '::1': false,
    });
  });

  it('the lookup refuses what resolves to a forbidden address and passes the rest on', async () => {
    const refused = await resolve('0.0.0.0', false, STRICT);
    expect(refused.error?.code).toBe('EFORBIDDENADDRESS');
    expect(refused.error?.message).toBe('0.0.0.0 resolves to 0.0.0.0, which webhooks may not reach');
    const loopback = await resolve('127.0.0.1', false);
    expect(loopback).toEqual({ error: null, address: '127.0.0.1' });
    const all = await resolve('127.0.0.1', true);
    expect(all).toEqual({ error: null, address: [{ address: '127.0.0.1', family: 4 }] });
  });
});

describe('loopback and the server itself as webhook targets (issue 22)', () => {
  let receiver: Server;
  let port: number;
  afterAll(async () => {
    await new Promise((done) => receiver?.close(done));
    removeTempDirs();
  });

  it('refuses loopback at connect time unless allowed, whatever name leads there', async () => {
    receiver = createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    port = (receiver.address() as AddressInfo).port;
    for (const url of [`http://127.0.0.1:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`, `http://localhost:${port}/`]) {
      const refused = await postWebhook(url, '{}', {}, 2000, STRICT);
      expect(refused, url).toMatchObject({ ok: false, statusCode: null });
      expect(refused.error, url).toMatch(/^request failed: (127\.0\.0\.1|::ffff:127\.0\.0\.1|localhost resolves to (127\.0\.0\.1|::1)), which webhooks may not reach$|^request failed: (127\.0\.0\.1|\[::ffff:7f00:1\]) is an address webhooks may not reach$/);
    }
    expect(await postWebhook(`http://127.0.0.1:${port}/`, '{}', {}, 2000, LOOPBACK_OK)).toEqual({ ok: true, statusCode: 204, error: null });
    expect((await resolve('localhost', false, STRICT)).error?.code).toBe('EFORBIDDENADDRESS');
  });

  it("never posts to the server's own listening socket, even with loopback allowed", async () => {
    const own = ownEndpoints(() => [{ address: '0.0.0.0', family: 'IPv4', port }]);
    const policy: TargetPolicy = { allowLoopback: true, isOwnEndpoint: own };
    expect([own('127.0.0.1', port), own('::ffff:127.0.0.1', port), own('127.0.0.1', port + 1)]).toEqual([true, true, false]);
    expect(await postWebhook(`http://127.0.0.1:${port}/`, '{}', {}, 2000, policy)).toEqual({
      ok: false, statusCode: null, error: `request failed: 127.0.0.1:${port} is this server itself`,
    });
    const viaName = await postWebhook(`http://localhost:${port}/`, '{}', {}, 2000, policy);
    expect(viaName.error).toMatch(new RegExp(`^request failed: localhost resolves to (127\\.0\\.0\\.1|::1):${port}, this server itself$`));
  });

  it('a listening server refuses its own address as a webhook URL, while another port on this machine is fine when allowed', async () => {
    const running = await start(loadConfig({ LOG_LEVEL: 'silent', GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: '1' }, { dataDir: tempDir(), port: '0', host: '127.0.0.1', adminToken: 'own-address-admin-token-0123' }));
    try {
      const create = (id: string, webhookUrl: string) =>
        fetch(`${running.url}/api/admin/applications`, {
          method: 'POST',
          headers: { authorization: 'Bearer own-address-admin-token-0123', 'content-type': 'application/json' },
          body: JSON.stringify({ id, name: id, audience: `https://${id}.example.com`, redirectUris: ['https://x.example.com/cb'], webhookUrl }),
        });
      const self = await create('self', `${running.url}/api/auth/oauth2/token`);
      expect(self.status).toBe(400);
      expect(((await self.json()) as { errors: unknown }).errors).toEqual([{ path: 'body.webhookUrl', message: 'must not point at this server itself' }]);
      expect((await create('other', `http://127.0.0.1:${port}/hook`)).status).toBe(201);
    } finally {
      await running.stop();
    }
  });
});
