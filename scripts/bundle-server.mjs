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
import { build } from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const nodeRequire = createRequire(import.meta.url);

const root = new URL('..', import.meta.url).pathname;

export const BUNDLE = join(root, 'dist/gatehouse.mjs');
/** The hosted pages' one script (passkeys), served from our origin as /assets/webauthn.js. */
export const PAGE_SCRIPT = join(root, 'dist/pages/webauthn.js');
/** The hosted pages' module and its chunks, served as /assets/js/<file>. */
export const PAGES_MODULE_DIR = join(root, 'dist/pages/js');

/**
 * Builtins a dependency loads at start-up that this server never uses: Fastify's `node:http2`
 * (only for HTTP/2 servers, and the server here is our own HTTP/1.1 one) costs ~2.5 MB resident
 * once loaded. Imports of these get a stand-in that loads the real module on first use.
 */
const LAZY_BUILTINS = /^(node:)?http2$/;
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(build) {
    build.onResolve({ filter: LAZY_BUILTINS }, (args) =>
      // The stand-in's own require is the real one (left external, as every builtin).
      args.namespace === 'lazy-builtin' ? undefined : { path: args.path.replace(/^(node:)?/, 'node:'), namespace: 'lazy-builtin' },
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({
      contents: `let real; module.exports = new Proxy({}, { get: (_, key) => (real ??= require(${JSON.stringify(args.path)}))[key] });`,
      loader: 'js',
    }));
  },
};

/**
 * node:tls imported as CommonJS, not as an ES module (issue 45, docs/decisions/0349-idle-memory-what-is-left.md):
 * Node builds a builtin's ES module namespace by reading every export once, and tls's
 * `rootCertificates` is a getter that builds the 144 PEM strings of Node's CA store on its first
 * read (0.21 MB of heap for good; only `gatehouse admin` against a server with its own CA reads
 * it). Imports of node:tls get a CommonJS stand-in that is the builtin itself (`module.exports =
 * require('node:tls')`); esbuild's interop then reads each export only when the code uses it.
 * Not for node:fs (0.15 MB for `fs.promises`): its 42 importing modules would each get a copy of
 * the interop's ~100 getters, more than it saves.
 */
