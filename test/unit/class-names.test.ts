/**
 * The bundle is minified without esbuild's `keepNames` (issue 45, decisions 0344 and 0347); its
 * `keepClassNames` plugin names each class as written (scripts/bundle/class-names.mjs). Built here with
 * the bundle's minification and plugin, run in a child: the names pino logs (`type`), jose's
 * error names and `instanceof` are the sources' own, and a plain function keeps no `name` of its
 * own (the property dictionary `keepNames` gave every function).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import ts from 'typescript';
// @ts-expect-error: a plain .mjs script without types
import { CLASS_DECLARATION, keepClassNames, nameClasses } from '../../scripts/bundle/class-names.mjs';
// @ts-expect-error: a plain .mjs script without types
import { BANNER } from '../../scripts/bundle/lazy-packages.mjs';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-class-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ENTRY = `
import { errors } from 'jose';
import { ConfigError } from '${join(process.cwd(), 'server/config.ts')}';
import { OAuthError } from '${join(process.cwd(), 'server/oauth/errors.ts')}';
import { err } from 'pino-std-serializers';
const config = new ConfigError('bad');
const expired = new errors.JWTExpired('old', {});
const made = () => { const inner = () => 1; return inner; };
const fast = new Function('f', 'return %HasFastProperties(f)');
console.log(JSON.stringify({
  config: [config.constructor.name, config instanceof ConfigError, err(config).type],
  oauth: OAuthError.name,
  jose: [expired.name, expired.code, expired instanceof errors.JOSEError],
  fastFunction: fast(made()),
}));
`;

describe('class names in the minified bundle', () => {
  it('are the names the classes are written with', async () => {
    writeFileSync(join(dir, 'entry.ts'), ENTRY);
    await build({
      entryPoints: [join(dir, 'entry.ts')], outfile: join(dir, 'entry.mjs'), absWorkingDir: process.cwd(), nodePaths: [join(process.cwd(), 'node_modules')],
      bundle: true, format: 'esm', platform: 'node', target: 'node20', banner: { js: BANNER }, minify: true, keepNames: false,
      external: ['better-sqlite3', '@node-rs/argon2', '@gatehouse/idle-memory'], plugins: [keepClassNames], logLevel: 'silent',
    });
    const out = JSON.parse(execFileSync(process.execPath, ['--allow-natives-syntax', join(dir, 'entry.mjs')], { encoding: 'utf8' }));
    expect(out).toEqual({
      config: ['ConfigError', true, 'ConfigError'],
      oauth: 'OAuthError',
      jose: ['JWTExpired', 'ERR_JWT_EXPIRED', true],
      fastFunction: true,
    });
  });

  it('names class declarations that start a line, and only those', () => {
    expect(nameClasses('export class A extends B {\n  x = 1;\n}\nclass C<T> implements D<T> {}\nconst s = "class E {";\n  abstract class F {\n'))
      .toBe([
        'export class A extends B { static { Object.defineProperty(this, "name", { value: "A", configurable: true }); }',
        '  x = 1;',
        '}',
        'class C<T> implements D<T> { static { Object.defineProperty(this, "name", { value: "C", configurable: true }); }}',
        'const s = "class E {";',
        '  abstract class F { static { Object.defineProperty(this, "name", { value: "F", configurable: true }); }',
        '',
      ].join('\n'));
  });

  // The plugin reads text, not syntax: a line inside a template literal that looked like a class
  // declaration would be changed. Over every file the server's bundle reads, each line it names
  // must be where TypeScript's parser sees a class start.
  it('names only real class declarations in every file the server bundle reads', async () => {
    const { metafile } = await build({
      entryPoints: ['server/cli.ts'], absWorkingDir: process.cwd(), bundle: true, format: 'esm', platform: 'node', splitting: true,
      outdir: join(dir, 'meta'), write: false, metafile: true, logLevel: 'silent', external: ['better-sqlite3', '@node-rs/argon2', '@gatehouse/idle-memory'],
    });
    const notClasses: string[] = [];
    let named = 0;
    for (const input of Object.keys(metafile.inputs).filter((path) => !path.includes(':'))) {
      const text = readFileSync(input, 'utf8');
      CLASS_DECLARATION.lastIndex = 0;
      const matches = [...text.matchAll(CLASS_DECLARATION)];
      if (!matches.length) continue;
      const file = ts.createSourceFile(input, text, ts.ScriptTarget.Latest, true, input.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS);
      const classLines = new Set<number>();
      const visit = (node: ts.Node): void => {
        if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) classLines.add(file.getLineAndCharacterOfPosition(node.getStart(file)).line);
        ts.forEachChild(node, visit);
      };
      visit(file);
      for (const match of matches) {
        named++;
        const line = file.getLineAndCharacterOfPosition(match.index! + match[0].length - match[0].trimStart().length).line;
        if (!classLines.has(line)) notClasses.push(`${input}:${line + 1}`);
      }
    }
    expect(notClasses).toEqual([]);
    expect(named).toBeGreaterThan(500);
  });
});
