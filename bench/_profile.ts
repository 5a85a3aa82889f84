/**
 * Where the server's CPU goes, from a V8 CPU profile of a window of the benchmark (issue 27:
 * "the share of CPU in signing, SQLite, HTTP and the rest", so a regression shows up as a moved
 * share, not only as a bigger total).
 *
 * The served process profiles its own main thread on request (GATEHOUSE_BENCH_METRICS=1,
 * server/cli/bench-metrics.ts), so the figures come from the production bundle, not a special
 * build. The bundle is minified; its source maps (dist/**\/*.mjs.map, written beside it and never
 * loaded at run time) turn each profiled function back into a source file, which decides its
 * category. Each sample is charged to the innermost frame that belongs to a category:
 * - SQLite: better-sqlite3 (its JS and its native statement methods) and drizzle-orm;
 * - HTTP: Node's http, net and stream modules, Fastify and its routing/serialisation
 *   dependencies, server/http/, and `(program)` — native time outside JavaScript, which in this
 *   server is the event loop's own work (epoll, llhttp parsing, socket reads);
 * - signing: node:crypto's sign and verify calls (for a signature: handing the job to the pool
 *   and taking its result back; a verification runs in place);
 * - rest: everything else — our handlers, JWT/JSON encoding, hashing, V8's garbage collector.
 * Frames that say nothing by themselves (events, the microtask queue, natives such as
 * JSON.stringify) pass the sample to their caller. Samples are counted, not weighted by their
 * wall-clock gap: the profiler samples by wall clock, and a gap may be time the thread was not
 * running at all (another process had the core).
 *
 * The profile covers the main thread only. The other threads (libuv's pool, where signatures run,
 * and V8's helpers) are charged from /proc: the measured signature cost times the signatures
 * made is "signing", the remainder is shown as "other threads".
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { originalPositionFor, TraceMap } from '@jridgewell/trace-mapping';
import type { BenchServer } from './_server.js';

export type Category = 'signing' | 'sqlite' | 'http' | 'rest';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

/** Sampling interval: 0.5 ms gives a few thousand samples over a 5 s window, at a small cost. */
const INTERVAL_US = 500;

/**
 * Runs `fn` with the server's profiler on and returns its result and the profile's path (in a
 * temporary directory the caller may leave to the OS). The server must run with
 * GATEHOUSE_BENCH_METRICS=1.
 */