const CJS_BUILTINS = /^(node:)?tls$/;
export const cjsBuiltins = {
  name: 'cjs-builtins',
  setup(build) {
    build.onResolve({ filter: CJS_BUILTINS }, (args) =>
      args.namespace === 'cjs-builtin' ? undefined : { path: args.path.replace(/^(node:)?/, 'node:'), namespace: 'cjs-builtin' },
    );
    build.onLoad({ filter: /.*/, namespace: 'cjs-builtin' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

/**
 * Packages the server rarely or never uses, kept out of the chunks every start loads (issue 45,
 * docs/decisions/0360-lazy-packages.md, 0368-lazy-packages-at-start.md): SAML's XML stack
 * (xml-crypto with xpath, @xmldom/xmldom), directory sources' LDAP client (ldapts), the logo
 * check's XML parser (saxes), the QR codes of authenticator enrolment (uqr); and what a dependency
 * requires at its own load for a use the server never makes: glob (@fastify/static lists its root
 * with it only when it serves files itself, and the panel does its own listing), light-my-request
 * (Fastify's `inject`, which only tests call, on the TypeScript sources) and @opentelemetry/api
 * (prom-client's CPU metric, for exemplars, which the server does not turn on). Each is bundled
 * alone into dist/chunks/lazy-<name>.cjs, and the bundle's imports and requires of it get a
 * stand-in (standIn below) that requires the real module on its first use:
 * - an export read through the stand-in loads the package and is the real export, except that
 *   before the package is loaded a function export is a wrapper that loads it when called,
 *   constructed or read from (`instanceof` and static methods go through to the real one): a
 *   dependency that destructures the package at its load (`const { glob } = require('glob')`)
 *   gets the wrapper and loads nothing;
 * - a package that is itself a function (light-my-request) gets a stand-in that can be called.
 * The stand-in lists the package's export names and which are functions, taken here at build
 * time, so esbuild's ESM interop (which copies the names as getters) reads nothing early. A use
 * at a module's top level (a class extending one of its classes, a constant built from one of
 * its values) would load the package at start: silently undoing the saving, not breaking anything.
 */
/** CommonJS dependencies that call `require` get a real one (the stand-ins above too). */
export const BANNER = "import { createRequire as __gatehouseRequire } from 'node:module'; const require = __gatehouseRequire(import.meta.url);";

/**
 * A module standing in for dist/chunks/`file`, which is required on the first use. `shape` is
 * the real module's at build time: `names` its export names, `functions` those that are
 * functions, `callable` whether the module itself is one.
 */
function standIn(file, { names, functions = [], callable = false }) {
  return `let real;
const file = ${JSON.stringify(file)};
const req = require; // an indirect call, which esbuild leaves alone (a direct one it would try to bundle)
const load = () => (real ??= (() => { try { return req('./' + file); } catch (e) { if (e.code !== 'MODULE_NOT_FOUND') throw e; return req('./chunks/' + file); } })());
const names = ${JSON.stringify(names)};
const functions = ${JSON.stringify(functions)};
const wrappers = new Map();
// A function export read before the load: called, constructed or read from, it loads the package.
const wrapper = (key) => wrappers.get(key) ?? wrappers.set(key, new Proxy(function () {}, {
  apply: (_, self, args) => Reflect.apply(load()[key], self, args),
  construct: (_, args, target) => Reflect.construct(load()[key], args, target),
  get: (_, name) => load()[key][name],
})).get(key);
const read = (key) => (real || !functions.includes(key) ? load()[key] : wrapper(key));
module.exports = new Proxy(${callable ? '() => {}' : '{}'}, {${callable ? '\n  apply: (_, self, args) => Reflect.apply(load(), self, args),' : ''}
  get: (_, key) => (key === '__esModule' || typeof key === 'symbol' ? undefined : read(key)),
  ownKeys: () => names,
  getOwnPropertyDescriptor: (_, key) => (names.includes(key) ? { configurable: true, enumerable: true, get: () => read(key) } : undefined),
});`;
}

/** The shape standIn needs of `module` (a package's or one of ours' exports). */
function shapeOf(module, names = Object.keys(module)) {
  names = names.filter((key) => key !== '__esModule' && key !== 'default');
  return { names, functions: names.filter((key) => typeof module[key] === 'function'), callable: typeof module === 'function' };
}

export const LAZY_PACKAGES = ['xml-crypto', '@xmldom/xmldom', 'ldapts', 'saxes', 'uqr', 'glob', 'light-my-request', '@opentelemetry/api'];
const lazyFile = (name) => `lazy-${name.replace(/^@/, '').replace(/\//g, '-')}.cjs`;
export const lazyPackages = {
  name: 'lazy-packages',
  setup(build) {
    const filter = new RegExp(`^(${LAZY_PACKAGES.map((p) => p.replace(/[/.]/g, '\\$&')).join('|')})$`);
    build.onResolve({ filter }, (args) => (args.namespace === 'lazy-package' ? undefined : { path: args.path, namespace: 'lazy-package' }));
    build.onLoad({ filter: /.*/, namespace: 'lazy-package' }, (args) => {
      const file = lazyFile(args.path);
      return {
        // The stand-in sits in dist/chunks/ (or, were it ever in the entry, in dist/): the banner's require is that file's.
        contents: standIn(file, shapeOf(nodeRequire(args.path))),
        loader: 'js',
      };
    });
  },
};

/**
 * Gatehouse's own modules that only a rarely used feature needs, loaded on first use the same way
 * (issue 45, docs/decisions/0348-lazy-presets-catalogue.md): the presets' catalogue (41 presets,
 * their texts and setup steps: 0.28 MB of heap at ready) is read when someone lists or applies
 * presets, or an application made from one is checked. Each is bundled alone with what it
 * imports (pure helpers: a copy is no different from the original) into
 * dist/chunks/lazy-<name>.cjs; the server's imports of it get a stand-in whose exports read
 * through to it. Every use is inside a function (checked: none at a module's top level).
 */
// `imports`: what the imports of it end with (esbuild's filter; lazyModuleOf then checks the resolved path).
export const LAZY_MODULES = [{ name: 'presets-catalogue', path: 'server/presets/catalogue/index.ts', imports: /[\\/]catalogue[\\/]index\.(js|ts)$/ }];
const lazyModuleOf = (path) => LAZY_MODULES.find((m) => path === join(root, m.path) || path === join(root, m.path).replace(/\.ts$/, '.js'));
/** The export names of one of LAZY_MODULES, read from esbuild's metafile. */
async function moduleExports(module) {
  const { metafile } = await build({ absWorkingDir: root, entryPoints: [module.path], bundle: true, format: 'esm', platform: 'node', write: false, metafile: true, outdir: '/tmp', logLevel: 'silent' });
  return Object.values(metafile.outputs).find((o) => o.entryPoint)?.exports ?? [];
}
export const lazyModules = {
  name: 'lazy-modules',
  setup(build) {
    for (const { imports } of LAZY_MODULES) {
      build.onResolve({ filter: imports }, (args) => {
        if (args.namespace === 'lazy-module') return undefined;
        const module = lazyModuleOf(resolve(args.resolveDir, args.path));
        return module ? { path: module.name, namespace: 'lazy-module' } : undefined;
      });
    }
    build.onLoad({ filter: /.*/, namespace: 'lazy-module' }, async (args) => {
      const module = LAZY_MODULES.find((m) => m.name === args.path);
      return { contents: standIn(`lazy-${module.name}.cjs`, { names: await moduleExports(module) }), loader: 'js' };
    });
  },
};

/** Each lazy package and what it needs, bundled alone as CommonJS (required synchronously on first use) into `dir`. */
export async function bundleLazyPackages(dir = join(root, 'dist/chunks')) {
  const out = [];
  // Both kinds alike: CommonJS, required synchronously on first use, minified.
  const lazyChunk = (options) => build({ absWorkingDir: root, bundle: true, format: 'cjs', platform: 'node', target: 'node20', legalComments: 'none', minify: true, logLevel: 'warning', write: false, ...options });
  for (const name of LAZY_PACKAGES) {
    const { outputFiles } = await lazyChunk({
      stdin: { contents: `module.exports = require(${JSON.stringify(name)});`, resolveDir: root, loader: 'js' },
      outfile: join(dir, lazyFile(name)),
      keepNames: true,
    });
    out.push(...outputFiles);
  }
  for (const module of LAZY_MODULES) {
    const { outputFiles } = await lazyChunk({
      entryPoints: [module.path],
      outfile: join(dir, `lazy-${module.name}.cjs`),
      tsconfig: 'tsconfig.json',
      plugins: [keepClassNames],
    });
    out.push(...outputFiles);
  }
  return out;
}

/**
 * Gatehouse's own code that only a feature a default install does not use needs, loaded with
 * `import()` on first use (issue 45, docs/decisions/0369-lazy-feature-code.md): the RADIUS
 * and LDAP listeners (only when each is on), SAML's protocol code (on the first SAML request),
 * directory sources' sync engine (when a source first needs it), the ACME client (only when
 * GATEHOUSE_TLS=acme), configuration as code's export and apply (on their first request). Each
 * feature's `entry` (what its `from` files `import()`, by its path from them) is bundled alone
 * into dist/chunks/lazy-<name>.mjs with the modules only it reaches (its private code). What it
 * shares with the rest of the server (the modules the start loads anyway) is not copied and not
 * imported across a chunk boundary: esbuild's splitting
 * would put each module reached from both sides into chunks by the set of entries reaching it,
 * cutting the start's chunks into more, and each binding that then crosses a chunk is a module
 * import and export entry V8 keeps (measured with the RADIUS listener as a plain `import()`: 5
 * more chunks at start, 127 more exports, live heap at ready no smaller). Instead, the
 * `import()` in the `from` files becomes a call to a small host module in the main bundle that
 * hands the feature the bindings it uses (an object per module, filled on the first load) and
 * imports the lazy file. Shared bindings are read once, when the lazy file loads: what a feature
 * imports must be functions, classes or constants, never a `let` reassigned later.
 */
export const LAZY_FEATURES = [
  { name: 'radius-listener', entry: 'server/radius/server.ts', from: ['server/main.ts'] },
  { name: 'ldap-listener', entry: 'server/ldap/server.ts', from: ['server/main.ts'] },
  { name: 'saml-protocol', entry: 'server/saml/protocol.ts', from: ['server/saml/routes.ts', 'server/saml/admin-routes.ts', 'server/saml/plugin.ts'] },
  {
    name: 'directory-engine', entry: 'server/directory-sources/engine.ts',
    from: ['server/directory-sources/routes.ts', 'server/directory-sources/scheduler.ts', 'server/directory-sources/sign-in.ts', 'server/directory-sources/service.ts'],
  },
  { name: 'acme', entry: 'server/trust/acme/manager.ts', from: ['server/trust/plugin.ts'] },
  { name: 'config-as-code', entry: 'server/config-as-code/engine.ts', from: ['server/config-as-code/routes.ts'] },
];
/** What a `from` file writes in its `import()` of the feature: the entry's path from it, as `.js`. */
const specifierIn = (from, feature) => {
  const path = relative(dirname(join(root, from)), join(root, feature.entry)).replace(/\.ts$/, '.js');
  return path.startsWith('.') ? path : `./${path}`;
};
const SHARED = 'gatehouse-shared:';
const REGISTRY = 'globalThis[Symbol.for("gatehouse.lazy-shared")]';
const lazyFeatureFile = (feature) => `lazy-${feature.name}.mjs`;

/**
 * What a feature may share: the modules the main bundle loads with the feature's `from` files
 * (their chunk and the chunks it imports statically), in a build without any feature. A module
 * outside those stays the feature's own: sharing it would load it at start for the feature's sake.
 */
async function probeBuild(options) {
  const { metafile } = await build({ ...options, metafile: true, write: false, minify: false, sourcemap: false, logLevel: 'silent', plugins: [lazyFeatureImports(new Map(), true), ...options.plugins] });
  return metafile;
}
function sharedInputs({ inputs, outputs }, feature) {
  const start = new Set(Object.keys(outputs).filter((k) => feature.from.some((from) => outputs[k].inputs[from])));
  const queue = [...start];
  while (queue.length) {
    for (const i of outputs[queue.pop()].imports) {
      if (i.kind === 'import-statement' && outputs[i.path] && !start.has(i.path)) {
        start.add(i.path);
        queue.push(i.path);
      }
    }
  }
  const loaded = new Set([...start].flatMap((k) => Object.keys(outputs[k].inputs)));
  const inChunks = new Set(Object.values(outputs).flatMap((o) => Object.keys(o.inputs)));
  // Modules that are only re-exports (a package's index: no code of their own, in no chunk):
  // importing a name through one is importing it from where it is defined, so one is shared when
  // everything it re-exports (through other such modules too) is loaded at start anyway.
  const reexportOnly = (k) => inputs[k] && !inChunks.has(k) && /\.(m?js|ts)$/.test(k);
  const sharable = (k, seen = new Set()) =>
    loaded.has(k) || (reexportOnly(k) && !seen.has(k) && seen.add(k) && inputs[k].imports.every((i) => i.external || sharable(i.path, seen)));
  return new Set([...loaded, ...Object.keys(inputs).filter((k) => reexportOnly(k) && sharable(k))]);
}

/**
 * One feature bundled alone: every import of a module in `shared` is left as an import of
 * `gatehouse-shared:<key>`, read back from the output and replaced by a read of the registry.
 * Returns the output file and what it imports ({ key, source: how the host imports it, names }).
 */
async function bundleFeature(feature, shared, options, dir) {
  const sources = new Map();
  const sharing = {
    name: 'lazy-feature-shared',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData?.sharing || args.kind === 'entry-point') return undefined;
        const resolved = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { sharing: true } });
        // Only files are shared: the stand-ins of lazy packages and builtins are copied (each reads
        // the same module through `require`), as a namespace of one in the host would be built at start.
        if (resolved.errors.length || resolved.external || resolved.namespace !== 'file') return undefined;
        const key = relative(root, resolved.path);
        if (!shared.has(key)) return undefined;
        sources.set(key, resolved.path);
        return { path: SHARED + key, external: true };
      });
    },
  };
  const { entryPoints, outdir, entryNames, chunkNames, outExtension, splitting, sourcemap, sourcesContent, plugins, ...common } = options;
  const { outputFiles } = await build({ ...common, entryPoints: [feature.entry], outfile: join(dir, lazyFeatureFile(feature)), plugins: [sharing, ...plugins] });
  const file = outputFiles.find((f) => f.path.endsWith('.mjs'));
  const imports = new Map();
  const IMPORT = /import\s*(?:([\w$]+)\s*,?\s*)?(?:\*\s*as\s*([\w$]+)\s*)?(?:\{([^}]*)\}\s*)?from\s*"gatehouse-shared:([^"]+)";?/g;
  const text = file.text.replace(IMPORT, (_, def, ns, named, key) => {
    const entry = imports.get(key) ?? { key, source: sources.get(key), names: new Set(), namespace: false };
    imports.set(key, entry);
    const reads = [];
    if (def) { entry.names.add('default'); reads.push(`default:${def}`); }
    for (const part of (named ?? '').split(',').map((x) => x.trim()).filter(Boolean)) {
      const [name, local = name] = part.split(/\s+as\s+/);
      entry.names.add(name);
      reads.push(name === local ? name : `${name}:${local}`);
    }
    const out = [];
    if (reads.length) out.push(`const{${reads.join(',')}}=${REGISTRY}[${JSON.stringify(key)}];`);
    if (ns) { entry.namespace = true; out.push(`const ${ns}=${REGISTRY}[${JSON.stringify(key)}];`); }
    return out.join('');
  });
  if (text.includes(SHARED)) throw new Error(`${feature.entry}: an import of a shared module was not rewritten (scripts/bundle-server.mjs, bundleFeature)`);
  return { file: { path: file.path, text }, imports: [...imports.values()] };
}

