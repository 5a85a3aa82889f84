/**
 * Webhook targets webhooks may never reach (server/webhooks/target-address.ts), at the moment of
 * delivery: an address saved before the rule, and a host name whose resolution lands on one.
 */
import { describe, expect, it } from 'vitest';
import type { LookupAddress } from 'node:dns';
import { guardedLookup, isForbiddenAddress } from '../../server/webhooks/target-address.js';
import { postWebhook } from '../../server/webhooks/send.js';

function resolve(hostname: string, all: boolean) {
  return new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[] }>((done) =>
    guardedLookup(hostname, { all }, (error, address) => done({ error, address })),
  );
}

describe('webhook target addresses at delivery time', () => {
  it('refuses a link-local literal without connecting', async () => {
    expect(await postWebhook('http://169.254.169.254/latest/meta-data/', '{}', {}, 2000)).toEqual({
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
    const refused = await resolve('0.0.0.0', false);
    expect(refused.error?.code).toBe('EFORBIDDENADDRESS');
    expect(refused.error?.message).toBe('0.0.0.0 resolves to 0.0.0.0, which webhooks may not reach');
    const loopback = await resolve('127.0.0.1', false);
    expect(loopback).toEqual({ error: null, address: '127.0.0.1' });
    const all = await resolve('127.0.0.1', true);
    expect(all).toEqual({ error: null, address: [{ address: '127.0.0.1', family: 4 }] });
  });
});
