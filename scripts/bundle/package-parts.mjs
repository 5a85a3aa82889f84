// What the start loads of a package whose whole is in the bundle for no use (issue 45,
// docs/decisions/0475-start-without-unused-package-parts.md): only the TypeBox builders the server
// calls, and one copy of a package npm installed twice at the same version.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { root } from './root.mjs';

/**
 * The server writes its schemas with TypeBox's `Type` namespace (`Type.Object`, `Type.String`, …),
 * and `import { Type } from 'typebox'` is the namespace object of all of typebox.mjs: esbuild
 * must keep every export of it (the TypeScript-syntax `Script` parser, the type actions, …),
 * which every start loads and runs, though the server calls 14 builders. Here the server's
 * imports of 'typebox' get a module whose `Type` holds only the builders its sources name
 * (`Type.X`, read from them at build time), so esbuild leaves out the rest. The build fails if
 * a file that imports TypeBox uses `Type` other than as `Type.X` (passed around, destructured,
 * indexed), which would reach a builder the list does not hold. It is a file path (never
 * written) so that a lazy feature shares it as any other module.
 */
export const TYPE_MEMBERS = join(root, 'node_modules/typebox/build/gatehouse-type-members.mjs');
const importsTypebox = (text) => /\bimport\s*\{[^}]*\bType\b[^}]*\}\s*from\s*'typebox'/.test(text);
function serverSources(dir = join(root, 'server')) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath ?? e.path, e.name))
    .filter((path) => !path.includes('/pages/client/'));
}
/** The `Type` members the server's sources name, those TypeBox has; fails on any other use of `Type`. */
export async function usedTypeMembers(files = serverSources()) {
  const { Type } = await import('typebox');
  const used = new Set();
  for (const path of files) {
    const text = readFileSync(path, 'utf8');
    if (!importsTypebox(text)) continue;
    const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '').replace(/^import\s[^;]*;/gm, '');
    for (const [, name] of code.matchAll(/(?<![\w$.])Type\.([A-Za-z_$][\w$]*)/g)) if (name in Type) used.add(name);
    const other = code.match(/(?<![\w$.'"-])Type(?![\w$'"-]|\s*\.)/);
    if (other) throw new Error(`${relative(root, path)}: uses TypeBox's Type other than as Type.X ("${code.slice(other.index - 20, other.index + 20).trim()}"), which the bundle's Type does not hold (scripts/bundle/package-parts.mjs)`);
  }
  return [...used].sort();
}
export const typeboxUsedMembers = {
  name: 'typebox-used-members',
  setup(build) {
    let members;
    // Our code's imports (the server's, a lazy feature's host); a package's own stay TypeBox's.
    build.onResolve({ filter: /^typebox$/ }, (args) => (/[\\/]node_modules[\\/]/.test(args.importer) ? undefined : { path: TYPE_MEMBERS }));
    build.onResolve({ filter: /[\\/]gatehouse-type-members\.mjs$/ }, () => ({ path: TYPE_MEMBERS }));
    build.onLoad({ filter: /[\\/]gatehouse-type-members\.mjs$/ }, async () => {
      members ??= await usedTypeMembers();
      // Aliased: the builders' names (String, Object, Array, …) would shadow the globals here.
      return {
        contents: `import { ${members.map((m, i) => `${m} as m${i}`).join(', ')} } from 'typebox';\nexport const Type = { ${members.map((m, i) => `${m}: m${i}`).join(', ')} };\n`,
        loader: 'js',
        resolveDir: root,
      };
    });
  },
};

/**
 * Packages npm installed more than once at the same version (nested under the dependants whose
 * range the top-level copy does not meet): each copy is a module of its own in the bundle, its
 * source and module-scope objects twice. fast-uri 4.2.3 is installed for @fastify/ajv-compiler
 * and for fast-json-stringify (the top-level copy is 3.1.9, Ajv's); both load at start. Here every
 * import of one of these packages resolves into the first copy of its version (by its path in
 * package-lock.json), the same files.
 */
export const ONE_COPY = ['fast-uri'];
export const oneCopyPerVersion = {
  name: 'one-copy-per-version',
  setup(build) {
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')).packages;
    const filter = new RegExp(`^(${ONE_COPY.map((p) => p.replace(/[/.]/g, '\\$&')).join('|')})(/|$)`);
    build.onResolve({ filter }, async (args) => {
      if (args.pluginData?.oneCopy) return undefined;
      const resolved = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { oneCopy: true } });
      if (resolved.errors.length || resolved.namespace !== 'file') return undefined;
      const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
      const at = resolved.path.lastIndexOf(`node_modules/${name}/`);
      const copy = relative(root, resolved.path.slice(0, at + `node_modules/${name}`.length));
      const version = lock[copy]?.version;
      if (!version) throw new Error(`${copy}: not in package-lock.json (scripts/bundle/package-parts.mjs, oneCopyPerVersion)`);
      const first = Object.keys(lock).filter((key) => (key === `node_modules/${name}` || key.endsWith(`/node_modules/${name}`)) && lock[key].version === version).sort()[0];
      return { ...resolved, path: join(root, first, relative(join(root, copy), resolved.path)) };
    });
  },
};
