// Bundles the server (entry: server/cli.ts) into one ES module, dist/gatehouse.mjs, the artefact
// every launcher runs (npm start, bin/gatehouse.js, the Electron supervisor, the bench and the
// tests that spawn the server). One file instead of ~750 ES modules is most of the start-up time
// saved (docs/decisions/0071-bundled-server.md).
//
// - Lazily imported code (sign-in providers' arctic/openid-client, @fastify/swagger) becomes
//   separate chunks under dist/chunks/, loaded on first use as before.
// - Native packages, and those that find their own files at run time, stay external and are
//   loaded from node_modules: better-sqlite3 and @node-rs/argon2 (.node binaries).
// - Files read at run time (migrations, page templates and assets, the control panel) are found
//   from the project root (server/util/install-paths.ts), so nothing is copied.
// - CommonJS dependencies that call `require` get a real one through the banner.
// - What the start need not load or keep (issue 45), each in its own module under scripts/bundle/:
//   builtins.mjs (node:http2 on first use, node:tls as CommonJS), lazy-packages.mjs (rarely used
//   packages and modules required through stand-ins), lazy-features.mjs (features a default
//   install does not use, imported on first use), dependency-patches.mjs (Fastify's, avvio's and
//   find-my-way's per-route memory; drizzle without its PostgreSQL dialect), package-parts.mjs
//   (only the TypeBox builders the server names; one copy of a package installed twice),
//   class-names.mjs (class names kept in minified code).
import { build } from 'esbuild';
import { mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cjsBuiltins, lazyBuiltins } from './bundle/builtins.mjs';
import { keepClassNames } from './bundle/class-names.mjs';
import { compactStatusMaps, drizzleWithoutPgCore, rateLimitKeyWithoutIpv6Expression, rootOnlyPluginTree, sharedPrefixMatch, sharedRouteHooks } from './bundle/dependency-patches.mjs';
import { bundleLazyFeatures } from './bundle/lazy-features.mjs';
import { BANNER, bundleLazyPackages, lazyModules, lazyPackages } from './bundle/lazy-packages.mjs';
import { oneCopyPerVersion, typeboxUsedMembers } from './bundle/package-parts.mjs';
import { root } from './bundle/root.mjs';

export const BUNDLE = join(root, 'dist/gatehouse.mjs');
/** The hosted pages' one script (passkeys), served from our origin as /assets/webauthn.js. */
export const PAGE_SCRIPT = join(root, 'dist/pages/webauthn.js');
/** The hosted pages' module and its chunks, served as /assets/js/<file>. */
export const PAGES_MODULE_DIR = join(root, 'dist/pages/js');

/**
 * The server's code as ASCII only. V8 keeps each loaded module's source in memory (lazy
 * compilation, Function.prototype.toString) as one string, Latin-1 when every character fits and
 * UTF-16 otherwise: one `’` esbuild left in a regular expression literal made the 1.6 MB main
 * chunk a 3.3 MB string for the life of the process (issue 45, heap snapshot). esbuild escapes
 * non-ASCII characters in strings and identifiers itself; what it leaves (regular expression
 * literals) is escaped here, `\uXXXX` (a surrogate pair above U+FFFF), which means the same there.
 */
