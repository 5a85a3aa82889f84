// Build-time patches of dependencies' code, each for what the server keeps in memory (issue 45):
// a plugin that loads one file of a package with a few of its lines replaced. Each fails the build
// when the lines it replaces are no longer there, so an upgrade cannot silently undo it, and each
// has a test that builds the package with and without it (test/unit/status-code-maps,
// plugin-tree, route-hooks, prefix-match, drizzle-without-pg-core and rate-limit-key, through
// test/helpers/patched-bundle.ts).
import { readFileSync } from 'node:fs';

/**
 * `text` (the file at `path`) with `from` replaced by `to`; the build fails, naming the patch and
 * what it expected of the dependency, when `from` is no longer there.
 */
function replaced(text, path, from, to, expected, patch) {
  if (!text.includes(from)) throw new Error(`${path}: ${expected} as scripts/bundle/dependency-patches.mjs expects (${patch})`);
  return text.replace(from, to);
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
      return { contents: replaced(text, args.path, STATUS_MAP_FROM, STATUS_MAP_TO, "Fastify's status-code map is no longer built", 'compactStatusMaps'), loader: 'js' };
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
      return { contents: replaced(text, args.path, PLUGIN_TREE_FROM, PLUGIN_TREE_TO, "avvio's plugin tree is no longer built", 'rootOnlyPluginTree'), loader: 'js' };
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
      return { contents: replaced(text, args.path, ROUTE_HOOKS_FROM, ROUTE_HOOKS_TO, "Fastify's route hooks are no longer bound", 'sharedRouteHooks') + ROUTE_HOOKS_SHARED, loader: 'js' };
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
      const matched = replaced(text, args.path, PREFIX_MATCH_FROM, PREFIX_MATCH_TO, "find-my-way's prefix matchers are no longer compiled", 'sharedPrefixMatch');
      return { contents: exactRouteArrays(matched, args.path), loader: 'js' };
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
    patched = replaced(patched, path, from, to, "find-my-way's route lists are no longer grown", 'exactRouteArrays');
  }
  return patched;
}

/**
 * drizzle-orm's core imports two things from its PostgreSQL dialect: sql.js `isPgEnum` (from
 * pg-core/columns/enum.js, a check by a `Symbol.for` mark) and relations.js `PrimaryKeyBuilder`
 * (from pg-core/primary-keys.js, only for `is(entry, PrimaryKeyBuilder)`). ES module imports are
 * evaluated at load, so every start in SQLite mode loaded and ran PostgreSQL's column classes,
 * table, foreign keys and checks with them (~33 KB of the start's chunks; issue 45,
 * docs/decisions/0475-start-without-unused-package-parts.md). Here sql.js gets enum.js's own
 * `isPgEnum` (its lines copied from the file at build time), and relations.js a stand-in class
 * with the same `entityKind`, which drizzle's `is` compares along the value's class chain (a
 * real PrimaryKeyBuilder is still recognised; nothing else is). PostgreSQL mode loads pg-core
 * as before, from its own chunk. The build fails if drizzle's lines are no longer there.
 */
export const PG_ENUM_IMPORT = 'import { isPgEnum } from "../pg-core/columns/enum.js";\n';
export const PG_ENUM_CHECK = /const isPgEnumSym = Symbol\.for\("drizzle:isPgEnum"\);\nfunction isPgEnum\(obj\) \{\n[^}]*\n\}\n/;
export const PG_PRIMARY_KEY_IMPORT = 'import { PrimaryKeyBuilder } from "./pg-core/primary-keys.js";\n';
export const PG_PRIMARY_KEY_KIND = /class PrimaryKeyBuilder \{\n {2}static \[entityKind\] = ("\w+");\n/;
export const drizzleWithoutPgCore = {
  name: 'drizzle-without-pg-core',
  setup(build) {
    const fail = (path) => {
      throw new Error(`${path}: drizzle-orm no longer imports its PostgreSQL dialect as scripts/bundle/dependency-patches.mjs expects (drizzleWithoutPgCore)`);
    };
    build.onLoad({ filter: /[\\/]drizzle-orm[\\/]sql[\\/]sql\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const check = readFileSync(new URL('../pg-core/columns/enum.js', `file://${args.path}`), 'utf8').match(PG_ENUM_CHECK);
      if (!text.includes(PG_ENUM_IMPORT) || !check) fail(args.path);
      return { contents: text.replace(PG_ENUM_IMPORT, check[0]), loader: 'js' };
    });
    build.onLoad({ filter: /[\\/]drizzle-orm[\\/]relations\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const kind = readFileSync(new URL('./pg-core/primary-keys.js', `file://${args.path}`), 'utf8').match(PG_PRIMARY_KEY_KIND);
      if (!text.includes(PG_PRIMARY_KEY_IMPORT) || !text.includes('import { entityKind, is } from "./entity.js";\n') || !kind) fail(args.path);
      return { contents: text.replace(PG_PRIMARY_KEY_IMPORT, `class PrimaryKeyBuilder {\n  static [entityKind] = ${kind[1]};\n}\n`), loader: 'js' };
    });
  },
};

/**
 * @fastify/rate-limit's default key is the client's address, normalised by `normalizeIP`, which
 * asks node:net's `isIPv6` first: Node's IPv6 expression (lib/internal/net.js `IPv6Reg`) runs on
 * every IPv4 client's address, and V8 compiles it to native code on its second run and keeps that
 * code (139 KB) as long as the expression lives, for good (issue 45,
 * docs/decisions/0476-ip-family-without-the-ipv6-expression.md). Here an address without a colon
 * is taken as not IPv6 without asking (an IPv6 address always has one): the same keys. The build
 * fails if the lines are no longer there.
 */
export const RATE_LIMIT_IPV6_FROM = '  if (!isIPv6(ip)) {\n    return ip.toLowerCase()\n';
export const RATE_LIMIT_IPV6_TO = "  if (!ip.includes(':') || !isIPv6(ip)) {\n    return ip.toLowerCase()\n";
export const rateLimitKeyWithoutIpv6Expression = {
  name: 'rate-limit-key-without-ipv6-expression',
  setup(build) {
    build.onLoad({ filter: /[\\/]@fastify[\\/]rate-limit[\\/]index\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      return { contents: replaced(text, args.path, RATE_LIMIT_IPV6_FROM, RATE_LIMIT_IPV6_TO, '@fastify/rate-limit no longer normalises addresses', 'rateLimitKeyWithoutIpv6Expression'), loader: 'js' };
    });
  },
};