export async function profiled<T>(server: BenchServer, fn: () => Promise<T>): Promise<{ value: T; profile: CpuProfile }> {
  const started = await server.ask<{ error?: string }>({ type: 'bench-profile', action: 'start', intervalUs: INTERVAL_US });
  if (started.error) throw new Error(`the server could not start its profiler: ${started.error}`);
  const value = await fn();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-profile-'));
  try {
    const file = join(dir, 'server.cpuprofile');
    const stopped = await server.ask<{ error?: string }>({ type: 'bench-profile', action: 'stop', file });
    if (stopped.error) throw new Error(`the server could not write its profile: ${stopped.error}`);
    return { value, profile: JSON.parse(readFileSync(file, 'utf8')) as CpuProfile };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Dependencies that are the HTTP layer (Fastify and what it runs per request). */
const HTTP_PACKAGES = /node_modules\/(fastify|@fastify\/[^/]+|find-my-way|avvio|fast-json-stringify|fast-querystring|fast-uri|light-my-request|secure-json-parse|toad-cache|abstract-logging|pino|process-warning|rfdc|ret|safe-regex2|content-type|fast-decode-uri-component)\//;
// drizzle-orm publishes source maps that name `../src/…` beside its package, which esbuild's
// chaining resolves to node_modules/src/: no other dependency here does that.
const SQLITE_PACKAGES = /node_modules\/(better-sqlite3|drizzle-orm|src)\//;
const NODE_HTTP = /^node:(_http_|net$|http$|https$|_tls_|tls$|internal\/(streams\/|stream_base_commons|http|net|js_stream_socket))/;
const NODE_SIGNING = /^node:internal\/crypto\/(sig|keys)$/;
/** better-sqlite3's native Statement and Database methods, as the profiler names them. */
const SQLITE_NATIVES = new Set(['get', 'run', 'all', 'iterate', 'exec', 'pragma', 'prepare']);

/** Source maps by bundle file, read once. */
const maps = new Map<string, TraceMap | null>();

/**
 * The lazily loaded packages (scripts/bundle/lazy-packages.mjs LAZY_PACKAGES: SAML's xml-crypto and
 * @xmldom/xmldom, …) are CommonJS chunks of their own, dist/chunks/lazy-<name>.cjs, minified with
 * their names kept and no source map: each is charged to its package as a whole.
 */
const LAZY_CHUNK = /\/lazy-([^/]+)\.cjs$/;

/** The source file a bundled function came from (or the frame's own URL when it is not bundled). */
function sourceOf(frame: ProfileNode['callFrame']): string {
  const { url } = frame;
  const lazy = url.startsWith('file://') ? LAZY_CHUNK.exec(url) : null;
  if (lazy) return `/node_modules/${lazy[1]!.replace(/^xmldom-/, '@xmldom/')} (lazy chunk)`;
  if (!url.startsWith('file://') || !url.endsWith('.mjs')) return url;
  const file = fileURLToPath(url);
  if (!maps.has(file)) maps.set(file, existsSync(`${file}.map`) ? new TraceMap(readFileSync(`${file}.map`, 'utf8')) : null);
  const map = maps.get(file);
  if (!map) return url;
  const source = originalPositionFor(map, { line: frame.lineNumber + 1, column: frame.columnNumber }).source;
  return source ? `/${source.replace(/^(\.\.\/)+/, '')}` : url;
}

/** A frame's category, or undefined when it passes the sample to its caller. */
function categoryOf(frame: ProfileNode['callFrame']): Category | undefined {
  const name = frame.functionName;
  if (name === '(garbage collector)') return 'rest';
  if (name === '(program)') return 'http';
  if (name === '(root)' || name === '(idle)') return undefined;
  const source = sourceOf(frame);
  // better-sqlite3's statement methods are C++ functions: no URL, and called straight from our
  // code when a statement is prepared on the driver (oauth/token/refresh-queries.ts).
  if (!source) return SQLITE_NATIVES.has(name) ? 'sqlite' : undefined; // other natives: JSON, Buffer, …
  if (NODE_SIGNING.test(source)) return 'signing';
  if (NODE_HTTP.test(source)) return 'http';
  if (source.startsWith('node:')) return undefined; // events, timers, the microtask queue, …
  if (SQLITE_PACKAGES.test(source)) return 'sqlite';
  if (HTTP_PACKAGES.test(source) || source.includes('/server/http/')) return 'http';
  return 'rest';
}

export interface MainThreadShares {
  /** Share of the main thread's busy samples per category (sums to 1). */
  shares: Record<Category, number>;
  /** Busy samples (not idle) behind the shares. */
  samples: number;
  /** Of the rest: the garbage collector's share of busy samples. */
  gcShare: number;
  /** The source files with the largest self share in `rest`, for a reader hunting a regression. */
  restTop: { source: string; share: number }[];
}

/** Charges every busy sample of `profile` to a category. */
export function mainThreadShares(profile: CpuProfile): MainThreadShares {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const samplesPerNode = new Map<number, number>();
  for (const id of profile.samples) samplesPerNode.set(id, (samplesPerNode.get(id) ?? 0) + 1);

  const counts: Record<Category, number> = { signing: 0, sqlite: 0, http: 0, rest: 0 };
  const restSources = new Map<string, number>();
  let busy = 0;
  let gc = 0;
  for (const [id, count] of samplesPerNode) {
    const leaf = byId.get(id)!;
    if (leaf.callFrame.functionName === '(idle)') continue;
    busy += count;
    if (leaf.callFrame.functionName === '(garbage collector)') gc += count;
    let category: Category | undefined;
    let charged: ProfileNode | undefined;
    for (let node: ProfileNode | undefined = leaf; node && !category; node = byId.get(parent.get(node.id) ?? -1)) {
      category = categoryOf(node.callFrame);
      charged = node;
      // node:crypto's jobs are natives named `run` too (a synchronous verify is one): the caller decides.
      if (category === 'sqlite' && !node.callFrame.url) {
        const caller = byId.get(parent.get(node.id) ?? -1);
        if (caller && categoryOf(caller.callFrame) === 'signing') category = 'signing';
      }
    }
    category ??= 'rest';
    counts[category] += count;
    if (category === 'rest' && leaf.callFrame.functionName !== '(garbage collector)') {
      const source = charged && categoryOf(charged.callFrame) ? sourceOf(charged.callFrame) : '';
      const label = source.startsWith('file:') ? '(bundle, unmapped)' : source.replace(/^.*\/(server\/|node_modules\/)/, '$1') || '(no source)';
      restSources.set(label, (restSources.get(label) ?? 0) + count);
    }
  }
  const share = (n: number) => (busy ? n / busy : 0);
  return {
    shares: { signing: share(counts.signing), sqlite: share(counts.sqlite), http: share(counts.http), rest: share(counts.rest) },
    samples: busy,
    gcShare: share(gc),
    restTop: [...restSources]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([source, n]) => ({ source, share: share(n) })),
  };
}