/** The host of each feature, in the main bundle: fills the registry with what the feature imports, then imports its file. */
function hostModule(feature, imports) {
  const lines = [];
  const fills = [];
  imports.forEach((entry, i) => {
    const names = [...entry.names].filter((n) => n !== 'default');
    const parts = [];
    if (entry.names.has('default')) parts.push(`s${i}d`);
    if (entry.namespace) parts.push(`* as s${i}n`);
    else if (names.length) parts.push(`{ ${names.map((n, j) => `${n} as s${i}_${j}`).join(', ')} }`);
    lines.push(`import ${parts.join(', ')} from ${JSON.stringify(entry.source)};`);
    const value = entry.namespace ? `s${i}n` : `{ ${[...(entry.names.has('default') ? [`default: s${i}d`] : []), ...names.map((n, j) => `${n}: s${i}_${j}`)].join(', ')} }`;
    fills.push(`${JSON.stringify(entry.key)}: ${value}`);
  });
  const file = JSON.stringify(lazyFeatureFile(feature));
  lines.push(`let loaded;
export function load() {
  return (loaded ??= (() => {
    Object.assign(${REGISTRY} ??= {}, { ${fills.join(', ')} });
    return import(new URL((import.meta.url.includes("/chunks/") ? "./" : "./chunks/") + ${file}, import.meta.url).href);
  })().catch((error) => { loaded = undefined; throw error; }));
}`);
  return lines.join('\n');
}

