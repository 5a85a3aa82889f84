import { build } from 'esbuild';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { CLASS_DECLARATION, nameClasses } from './class-names.mjs';
import { root } from './root.mjs';

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
  if (text.includes(SHARED)) throw new Error(`${feature.entry}: an import of a shared module was not rewritten (scripts/bundle/lazy-features.mjs, bundleFeature)`);
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
          if (!calls.test(text)) throw new Error(`${args.path}: no ${call} to load ${feature.name} lazily (scripts/bundle/lazy-features.mjs, LAZY_FEATURES)`);
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
 * A feature reads what it shares once, when its file loads (hostModule): a binding the module
 * reassigns later (`export let`, `export var`) would stay as it was then in the feature. None is
 * shared today; the build fails if a feature comes to import one, rather than it going stale.
 */
function noReassignedBindings(feature, entry) {
  // (A module a plugin makes, with no file, is the bundle's own: package-parts.mjs's TypeBox members.)
  if (!/\.[cm]?[jt]s$/.test(entry.source) || !existsSync(entry.source)) return;
  const text = readFileSync(entry.source, 'utf8');
  const reassignable = [...text.matchAll(/^export\s+(?:let|var)\s+([\w$]+)/gm)].map((m) => m[1]);
  const read = entry.namespace ? reassignable : reassignable.filter((name) => entry.names.has(name));
  if (read.length) throw new Error(`${feature.entry} shares ${read.join(', ')} of ${entry.key}, which that module may reassign (export let/var): the feature would keep its value at load (scripts/bundle/lazy-features.mjs)`);
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
    imports.forEach((entry) => noReassignedBindings(feature, entry));
    hosts.set(feature.name, hostModule(feature, imports));
    files.push(file);
  }
  return { files, plugin: lazyFeatureImports(hosts) };
}
