/**
 * GATEHOUSE_TRUST_PROXY (docs/postgresql.md): behind a reverse proxy every connection comes
 * from the proxy, so per-IP limits would count all clients as one. Naming the proxy makes the
 * client address the one X-Forwarded-For gives — only for connections from the proxy; anyone
 * else's X-Forwarded-For is ignored, so a client cannot pick the address it is counted under.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../server/config.js';
import { makeApp, type TestApp } from '../helpers/app.js';

const env = { GATEHOUSE_SIGN_UP_RATE_LIMIT: '2' };

/** A malformed sign-up (400) from `remoteAddress`, claiming to forward for `forwardedFor`. */
function signUp(t: TestApp, remoteAddress: string, forwardedFor?: string) {
  return t.app.inject({
    method: 'POST',
    url: '/api/auth/sign-up/email',
    remoteAddress,
    headers: { 'content-type': 'application/json', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
    payload: {},
  });
}

describe('GATEHOUSE_TRUST_PROXY', () => {
  it('unset: every client behind a proxy shares the proxy address and its budget', async () => {
    const t = await makeApp({ config: { env } });
    expect((await signUp(t, '10.0.0.5', '198.51.100.1')).statusCode).toBe(400);
    expect((await signUp(t, '10.0.0.5', '198.51.100.2')).statusCode).toBe(400);
    const third = await signUp(t, '10.0.0.5', '198.51.100.3');
    expect([third.statusCode, third.json().code]).toEqual([429, 'rate_limited']);
  });

  it('naming the proxy counts each forwarded client on its own; others cannot choose their address', async () => {
    const t = await makeApp({ config: { env, trustProxy: loadConfig({ GATEHOUSE_TRUST_PROXY: '10.0.0.0/24, 127.0.0.1' }).trustProxy } });
    for (const client of ['198.51.100.1', '198.51.100.2']) {
      expect((await signUp(t, '10.0.0.5', client)).statusCode).toBe(400);
      expect((await signUp(t, '10.0.0.5', client)).statusCode).toBe(400);
      expect((await signUp(t, '10.0.0.5', client)).statusCode).toBe(429);
    }
    // A client connecting directly (not through a named proxy) is counted under its own address,
    // whatever X-Forwarded-For it sends.
    expect((await signUp(t, '203.0.113.9', '198.51.100.7')).statusCode).toBe(400);
    expect((await signUp(t, '203.0.113.9', '198.51.100.8')).statusCode).toBe(400);
    expect((await signUp(t, '203.0.113.9', '198.51.100.9')).statusCode).toBe(429);
  });

  it('accepts addresses, CIDR ranges and the named ranges; anything else is one sentence', () => {
    expect(loadConfig({}).trustProxy).toEqual([]);
    expect(loadConfig({ GATEHOUSE_TRUST_PROXY: 'loopback,10.1.0.0/16, fd00::/8 ,192.0.2.7' }).trustProxy).toEqual(['loopback', '10.1.0.0/16', 'fd00::/8', '192.0.2.7']);
    for (const bad of ['true', '*', '10.0.0.0/33', 'proxy.internal', '10.0.0.1/8/1']) {
      expect(() => loadConfig({ GATEHOUSE_TRUST_PROXY: bad })).toThrow(ConfigError);
    }
    expect(() => loadConfig({ GATEHOUSE_TRUST_PROXY: 'true' })).toThrow(
      'GATEHOUSE_TRUST_PROXY must list the proxies\' addresses or CIDR ranges (or loopback, linklocal, uniquelocal), comma-separated; "true" is none of these.',
    );
  });
});