/**
 * In the main build: each feature's `import()` in its `from` files becomes `load()` of
 * its host (`hosts`: name → the host's code), or, for the probe build (`probe`), a dynamic
 * import left external (so nothing of the feature is in the probe's inputs: sharedInputs).
 */
function lazyFeatureImports(hosts, probe = false) {
  return {
    name: 'lazy-feature-imports',
    setup(b) {
      const froms = new Map();
      for (const feature of LAZY_FEATURES) for (const from of feature.from) froms.set(join(root, from), [...(froms.get(join(root, from)) ?? []), feature]);
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const features = froms.get(args.path);
        if (!features) return undefined;
        let text = readFileSync(args.path, 'utf8');
        for (const feature of features) {
          const call = `import('${specifierIn(relative(root, args.path), feature)}')`;
          // The calls, not a type's `typeof import('…')`.
          const calls = new RegExp(`(?<!typeof\\s*)${call.replace(/[.()/]/g, '\\$&')}`, 'g');
          if (!calls.test(text)) throw new Error(`${args.path}: no ${call} to load ${feature.name} lazily (scripts/bundle-server.mjs, LAZY_FEATURES)`);
          const local = `__gatehouseLazy_${feature.name.replace(/\W/g, '_')}`;
          text = `${probe ? '' : `import { load as ${local} } from "lazy-host:${feature.name}";\n`}${text.replace(calls, probe ? `import("lazy-probe:${feature.name}")` : `${local}()`)}`;
        }
        CLASS_DECLARATION.lastIndex = 0;
        return { contents: CLASS_DECLARATION.test(text) ? nameClasses(text) : text, loader: 'ts' };
      });
      b.onResolve({ filter: /^lazy-probe:/ }, (args) => ({ path: args.path, external: true }));
      b.onResolve({ filter: /^lazy-host:/ }, (args) => ({ path: args.path.slice('lazy-host:'.length), namespace: 'lazy-host' }));
      b.onLoad({ filter: /.*/, namespace: 'lazy-host' }, (args) => ({ contents: hosts.get(args.path), loader: 'js', resolveDir: root }));
    },
  };
}

