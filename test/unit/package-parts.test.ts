/**
 * What the bundle keeps of two packages (scripts/bundle/package-parts.mjs, issue 45, decision 0475):
 * our imports of TypeBox get a `Type` with only the builders the server's sources name, so the
 * rest of TypeBox (its TypeScript-syntax parser, the type actions) is not bundled, and the
 * schemas built through it are TypeBox's own; a source that uses `Type` other than as `Type.X`
 * fails the build. fast-uri, installed twice at 4.2.3 (for @fastify/ajv-compiler and
 * fast-json-stringify), is bundled once, and both still resolve references through it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { build, type Plugin } from 'esbuild';
import { Type as RealType } from 'typebox';
// @ts-expect-error: a plain .mjs script without types
import { oneCopyPerVersion, typeboxUsedMembers, usedTypeMembers } from '../../scripts/bundle/package-parts.mjs';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-package-parts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function bundle(name: string, entry: string, plugins: Plugin[]) {
  const { metafile } = await build({
    stdin: { contents: entry, resolveDir: process.cwd(), loader: 'js' }, outfile: join(dir, `${name}.mjs`), absWorkingDir: process.cwd(),
    bundle: true, format: 'esm', platform: 'node', target: 'node20', banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    plugins, metafile: true, logLevel: 'silent',
  });
  return Object.entries(Object.values(metafile.outputs)[0]?.inputs ?? {}).map(([path, { bytesInOutput }]) => ({ path, bytes: bytesInOutput }));
}
type Inputs = Awaited<ReturnType<typeof bundle>>;
const bytesOf = (inputs: Inputs, part: string) => inputs.filter((input) => input.path.includes(part)).reduce((sum, input) => sum + input.bytes, 0);
const run = (name: string) => JSON.parse(execFileSync(process.execPath, [join(dir, `${name}.mjs`)], { encoding: 'utf8' }));

describe('package parts in the bundle', () => {
  it("bundles only the TypeBox builders the server names, which build TypeBox's own schemas", async () => {
    const members: string[] = await usedTypeMembers();
    expect(members).toEqual(expect.arrayContaining(['Object', 'String', 'Union', 'Optional', 'Literal', 'Array']));
    expect(members.every((name) => name in RealType)).toBe(true);
    const entry = `import { Type } from 'typebox';
const schema = Type.Object({ name: Type.String({ minLength: 1 }), kind: Type.Optional(Type.Union([Type.Literal('a'), Type.Null()])), tags: Type.Array(Type.Integer()) });
console.log(JSON.stringify({ keys: Object.keys(Type).sort(), schema }));`;
    // Without: all of TypeBox (~77 KB of minified code in the server's bundle); with: ~49 KB.
    const script = 'typebox/build/type/script/';
    const plain = await bundle('typebox-plain', entry, []);
    const parts = await bundle('typebox', entry, [typeboxUsedMembers]);
    expect(bytesOf(parts, 'typebox/')).toBeLessThan(0.75 * bytesOf(plain, 'typebox/'));
    expect(bytesOf(parts, script)).toBeLessThan(0.2 * bytesOf(plain, script));
    const { keys, schema } = run('typebox');
    expect(keys).toEqual(members);
    const real = RealType.Object({ name: RealType.String({ minLength: 1 }), kind: RealType.Optional(RealType.Union([RealType.Literal('a'), RealType.Null()])), tags: RealType.Array(RealType.Integer()) });
    expect(schema).toEqual(JSON.parse(JSON.stringify(real)));
  });

  it('fails on a use of Type other than Type.X', async () => {
    const file = join(dir, 'misuse.ts');
    writeFileSync(file, "import { Type } from 'typebox';\nexport const made = Type.String();\nconst { Object: build } = Type;\n");
    await expect(usedTypeMembers([file])).rejects.toThrow(/misuse\.ts: uses TypeBox's Type other than as Type\.X/);
    writeFileSync(file, "import { Type } from 'typebox';\n// Type alone in a comment\nexport const made = Type.String({ description: 'Content-Type' });\n");
    expect(await usedTypeMembers([file])).toEqual(['String']);
  });

  it('bundles fast-uri 4.2.3 once for both its dependants, which still resolve through it', async () => {
    const entry = `const AjvCompiler = require('@fastify/ajv-compiler');
const fastJson = require('fast-json-stringify');
const compile = AjvCompiler()({ 'urn:x:item': { $id: 'urn:x:item', type: 'object', properties: { n: { type: 'integer' } } } }, { customOptions: {} });
const validate = compile({ schema: { type: 'object', properties: { item: { $ref: 'urn:x:item' } } } });
const stringify = fastJson({ $id: 'http://x.test/a', type: 'object', properties: { b: { anyOf: [{ $ref: 'http://x.test/b#/definitions/n' }, { type: 'string' }] } } }, { schema: { 'http://x.test/b': { $id: 'http://x.test/b', definitions: { n: { type: 'integer' } } } } });
console.log(JSON.stringify({ ok: validate({ item: { n: 1 } }), refused: validate({ item: { n: 'x' } }), text: stringify({ b: 2 }) }));`;
    const copies = (inputs: Inputs) => [...new Set(inputs.filter((input) => input.path.includes('fast-uri/')).map((input) => input.path.replace(/fast-uri\/.*/, 'fast-uri')))].sort();
    expect(copies(await bundle('fast-uri-plain', entry, []))).toEqual([
      'node_modules/@fastify/ajv-compiler/node_modules/fast-uri', 'node_modules/fast-json-stringify/node_modules/fast-uri', 'node_modules/fast-uri',
    ]);
    expect(copies(await bundle('fast-uri', entry, [oneCopyPerVersion]))).toEqual(['node_modules/@fastify/ajv-compiler/node_modules/fast-uri', 'node_modules/fast-uri']);
    expect(run('fast-uri')).toEqual({ ok: true, refused: false, text: '{"b":2}' });
    expect(run('fast-uri-plain')).toEqual({ ok: true, refused: false, text: '{"b":2}' });
  });
});
