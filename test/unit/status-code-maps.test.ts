/**
 * The bundle's compact status-code maps (scripts/bundle/dependency-patches.mjs `compactStatusMaps`, issue 45,
 * decision 0362): Fastify's per-route map of response serializers, keyed by status code, starts
 * with dictionary elements instead of a holey store sized past its largest code. Fastify's
 * validation module is built with the bundle's plugin and run in a child with V8's natives
 * syntax: the same serializers come back for each code, in the same order, from a dictionary.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { patchedBundles } from '../helpers/patched-bundle.js';
// @ts-expect-error: a plain .mjs script without types
import { compactStatusMaps } from '../../scripts/bundle/dependency-patches.mjs';

const ENTRY = `
const { compileSchemasForSerialization } = require('fastify/lib/validation.js');
const { kSchemaResponse } = require('fastify/lib/symbols.js');
const context = { schema: { response: { 200: { type: 'object' }, 400: { type: 'object' }, '4xx': { type: 'object' }, 415: { type: 'string' } } }, config: { method: 'GET', url: '/x' } };
compileSchemasForSerialization(context, ({ httpStatus }) => 'serializer for ' + httpStatus);
const map = context[kSchemaResponse];
console.log(JSON.stringify({ keys: Object.keys(map), at200: map[200], at415: map['415'], at4xx: map['4xx'], at404: map[404] ?? null, dictionary: new Function('o', 'return %HasDictionaryElements(o)')(map) }));
`;

const bundles = patchedBundles('status-maps', ENTRY);
afterAll(() => bundles.remove());

describe('compact status-code maps in the bundle', () => {
  it("gives Fastify's response-serializer map dictionary elements, with the same entries", async () => {
    const { bundle } = bundles;
    await bundle([compactStatusMaps], 'compact.cjs');
    await bundle([], 'plain.cjs');
    const run = (file: string) => bundles.run(file, ['--allow-natives-syntax']);
    const entries = { keys: ['200', '400', '415', '4xx'], at200: 'serializer for 200', at415: 'serializer for 415', at4xx: 'serializer for 4xx', at404: null };
    expect(run('compact.cjs')).toEqual({ ...entries, dictionary: true });
    // Without the plugin, Fastify's own: fast holey elements (the 4.9 KB store per route).
    expect(run('plain.cjs')).toEqual({ ...entries, dictionary: false });
  });
});