/**
 * The lazy features' files (to write under dist/chunks/) and the plugin that makes the main
 * build load them through their hosts. A host imports only modules the start loads anyway
 * (sharedInputs), so the start's chunks are the same as without the features, less their code.
 */
export async function bundleLazyFeatures(options, dir = join(root, 'dist/chunks')) {
  const hosts = new Map();
  const files = [];
  const probe = await probeBuild(options);
  for (const feature of LAZY_FEATURES) {
    const shared = sharedInputs(probe, feature);
    const { file, imports } = await bundleFeature(feature, shared, options, dir);
    hosts.set(feature.name, hostModule(feature, imports));
    files.push(file);
  }
  return { files, plugin: lazyFeatureImports(hosts) };
}

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
 * Fastify keeps each route's response serializers in an object keyed by status code, built by
 * assigning `acc['200']`, `acc['400']`, … to `{}` (compileSchemasForSerialization in
 * fastify/lib/validation.js). Integer-like keys are array indices to V8, so each such object got
 * a holey element store sized past its largest code: 616 slots, 4,952 bytes, for a handful of
 * entries; the ~200 routes with response schemas held 1.0 MB of them (heap snapshot at ready,
 * issue 45, docs/decisions/0362-status-code-maps.md). Here the object starts with dictionary
 * elements (an index past V8's gap limit added and deleted), which stay a dictionary: ~0.1 KB
 * each, looked up once per reply. The build fails if Fastify's code no longer has the line, so
 * an upgrade cannot silently undo it. (One map shared by routes with the same entries was measured
 * and not adopted: −0.02 MB, docs/decisions/0472-route-lists-exact-status-maps-not-interned.md.)
 */
export const STATUS_MAP_FROM = '      return acc\n    }, {})\n}';
export const STATUS_MAP_TO = "      return acc\n    }, (o => (o[4294967294] = 0, delete o[4294967294], o))({}))\n}";
export const compactStatusMaps = {
  name: 'compact-status-maps',
  setup(build) {
    build.onLoad({ filter: /[\\/]fastify[\\/]lib[\\/]validation\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(STATUS_MAP_FROM)) throw new Error(`${args.path}: Fastify's status-code map is no longer built as scripts/bundle-server.mjs expects (compactStatusMaps)`);
      return { contents: text.replace(STATUS_MAP_FROM, STATUS_MAP_TO), loader: 'js' };
    });
  },
};

