/**
 * avvio's plugin tree in the bundle (scripts/bundle/dependency-patches.mjs `rootOnlyPluginTree`, issue 45,
 * decision 0473): avvio records only the root's load, not a node per plugin and per `after()`
 * (each Fastify route is one), which it kept for the life of the process for
 * `fastify.printPlugins()` alone. avvio is built with and without the bundle's plugin and run in
 * a child: plugins, nested plugins, `after` and `ready` run in the same order with the same
 * errors; with the plugin the tree is its root only and `printPlugins` prints that root.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Plugin } from 'esbuild';
import { patchedBundles } from '../helpers/patched-bundle.js';
// @ts-expect-error: a plain .mjs script without types
import { rootOnlyPluginTree } from '../../scripts/bundle/dependency-patches.mjs';

const ENTRY = `
const avvio = require('avvio');
const server = {};
const boot = avvio(server);
const order = [];
server.use(function outer (s, opts, done) {
  order.push('outer ' + opts.n);
  s.use(function inner (s2, o2, d2) { order.push('inner'); d2(); });
  s.after((err, d) => { order.push('after inner ' + (err ? err.message : 'ok')); d(err); });
  done();
}, { n: 1 });
server.use(function failing (s, opts, done) { order.push('failing'); done(new Error('boom')); });
server.after((err, done) => { order.push('after failing ' + (err ? err.message : 'ok')); done(); });
server.use(function last (s, opts, done) { order.push('last'); done(); });
server.ready((err) => {
  order.push('ready ' + (err ? err.message : 'ok'));
  const count = (node) => 1 + node.nodes.reduce((sum, child) => sum + count(child), 0);
  console.log(JSON.stringify({ order, nodes: count(boot.pluginTree.root), printed: boot.prettyPrint().replace(/\\d+ ms/g, 'N ms') }));
});
`;

const bundles = patchedBundles('plugin-tree', ENTRY);
afterAll(() => bundles.remove());

describe("avvio's plugin tree in the bundle", () => {
  it('keeps only the root, with plugins loading as before', async () => {
    const { bundle } = bundles;
    await bundle([rootOnlyPluginTree], 'root-only.cjs');
    await bundle([], 'plain.cjs');
    const run = (file: string) => bundles.run(file);
    const order = ['outer 1', 'inner', 'after inner ok', 'failing', 'after failing boom', 'last', 'ready ok'];
    expect(run('root-only.cjs')).toEqual({ order, nodes: 1, printed: 'root N ms\n' });
    // Without the plugin, avvio's own: a node per plugin and per after().
    const plain = run('plain.cjs');
    expect(plain.order).toEqual(order);
    expect(plain.nodes).toBe(7);
    expect(plain.printed).toContain('outer N ms');
  });
});
