/**
 * Fastify's route hooks in the bundle (scripts/bundle/dependency-patches.mjs `sharedRouteHooks`, issue 45,
 * decision 0474): an instance's hooks of one lifecycle type are bound to it once, in one array
 * that its routes share, instead of bound again for every route. Fastify is built with and
 * without the bundle's plugin and run in a child: hooks at the root, in an encapsulated plugin
 * and on a route run in the same order, with the same `this`, for the same answers; with the
 * plugin two routes of one instance share their hook arrays, and a route's own hooks follow its
 * instance's.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { patchedBundles } from '../helpers/patched-bundle.js';
// @ts-expect-error: a plain .mjs script without types
import { sharedRouteHooks } from '../../scripts/bundle/dependency-patches.mjs';

const ENTRY = `
const fastify = require('fastify');
const { kRouteContext } = require('fastify/lib/symbols.js');
const app = fastify();
const calls = [];
const contexts = {};
const seen = (name) => function (request, reply, done) { calls.push(name + (this === app ? ' root' : ' child') + ' ' + request.url); done(); };
app.decorate('where', 'root');
app.addHook('onRequest', seen('onRequest 1'));
app.addHook('onRequest', seen('onRequest 2'));
app.addHook('preHandler', seen('preHandler'));
app.addHook('onSend', function (request, reply, payload, done) { calls.push('onSend ' + this.where + ' ' + request.url); done(null, payload); });
app.get('/a', (request) => { if (request.method === 'GET') contexts.a = request[kRouteContext]; return { route: 'a' }; });
app.get('/b', { onRequest: seen('onRequest of /b') }, (request) => { contexts.b = request[kRouteContext]; return { route: 'b' }; });
app.get('/c', (request) => { contexts.c = request[kRouteContext]; return { route: 'c' }; });
app.register(async (child) => {
  child.decorate('where', 'child');
  child.addHook('onRequest', async function (request) { calls.push('child onRequest ' + this.where + ' ' + request.url); if (request.url === '/child/no') throw Object.assign(new Error('no'), { statusCode: 403 }); });
  child.get('/child/yes', (request) => { contexts.yes = request[kRouteContext]; return { route: 'yes' }; });
  child.get('/child/no', () => ({ route: 'never' }));
});
(async () => {
  const answers = [];
  for (const url of ['/a', '/b', '/c', '/child/yes', '/child/no', '/missing']) {
    const res = await app.inject({ method: 'GET', url });
    answers.push([url, res.statusCode, res.body]);
  }
  const head = await app.inject({ method: 'HEAD', url: '/a' });
  answers.push(['HEAD /a', head.statusCode, head.body]);
  console.log(JSON.stringify({
    answers, calls,
    shared: { onRequest: contexts.a.onRequest === contexts.c.onRequest, onSend: contexts.a.onSend === contexts.c.onSend, preHandler: contexts.a.preHandler === contexts.c.preHandler, ownHooks: contexts.a.onRequest === contexts.b.onRequest, child: contexts.a.onRequest === contexts.yes.onRequest },
    boundOnce: contexts.a.onRequest[0] === contexts.b.onRequest[0],
    lengths: [contexts.a.onRequest.length, contexts.b.onRequest.length, contexts.yes.onRequest.length],
  }));
})();
`;

const bundles = patchedBundles('route-hooks', ENTRY);
afterAll(() => bundles.remove());

describe("Fastify's route hooks in the bundle", () => {
  it('binds an instance’s hooks once, shared by its routes, running as before', async () => {
    const { bundle } = bundles;
    await Promise.all([bundle([sharedRouteHooks], 'shared.cjs'), bundle([], 'plain.cjs')]);
    const run = (file: string) => bundles.run(file);
    const shared = run('shared.cjs');
    const plain = run('plain.cjs');
    expect(shared.answers).toEqual([
      ['/a', 200, '{"route":"a"}'], ['/b', 200, '{"route":"b"}'], ['/c', 200, '{"route":"c"}'], ['/child/yes', 200, '{"route":"yes"}'],
      ['/child/no', 403, expect.stringContaining('"message":"no"')], ['/missing', 404, expect.stringContaining('Route GET:/missing not found')], ['HEAD /a', 200, ''],
    ]);
    expect(plain.answers).toEqual(shared.answers);
    expect(shared.calls).toEqual(plain.calls);
    expect(shared.calls.slice(0, 9)).toEqual([
      'onRequest 1 root /a', 'onRequest 2 root /a', 'preHandler root /a', 'onSend root /a',
      'onRequest 1 root /b', 'onRequest 2 root /b', 'onRequest of /b root /b', 'preHandler root /b', 'onSend root /b',
    ]);
    expect(shared.calls).toContain('child onRequest child /child/yes');
    expect(shared.calls).toContain('onRequest 1 child /child/yes');
    expect(shared.lengths).toEqual([2, 3, 3]);
    expect(plain.lengths).toEqual([2, 3, 3]);
    // With the plugin, routes of one instance share the bound hooks; a route with hooks of its
    // own, or of another instance, has its own array.
    expect(shared.shared).toEqual({ onRequest: true, onSend: true, preHandler: true, ownHooks: false, child: false });
    expect([shared.boundOnce, plain.boundOnce]).toEqual([true, false]);
    expect(plain.shared).toEqual({ onRequest: false, onSend: false, preHandler: false, ownHooks: false, child: false });
  });
});
