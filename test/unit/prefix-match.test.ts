/**
 * find-my-way's prefix matchers in the bundle (scripts/bundle/dependency-patches.mjs `sharedPrefixMatch`,
 * issue 45, decision 0368): every static node of two characters or more is matched by one
 * function (`startsWith` at the index, a closure over the prefix) instead of a `new Function`
 * compiled per node. find-my-way is built with and without the bundle's plugin and run in a
 * child: the same routes found, with the same parameters, for matching paths and near misses;
 * with the plugin no matcher is a compiled script of its own. And its route lists (a node's routes,
 * handlers and children) are sized exactly (decision 0472): a router of 2,000 routes keeps less.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Plugin } from 'esbuild';
import { patchedBundles } from '../helpers/patched-bundle.js';
// @ts-expect-error: a plain .mjs script without types
import { PREFIX_MATCH_FROM, PREFIX_MATCH_TO, sharedPrefixMatch } from '../../scripts/bundle/dependency-patches.mjs';

const ROUTES = [
  '/', '/a', '/api/auth/oauth2/token', '/api/auth/oauth2/userinfo', '/api/auth/oauth2/revoke', '/api/admin/applications',
  '/api/admin/applications/:id', '/api/admin/applications/:id/members/:member', '/api/admin/application-templates',
  '/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/invite/:token/accept', '/admin/*',
  '/a-very-long-static-prefix-of-forty-characters/x',
];
const PATHS = [
  '/', '/a', '/b', '/api/auth/oauth2/token', '/api/auth/oauth2/tokens', '/api/auth/oauth2/toke', '/api/auth/oauth2/userinfo',
  '/api/auth/oauth2/revoke', '/api/auth/oauth2/revokd', '/api/admin/applications', '/api/admin/applications/notes',
  '/api/admin/applications/notes/members/m1', '/api/admin/application-templates', '/api/admin/application-template',
  '/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-serve',
  '/invite/t1/accept', '/invite/t1/acceptx', '/admin/assets/x.js', '/admi', '/a-very-long-static-prefix-of-forty-characters/x',
  '/a-very-long-static-prefix-of-forty-characterz/x', '/api/auth/oauth2/token?x=1',
];

const ENTRY = `
const router = require('find-my-way')();
const routes = ${JSON.stringify(ROUTES)};
for (const path of routes) router.on('GET', path, () => path);
const found = ${JSON.stringify(PATHS)}.map((path) => { const f = router.find('GET', path); return f ? [path, f.handler(), f.params] : [path, null]; });
const matchers = new Set();
const emptyLists = new Set();
(function walk(node) {
  if (node.matchPrefix) matchers.add(node.matchPrefix.toString());
  for (const list of [node.staticChildrenNodes, node.staticChildrenCharCodes, node.parametricChildren]) if (list.length === 0) emptyLists.add(list);
  for (const child of node.staticChildrenNodes ?? []) walk(child);
  for (const child of node.parametricChildren ?? []) walk(child);
  if (node.wildcardChild) walk(node.wildcardChild);
})(router.trees.GET);
// What a router of 2,000 routes keeps (its lists: routes, handlers, children), after full collections.
globalThis.gc(); globalThis.gc();
const before = process.memoryUsage().heapUsed;
const big = require('find-my-way')();
for (let i = 0; i < 1000; i++) { big.on('GET', '/r' + i + '/x', () => i); big.on('POST', '/p/' + i + '/:id', () => i); }
globalThis.gc(); globalThis.gc();
const kept = process.memoryUsage().heapUsed - before;
const bigFound = [big.find('GET', '/r7/x').handler(), big.find('POST', '/p/999/abc').params, big.find('GET', '/r7/y')];
console.log(JSON.stringify({ found, bigFound, kept, emptyLists: emptyLists.size, matchers: matchers.size, compiled: [...matchers].filter((m) => m.includes('charCodeAt')).length }));
`;

const bundles = patchedBundles('prefix-match', ENTRY);
afterAll(() => bundles.remove());

describe("find-my-way's prefix matchers in the bundle", () => {
  it('match every static node with one function and size route lists exactly, finding the same routes', async () => {
    const { bundle } = bundles;
    await bundle([sharedPrefixMatch], 'shared.cjs');
    await bundle([], 'plain.cjs');
    // The shared matcher alone, lists grown as find-my-way grows them: what the exact lists save.
    const prefixOnly: Plugin = {
      name: 'prefix-only',
      setup: (b) => b.onLoad({ filter: /[\\/]find-my-way[\\/]lib[\\/]node\.js$/ }, (args) => ({ contents: readFileSync(args.path, 'utf8').replace(PREFIX_MATCH_FROM, PREFIX_MATCH_TO), loader: 'js' })),
    };
    await bundle([prefixOnly], 'prefix-only.cjs');
    const run = (file: string) => bundles.run(file, ['--expose-gc']);
    const shared = run('shared.cjs');
    const plain = run('plain.cjs');
    expect(shared.found).toEqual(plain.found);
    expect(shared.found.filter(([, route]: [string, string | null]) => route !== null).map(([path]: [string]) => path)).toEqual([
      '/', '/a', '/api/auth/oauth2/token', '/api/auth/oauth2/userinfo', '/api/auth/oauth2/revoke', '/api/admin/applications',
      '/api/admin/applications/notes', '/api/admin/applications/notes/members/m1', '/api/admin/application-templates',
      '/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/invite/t1/accept', '/admin/assets/x.js',
      '/a-very-long-static-prefix-of-forty-characters/x', '/api/auth/oauth2/token?x=1',
    ]);
    expect(shared.found.find(([path]: [string]) => path === '/api/admin/applications/notes/members/m1')).toEqual([
      '/api/admin/applications/notes/members/m1', '/api/admin/applications/:id/members/:member', { id: 'notes', member: 'm1' },
    ]);
    // With the plugin: the single-character matcher and the shared one, none compiled per node.
    expect({ matchers: shared.matchers, compiled: shared.compiled }).toEqual({ matchers: 2, compiled: 0 });
    // find-my-way's own: a compiled chain of comparisons per node.
    expect(plain.compiled).toBeGreaterThan(10);
    // The route lists sized exactly (exactRouteArrays): the same routes found in a router of
    // 2,000, which keeps less (152 bytes of room for 17 per list grown from empty, 24 for one).
    expect(shared.bigFound).toEqual([7, { id: 'abc' }, null]);
    expect(plain.bigFound).toEqual(shared.bigFound);
    const prefix = run('prefix-only.cjs');
    expect(prefix.bigFound).toEqual(shared.bigFound);
    expect(prefix.kept - shared.kept).toBeGreaterThan(400_000);
    // Nodes without children share one empty list; find-my-way gives each node three.
    expect([shared.emptyLists, plain.emptyLists > 20]).toEqual([1, true]);
  });
});
