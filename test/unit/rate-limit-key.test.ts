/**
 * @fastify/rate-limit's default key in the bundle (scripts/bundle/dependency-patches.mjs
 * `rateLimitKeyWithoutIpv6Expression`, issue 45, decision 0476): an address without a colon is
 * taken as not IPv6 without running Node's IPv6 expression. Fastify with @fastify/rate-limit is
 * built with and without the patch and run in a child: the same keys for IPv4, IPv6 (its /64),
 * IPv4-mapped IPv6 and upper-case addresses, and the same refusals.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { patchedBundles } from '../helpers/patched-bundle.js';
// @ts-expect-error: a plain .mjs script without types
import { rateLimitKeyWithoutIpv6Expression } from '../../scripts/bundle/dependency-patches.mjs';

const ENTRY = `
const fastify = require('fastify');
const rateLimit = require('@fastify/rate-limit');
(async () => {
  const app = fastify();
  const keys = [];
  await app.register(rateLimit, { max: 1, timeWindow: 60000, onExceeded: (req, key) => keys.push(key) });
  app.get('/', async () => 'ok');
  const statuses = [];
  for (const remoteAddress of ['10.0.0.1', '10.0.0.1', '2001:db8:0:1:a::5', '2001:db8:0:1:b::6', '::ffff:10.0.0.2', '::ffff:10.0.0.2', 'FE80::1', 'fe80::2']) {
    statuses.push((await app.inject({ url: '/', remoteAddress })).statusCode);
  }
  await app.close();
  console.log(JSON.stringify({ keys, statuses }));
})();
`;

const bundles = patchedBundles('rate-limit-key', ENTRY);
afterAll(() => bundles.remove());

describe("@fastify/rate-limit's key in the bundle", () => {
  it('gives the same keys and refusals with the patch as without', async () => {
    await bundles.bundle([rateLimitKeyWithoutIpv6Expression], 'patched.cjs');
    await bundles.bundle([], 'plain.cjs');
    const expected = { keys: ['10.0.0.1', '2001:db8:0:1::', '10.0.0.2', 'fe80::'], statuses: [200, 429, 200, 429, 200, 429, 200, 429] };
    expect(bundles.run('patched.cjs')).toEqual(expected);
    expect(bundles.run('plain.cjs')).toEqual(expected);
  });
});
