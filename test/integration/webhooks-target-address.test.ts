/**
 * Webhook targets webhooks may never reach (server/webhooks/target-address.ts), at the moment of
 * delivery: an address saved before the rule, and a host name whose resolution lands on one.
 */
import { describe, expect, it } from 'vitest';
import type { LookupAddress } from 'node:dns';
import { guardedLookup } from '../../server/webhooks/target-address.js';
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