/**
 * avvio records every plugin's load in a time tree (`pluginTree`), and Fastify's `after()` for each
 * route is a plugin to it: ~1,000 nodes (label, random id string, times, child array) kept for
 * the life of the process, read only by `fastify.printPlugins()`, which the server never calls
 * (issue 45, decision 0473). Here only the root is tracked: `printPlugins()` prints the whole
 * boot's time and no children. avvio has no option for it. The build fails if avvio's code no
 * longer has the lines, so an upgrade cannot silently undo it.
 */
export const PLUGIN_TREE_FROM = `  const plugin = new Plugin(fastq(this, this._loadPluginNextTick, 1), pluginFn, opts, isAfter, timeout)
  this._trackPluginLoading(plugin)
`;
export const PLUGIN_TREE_TO = `  const plugin = new Plugin(fastq(this, this._loadPluginNextTick, 1), pluginFn, opts, isAfter, timeout)
`;
export const rootOnlyPluginTree = {
  name: 'root-only-plugin-tree',
  setup(build) {
    build.onLoad({ filter: /[\\/]avvio[\\/]index\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(PLUGIN_TREE_FROM)) throw new Error(`${args.path}: avvio's plugin tree is no longer built as scripts/bundle-server.mjs expects (rootOnlyPluginTree)`);
      return { contents: text.replace(PLUGIN_TREE_FROM, PLUGIN_TREE_TO), loader: 'js' };
    });
  },
};

/**
 * Fastify binds every lifecycle hook to each route's instance when the app gets ready
 * (`.map(h => h.bind(this))` in fastify/lib/route.js): the same few hooks bound again for every
 * route — 3,600 bound functions and an array per hook type per route in the server (issue 45,
 * decision 0474). Here an instance's hooks of one type are bound once, in one array, which every
 * route of that instance without hooks of its own shares; a route's own hooks (route options)
 * are bound for it and follow, as before. The bound functions call the same hooks with the same
 * `this` in the same order, and Fastify only reads these arrays. Cached by the instance's hook
 * array (a WeakMap) and checked against the instance and the array's length. The build fails if
 * Fastify's code no longer has the lines, so an upgrade cannot silently undo it.
 */
