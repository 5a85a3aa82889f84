/**
 * The bundle imports node:tls through a CommonJS stand-in (scripts/bundle/builtins.mjs `cjsBuiltins`,
 * issue 45, decision 0349): an ES module import of node:tls makes Node read every export,
 * `rootCertificates` too, which builds the 144 PEM strings of its CA store for good. Built here
 * with the bundle's banner and plugin, run in a child that counts them in its heap.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { build, type Plugin } from 'esbuild';
// @ts-expect-error: a plain .mjs script without types
import { cjsBuiltins } from '../../scripts/bundle/builtins.mjs';
// @ts-expect-error: a plain .mjs script without types
import { BANNER } from '../../scripts/bundle/lazy-packages.mjs';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bundle-builtins-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ENTRY = `
import { createSecureContext, rootCertificates } from 'node:tls';
import * as tls from 'tls';
import { writeHeapSnapshot } from 'node:v8';
import { readFileSync } from 'node:fs';
const certificates = () => (readFileSync(writeHeapSnapshot(process.argv[2]), 'utf8').match(/-----BEGIN CERTIFICATE-----/g) ?? []).length;
const before = certificates() < 10; // this script's own source names the marker once
const context = typeof createSecureContext({}).context;
const same = tls.createSecureContext === createSecureContext;
const roots = rootCertificates.length > 100;
console.log(JSON.stringify({ before, context, same, roots, after: certificates() > 100 }));
`;

async function run(plugins: Plugin[]): Promise<Record<string, unknown>> {
  writeFileSync(join(dir, 'entry.ts'), ENTRY);
  await build({
    entryPoints: [join(dir, 'entry.ts')], outfile: join(dir, 'entry.mjs'), absWorkingDir: process.cwd(),
    bundle: true, format: 'esm', platform: 'node', target: 'node20', banner: { js: BANNER }, plugins, logLevel: 'silent',
  });
  return JSON.parse(execFileSync(process.execPath, [join(dir, 'entry.mjs'), join(dir, 'heap.heapsnapshot')], { encoding: 'utf8' }));
}

describe('node:tls in the bundle', () => {
  it('works through the stand-in, and the CA store is built only when read', async () => {
    expect(await run([cjsBuiltins])).toEqual({ before: true, context: 'object', same: true, roots: true, after: true });
  });
});