function asciiOnly(text) {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Each output file is written beside its place and renamed over it, so a server starting during
 * a rebuild reads the old bundle or the new one, never half of one. Old chunks are left in place
 * (their names carry a content hash): a running server may still load one lazily.
 */
/** The main build's options (the lazy features' builds take theirs from these). */
const MAIN_BUILD = {
  absWorkingDir: root,
  entryPoints: { gatehouse: 'server/cli.ts' },
  outdir: 'dist',
  entryNames: '[name]',
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  tsconfig: 'tsconfig.json',
  external: ['better-sqlite3', '@node-rs/argon2', '@gatehouse/idle-memory'],
  banner: { js: BANNER },
  legalComments: 'none',
  // Minified without `keepNames`: classes keep their names through keepClassNames above
  // (issue 45, docs/decisions/0344-bundle-names.md and 0347-minified-names-classes-kept.md).
  minify: true,
  keepNames: false,
  // Maps beside the bundle (no reference comment: nothing loads them at run time) so that CPU
  // profiles of the minified code can be read back to source files (bench/_profile.ts).
  sourcemap: 'external',
  sourcesContent: false,
  logLevel: 'warning',
  write: false,
  plugins: [lazyBuiltins, cjsBuiltins, lazyPackages, lazyModules, typeboxUsedMembers, oneCopyPerVersion, compactStatusMaps, rootOnlyPluginTree, sharedRouteHooks, sharedPrefixMatch, drizzleWithoutPgCore, rateLimitKeyWithoutIpv6Expression, keepClassNames],
};

export async function bundleServer() {
  const features = await bundleLazyFeatures(MAIN_BUILD);
  const { outputFiles } = await build({ ...MAIN_BUILD, plugins: [features.plugin, ...MAIN_BUILD.plugins] });
  // What both browser builds share: our origin's scripts for the hosted pages (CSP
  // `script-src 'self'`: nothing is loaded from elsewhere), typed by the pages' own tsconfig.
  const forBrowsers = {
    absWorkingDir: root,
    bundle: true,
    platform: 'browser',
    target: ['es2020'],
    tsconfig: 'server/pages/client/tsconfig.json',
    legalComments: 'none',
    minify: true,
    logLevel: 'warning',
    write: false,
  };
  // The passkey script: @simplewebauthn/browser and ours, one file.
  const page = await build({ ...forBrowsers, entryPoints: ['server/pages/client/webauthn.ts'], outfile: PAGE_SCRIPT, format: 'iife' });
  // The pages' own module (password toggles and strength, count-downs): an ES module whose
  // strength estimator (@zxcvbn-ts and its dictionaries) is split into chunks loaded on first use.
  const pages = await build({
    ...forBrowsers,
    entryPoints: { pages: 'server/pages/client/pages.ts' },
    outdir: PAGES_MODULE_DIR,
    chunkNames: 'chunk-[hash]',
    splitting: true,
    format: 'esm',
  });
  const lazy = [...(await bundleLazyPackages()), ...features.files];
  for (const file of [...outputFiles, ...lazy, ...page.outputFiles, ...pages.outputFiles]) {
    mkdirSync(dirname(file.path), { recursive: true });
    const contents = (outputFiles.includes(file) && file.path.endsWith('.mjs')) || lazy.includes(file) ? asciiOnly(file.text) : file.contents;
    writeFileSync(`${file.path}.tmp`, contents);
    renameSync(`${file.path}.tmp`, file.path);
  }
}

/** Files under `dir` (relative to the root) whose name passes `keep`, skipping `skip` folders. */
function sources(dir, keep, skip = () => false) {
  const found = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true, recursive: true })) {
    const path = relative(root, join(entry.parentPath ?? entry.path, entry.name));
    if (entry.isFile() && keep(entry.name) && !skip(path)) found.push(path);
  }
  return found;
}

/**
 * What `tsc -p tsconfig.json` emits (server/ and electron/ → dist/server/, dist/electron/, with
 * source maps), transpiled by esbuild file by file without type checking: ~1 s where tsc takes
 * most of a minute on a first build (decision 0351). `npm start`, `npm test` and the bench start
 * from this; `npm run build` (the desktop installers) still runs tsc, and type errors are
 * `npm run typecheck`'s. The sources already build one file at a time (the bundle above is
 * esbuild's), so no construct needs the whole program (no cross-file `const enum`).
 */
export async function emitServer() {
  const ts = (name) => name.endsWith('.ts') && !name.endsWith('.d.ts');
  const modules = [
    ...sources('server', ts, (path) => path.startsWith('server/pages/client/')),
    ...sources('electron', ts),
  ];
  const common = {
    absWorkingDir: root,
    outdir: 'dist',
    outbase: '.',
    bundle: false,
    platform: 'node',
    target: 'es2022',
    tsconfig: 'tsconfig.json',
    sourcemap: true,
    logLevel: 'warning',
  };
  await Promise.all([
    build({ ...common, entryPoints: modules, format: 'esm' }),
    // The preload script is CommonJS (Electron's sandboxed preloads cannot be ES modules).
    build({ ...common, entryPoints: sources('electron', (name) => name.endsWith('.cts')), format: 'cjs', outExtension: { '.js': '.cjs' } }),
  ]);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await bundleServer();