export const ROUTE_HOOKS_FROM = `            const toSet = this[kHooks][hook]
              .concat(opts[hook] || [])
              .map(h => h.bind(this))
`;
export const ROUTE_HOOKS_TO = `            const toSet = boundHooks(this, this[kHooks][hook], opts[hook])
`;
export const ROUTE_HOOKS_SHARED = `
let boundHooksByList = null
function boundHooks (instance, hooks, routeHooks) {
  const own = [].concat(routeHooks || []).map(h => h.bind(instance))
  if (hooks.length === 0) return own
  if (boundHooksByList === null) {
    boundHooksByList = new Map()
    queueMicrotask(() => { boundHooksByList = null })
  }
  let bound = boundHooksByList.get(hooks)
  if (bound === undefined || bound.instance !== instance || bound.hooks.length !== hooks.length) {
    bound = { instance, hooks: hooks.map(h => h.bind(instance)) }
    boundHooksByList.set(hooks, bound)
  }
  return own.length === 0 ? bound.hooks : bound.hooks.concat(own)
}
`;
export const sharedRouteHooks = {
  name: 'shared-route-hooks',
  setup(build) {
    build.onLoad({ filter: /[\\/]fastify[\\/]lib[\\/]route\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(ROUTE_HOOKS_FROM)) throw new Error(`${args.path}: Fastify's route hooks are no longer bound as scripts/bundle-server.mjs expects (sharedRouteHooks)`);
      return { contents: text.replace(ROUTE_HOOKS_FROM, ROUTE_HOOKS_TO) + ROUTE_HOOKS_SHARED, loader: 'js' };
    });
  },
};

/**
 * find-my-way compiles a matcher per static node of its route tree (`compilePrefixMatch` in
 * find-my-way/lib/node.js): `new Function` with a chain of `path.charCodeAt(i + n) === c` for
 * the node's prefix. Each is a script of its own for the life of the process — its source, its
 * SharedFunctionInfo, bytecode once run — and Gatehouse's routes keep 328 of them (issue 45,
 * docs/decisions/0368-lazy-packages-at-start.md). Here every prefix of two characters or more is
 * matched by one function, `matchPrefix`, called as the node's method (`startsWith` of the node's
 * `prefix` at the index; find-my-way sets a node's `prefix` and `matchPrefix` together), so no
 * closure per node either (docs/decisions/0472-route-lists-exact-status-maps-not-interned.md).
 * The build fails if find-my-way's code no longer has the lines, so an upgrade cannot silently
 * undo it.
 */
export const PREFIX_MATCH_FROM = `  if (prefix.length >= LONG_PREFIX_MIN_LENGTH) {
    return function matchLongPrefix (path, i) {
      return path.indexOf(prefix, i) === i
    }
  }

  const lines = []
  for (let i = 1; i < prefix.length; i++) {
    const charCode = prefix.charCodeAt(i)
    lines.push(\`path.charCodeAt(i + \${i}) === \${charCode}\`)
  }
  return new Function('path', 'i', \`'use strict'\\nreturn \${lines.join(' && ')}\`) // eslint-disable-line
`;
// (compilePrefixMatch's closing brace, after the replaced lines, closes matchPrefix.)
export const PREFIX_MATCH_TO = `  return matchPrefix
}

function matchPrefix (path, i) {
  return path.startsWith(this.prefix, i)
`;
export const sharedPrefixMatch = {
  name: 'shared-prefix-match',
  setup(build) {
    build.onLoad({ filter: /[\\/]find-my-way[\\/]lib[\\/]node\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(PREFIX_MATCH_FROM)) throw new Error(`${args.path}: find-my-way's prefix matchers are no longer compiled as scripts/bundle-server.mjs expects (sharedPrefixMatch)`);
      return { contents: exactRouteArrays(text.replace(PREFIX_MATCH_FROM, PREFIX_MATCH_TO), args.path), loader: 'js' };
    });
    build.onLoad({ filter: /[\\/]find-my-way[\\/]lib[\\/]handler-storage\.js$/ }, (args) => ({ contents: exactRouteArrays(readFileSync(args.path, 'utf8'), args.path), loader: 'js' }));
  },
};

