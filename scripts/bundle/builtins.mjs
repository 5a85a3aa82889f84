// Node builtins the bundle imports differently from how its code writes it (issue 45).

/**
 * Builtins a dependency loads at start-up that this server never uses: Fastify's `node:http2`
 * (only for HTTP/2 servers, and the server here is our own HTTP/1.1 one) costs ~2.5 MB resident
 * once loaded. Imports of these get a stand-in that loads the real module on first use.
 */
const LAZY_BUILTINS = /^(node:)?http2$/;
export const lazyBuiltins = {
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
