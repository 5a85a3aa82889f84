import { build } from 'esbuild';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { keepClassNames } from './class-names.mjs';
import { root } from './root.mjs';

const nodeRequire = createRequire(import.meta.url);

/**
 * Packages the server rarely or never uses, kept out of the chunks every start loads (issue 45,
 * docs/decisions/0360-lazy-packages.md, 0368-lazy-packages-at-start.md,
 * 0475-start-without-unused-package-parts.md): SAML's XML stack (xml-crypto with xpath,
 * @xmldom/xmldom), directory sources' LDAP client (ldapts), the logo
 * check's XML parser (saxes), the QR codes of authenticator enrolment (uqr); and what a dependency
 * requires at its own load for a use the server never makes: glob (@fastify/static lists its root
 * with it only when it serves files itself, and the panel does its own listing), light-my-request
 * (Fastify's `inject`, which only tests call, on the TypeScript sources) and @opentelemetry/api
 * (prom-client's CPU metric, for exemplars, which the server does not turn on), and Ajv's JSON Type
 * Definition class, ajv/dist/jtd (@fastify/ajv-compiler's, for Fastify's JTD mode, which the server
 * does not use), ip-address (@fastify/rate-limit's, for a client address with a colon) and
 * thread-stream (pino's transports: `serve --pretty`); ua-parser-js, which names the devices of a
 * sessions list as it is read (0484-device-names-when-read.md). Each is bundled
 * alone into dist/chunks/lazy-<name>.cjs, and the bundle's imports and requires of it get a
 * stand-in (standIn below) that requires the real module on its first use:
 * - an export read through the stand-in loads the package and is the real export, except that
 *   before the package is loaded a function export is a wrapper that loads it when called,
 *   constructed or read from (`instanceof` and static methods go through to the real one): a
 *   dependency that destructures the package at its load (`const { glob } = require('glob')`)
 *   gets the wrapper and loads nothing;
 * - a package that is itself a function (light-my-request, ajv/dist/jtd's class) gets a stand-in
 *   that can be called and constructed (a bound function: no own `prototype` to report).
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
module.exports = new Proxy(${callable ? '(function () {}).bind(null)' : '{}'}, {${callable ? '\n  apply: (_, self, args) => Reflect.apply(load(), self, args),\n  construct: (_, args, target) => Reflect.construct(load(), args, target),' : ''}
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

export const LAZY_PACKAGES = ['xml-crypto', '@xmldom/xmldom', 'ldapts', 'saxes', 'uqr', 'glob', 'light-my-request', '@opentelemetry/api', 'ajv/dist/jtd', 'ip-address', 'thread-stream', 'ua-parser-js'];
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