/**
 * find-my-way grows each route-tree node's lists with `push` from `[]`: a node's routes, its
 * handlers, its static children (two parallel arrays) and its parametric children. V8 gives an
 * array its first element with room for 17 (152 bytes), and these lists mostly hold one or two
 * for the life of the process (~1,500 of them in the server; issue 45,
 * docs/decisions/0472-route-lists-exact-status-maps-not-interned.md). Here each is replaced by a copy one longer
 * (`concat`), which V8 sizes exactly; the lists are read by index and length and sorted in place,
 * and nothing keeps a reference to the old one. A node without children shares one frozen empty
 * list instead of three of its own. Done with sharedPrefixMatch, as esbuild loads a file through
 * one plugin. The build fails if a line is no longer there.
 */
export const ROUTE_ARRAYS = [
  ['    this.routes.push(route)\n', '    this.routes = this.routes.concat([route])\n'],
  ['      this.staticChildrenCharCodes.push(charCode)\n      this.staticChildrenNodes.push(node)\n', '      this.staticChildrenCharCodes = this.staticChildrenCharCodes.concat([charCode])\n      this.staticChildrenNodes = this.staticChildrenNodes.concat([node])\n'],
  ['    this.parametricChildren.push(parametricChild)\n', '    this.parametricChildren = this.parametricChildren.concat([parametricChild])\n'],
  ['    this.handlers.push(handlerObject)\n', '    this.handlers = this.handlers.concat([handlerObject])\n'],
  // No list of its own until a node has children: one frozen empty list for all (a write to it throws).
  ['    this.staticChildrenCharCodes = []\n    this.staticChildrenNodes = []\n', '    this.staticChildrenCharCodes = NO_CHILDREN\n    this.staticChildrenNodes = NO_CHILDREN\n'],
  ['    this.parametricChildren = []\n', '    this.parametricChildren = NO_CHILDREN\n'],
  ['\nclass Node {\n', '\nconst NO_CHILDREN = Object.freeze([])\nclass Node {\n'],
];
function exactRouteArrays(text, path) {
  let patched = text;
  for (const [from, to] of ROUTE_ARRAYS) {
    const file = from.includes('this.handlers') ? 'handler-storage.js' : 'node.js';
    if (!path.endsWith(file)) continue;
    if (!patched.includes(from)) throw new Error(`${path}: find-my-way's route lists are no longer grown as scripts/bundle-server.mjs expects (exactRouteArrays)`);
    patched = patched.replace(from, to);
  }
  return patched;
}

/**
 * Class names as written, in a bundle whose identifiers are minified without esbuild's `keepNames`
 * (docs/decisions/0347-minified-names-classes-kept.md): each class declaration that starts a line
 * — the server's, and its dependencies' that ship readable code — gets a static block naming it
 * (`static { Object.defineProperty(this, "name", …) }`), so what reads a class's name reads the
 * name it is written with: pino's `type` of a logged error, jose's error names
 * (`this.name = this.constructor.name`), stack traces' "new X". One property per class, made once;
 * `keepNames` redefined `name` on every function the code made (each then with a property
 * dictionary of its own: 3.4 MB of heap at ready).
 */
export const CLASS_DECLARATION = /^([ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:abstract[ \t]+)?class[ \t]+([A-Za-z_$][\w$]*)(?:[ \t]*<[^{\n]*?>)?(?:[ \t]+(?:extends|implements)[ \t]+[^{\n]+?)?[ \t]*\{)/gm;
export function nameClasses(text) {
  return text.replace(CLASS_DECLARATION, (line, _, name) => `${line} static { Object.defineProperty(this, "name", { value: ${JSON.stringify(name)}, configurable: true }); }`);
}
export const keepClassNames = {
  name: 'keep-class-names',
  setup(build) {
    build.onLoad({ filter: /\.(ts|js|mjs|cjs)$/ }, (args) => {
      if (args.path.endsWith('.d.ts')) return undefined;
      const text = readFileSync(args.path, 'utf8');
      CLASS_DECLARATION.lastIndex = 0;
      if (!CLASS_DECLARATION.test(text)) return undefined;
      return { contents: nameClasses(text), loader: args.path.endsWith('.ts') ? 'ts' : 'js' };
    });
  },
};

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
  plugins: [lazyBuiltins, cjsBuiltins, lazyPackages, lazyModules, compactStatusMaps, rootOnlyPluginTree, sharedRouteHooks, sharedPrefixMatch, keepClassNames],
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
