/**
 * `npm run bench -- refresh --alg RS256,ES256,EdDSA` (issue 38): the refresh grant of an
 * application per signing algorithm, on one server and one database, each against its own
 * signature's cost measured in the same run (bench/_signature.ts).
 *
 * - Each algorithm's application gets its own families (a person and code flows through the public
 *   API, as bench/refresh.ts seeds), and the loads take turns in short windows, the order rotated
 *   each round (RS256, ES256, EdDSA; ES256, EdDSA, RS256; …), so a drift of the shared machine's
 *   load falls on every algorithm alike. The server's CPU per grant (every thread, /proc) and the
 *   event loop's are summed per algorithm over its windows.
 * - Where ES256 and EdDSA signatures run: the same windows again with the signature on libuv's
 *   pool and on the event loop, switched on this server between windows (`bench-signing`, server/
 *   cli/bench-metrics.ts) in ABBA order. On a shared machine whose cores are full, the side with
 *   fewer CPU-seconds per grant is the faster one; oauth/signing-algorithms.ts keeps it
 *   (docs/decisions/0200-signing-algorithms.md).
 *
 * Targets, in the same run: an ES256 application's grant ≤ 0.55 × the server CPU of an RS256
 * application's, and EdDSA's no more than ES256's. RS256's row is the reference (issue 27's path).
 */
import type { BenchResult } from './run.js';
import { codeFlow, createApplication, loadAverage, percentile, refreshLoad, signUp, type BenchServer } from './_server.js';
import { perOpOrThrow } from './_cost.js';
import { signatureCost, signingInputOf, type SignatureCost } from './_signature.js';

export const ALGS = ['RS256', 'ES256', 'EdDSA'] as const;
export type Alg = (typeof ALGS)[number];

const CONNECTIONS = 8;
/**
 * Families per application: enough for every window of the run (a window that stops on time drops
 * the answers in flight, and with them up to one successor token per connection).
 */
const FAMILIES = 16 * CONNECTIONS;
const WARM_UP_GRANTS = 1_500;
const WINDOW_SECONDS = 3;
const ROUNDS = 4;
/** ABBA blocks of the pool comparison: each side gets 2 windows per block. */
const POOL_BLOCKS = 3;
const TARGET_ES256_SHARE = 0.55;

/** The algorithms named by `--alg` (bench/run.ts passes them as BENCH_ALGS), RS256 first; undefined without the flag. */
export function benchAlgs(): Alg[] | undefined {
  const raw = process.env.BENCH_ALGS;
  if (!raw) return undefined;
  const named = raw.split(',').map((a) => a.trim()).filter(Boolean);
  const unknown = named.filter((a) => !(ALGS as readonly string[]).includes(a));
  if (unknown.length || !named.length) throw new Error(`--alg takes RS256, ES256 and EdDSA (one or more, comma-separated or repeated), got "${raw}"`);
  return ALGS.filter((alg) => named.includes(alg));
}

interface Side {
  cpuMs: number;
  mainMs: number;
  ops: number;
  seconds: number;
  latencies: number[];
  loads: string[];
}

const emptySide = (): Side => ({ cpuMs: 0, mainMs: 0, ops: 0, seconds: 0, latencies: [], loads: [] });

/** One window of 8-connection refresh load on `clientId`, added to `side`. */
async function window(server: BenchServer, clientId: string, pool: string[], side: Side): Promise<void> {
  const before = server.cpu();
  const run = await refreshLoad(server, clientId, pool, { connections: CONNECTIONS, duration: WINDOW_SECONDS });
  const ops = run.latencies.length;
  const perOp = perOpOrThrow(before, server.cpu(), ops);
  side.cpuMs += perOp.totalMs * ops;
  side.mainMs += perOp.mainMs * ops;
  side.ops += ops;
  side.seconds += run.result.duration;
  side.latencies.push(...run.latencies);
  side.loads.push(loadAverage());
}

const figuresOf = (side: Side) => {
  const latencies = [...side.latencies].sort((a, b) => a - b);
  return {
    cpuMs: side.cpuMs / side.ops,
    mainMs: side.mainMs / side.ops,
    rate: side.ops / side.seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
};

const ms = (n: number) => n.toFixed(3);

async function switchPool(server: BenchServer, onPool: Alg[]): Promise<void> {
  const answer = await server.ask<{ onPool: Alg[] }>({ type: 'bench-signing', onPool });
  if (answer.onPool.join() !== onPool.join()) throw new Error(`the server did not move its signatures (asked ${onPool.join()}, has ${answer.onPool.join()})`);
}

/** The rows of `refresh --alg …` on `server` (started with GATEHOUSE_BENCH_METRICS=1). */
export async function refreshByAlgorithm(server: BenchServer, algs: Alg[]): Promise<BenchResult[]> {
  const apps = new Map<Alg, { id: string; pool: string[]; accessToken: string }>();
  for (const alg of algs) {
    const id = `bench-${alg.toLowerCase()}`;
    await createApplication(server, id, { signingAlg: alg });
    const cookie = await signUp(server, `${id}@example.com`, id);
    const pool: string[] = [];
    let accessToken = '';
    for (let i = 0; i < FAMILIES; i++) {
      const tokens = await codeFlow(server, id, cookie, 'openid offline_access');
      pool.push(tokens.refresh_token!);
      accessToken = tokens.access_token!; // the same claims a refresh grant signs
    }
    const header = JSON.parse(Buffer.from(accessToken.split('.')[0]!, 'base64url').toString()) as { alg: string };
    if (header.alg !== alg) throw new Error(`application ${id} signs with ${header.alg}, not ${alg}`);
    apps.set(alg, { id, pool, accessToken });
  }
  for (const { id, pool } of apps.values()) await refreshLoad(server, id, pool, { connections: CONNECTIONS, amount: WARM_UP_GRANTS });

  // Where the server signs each algorithm as built.
  const built = await server.ask<{ onPool: Alg[] }>({ type: 'bench-signing' });
  const sides = new Map<Alg, Side>(algs.map((alg) => [alg, emptySide()]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < algs.length; i++) {
      const alg = algs[(round + i) % algs.length]!;
      const app = apps.get(alg)!;
      await window(server, app.id, app.pool, sides.get(alg)!);
    }
  }

  // ES256 and EdDSA: on the pool against on the event loop, ABBA.
  const fast = algs.filter((alg) => alg !== 'RS256');
  const poolRows: BenchResult[] = [];
  for (const alg of fast) {
    const app = apps.get(alg)!;
    const loop = emptySide();
    const onPool = emptySide();
    for (let block = 0; block < POOL_BLOCKS; block++) {
      for (const side of ['loop', 'pool', 'pool', 'loop'] as const) {
        await switchPool(server, ALGS.filter((a) => (a === alg ? side === 'pool' : built.onPool.includes(a))));
        await window(server, app.id, app.pool, side === 'pool' ? onPool : loop);
      }
    }
    const l = figuresOf(loop);
    const p = figuresOf(onPool);
    // Faster under load: the machine is shared, so fewer CPU-seconds per grant is more grants per
    // second once the cores are full; the wall-clock rate is shown beside it.
    const loopFaster = l.cpuMs < p.cpuMs;
    poolRows.push({
      scenario: `${alg} signature on the pool vs on the event loop, ${CONNECTIONS} connections (same server, ABBA windows)`,
      throughput: p.rate,
      p50Ms: p.p50Ms,
      p99Ms: p.p99Ms,
      cpuSecondsPer1k: p.cpuMs,
      measured:
        `pool ${Math.round(p.rate)}/s, ${ms(p.cpuMs)} ms CPU (main ${ms(p.mainMs)}), p99 ${p.p99Ms.toFixed(1)} ms; ` +
        `event loop ${Math.round(l.rate)}/s, ${ms(l.cpuMs)} ms CPU (main ${ms(l.mainMs)}), p99 ${l.p99Ms.toFixed(1)} ms: ${loopFaster ? 'the event loop' : 'the pool'} is faster`,
      extra: {
        'pool grants/s': Math.round(p.rate), 'loop grants/s': Math.round(l.rate),
        'pool server CPU ms/op': ms(p.cpuMs), 'loop server CPU ms/op': ms(l.cpuMs),
        'pool main-thread ms/op': ms(p.mainMs), 'loop main-thread ms/op': ms(l.mainMs),
        'pool p99 ms': p.p99Ms.toFixed(2), 'loop p99 ms': l.p99Ms.toFixed(2),
        'load avg per window': [...onPool.loads, ...loop.loads].join(' '),
      },
      target: `the build signs ${alg} where a grant costs less CPU (${built.onPool.includes(alg) ? 'pool' : 'event loop'})`,
      met: built.onPool.includes(alg) ? !loopFaster : loopFaster,
    });
  }
  await switchPool(server, built.onPool);

  const signatures = new Map<Alg, SignatureCost>();
  for (const alg of algs) signatures.set(alg, await signatureCost(server.dataDir, signingInputOf(apps.get(alg)!.accessToken), alg));

  const figures = new Map(algs.map((alg) => [alg, figuresOf(sides.get(alg)!)]));
  const rows = algs.map((alg): BenchResult => {
    const f = figures.get(alg)!;
    const signature = signatures.get(alg)!;
    const rs = figures.get('RS256');
    const es = figures.get('ES256');
    const ratio = f.cpuMs / signature.signMs;
    let target = 'reference (RS256: issue 27\'s path)';
    let met = true;
    let against = '';
    if (alg === 'ES256' && rs) {
      target = `CPU ≤ ${TARGET_ES256_SHARE} × RS256's`;
      met = f.cpuMs <= TARGET_ES256_SHARE * rs.cpuMs;
      against = `; ${(f.cpuMs / rs.cpuMs).toFixed(2)} × RS256's CPU`;
    } else if (alg === 'EdDSA' && es) {
      target = "CPU ≤ ES256's";
      met = f.cpuMs <= es.cpuMs;
      against = `; ${(f.cpuMs / es.cpuMs).toFixed(2)} × ES256's CPU${rs ? `, ${(f.cpuMs / rs.cpuMs).toFixed(2)} × RS256's` : ''}`;
    } else if (alg !== 'RS256') {
      target = 'reference (no RS256 or ES256 in this run to compare with)';
    }
    return {
      scenario: `token refresh, ${alg} application, ${CONNECTIONS} connections`,
      throughput: f.rate,
      p50Ms: f.p50Ms,
      p99Ms: f.p99Ms,
      cpuSecondsPer1k: f.cpuMs,
      measured: `${ratio.toFixed(2)} × its signature (${ms(f.cpuMs)} / ${ms(signature.signMs)} ms)${against}`,
      extra: {
        connections: CONNECTIONS,
        grants: sides.get(alg)!.ops,
        'server CPU ms/op': ms(f.cpuMs),
        'main-thread ms/op': ms(f.mainMs),
        'signature ms (same run)': ms(signature.signMs),
        'verification ms (same run)': ms(signature.verifyMs),
        'signature batches ms': signature.signBatchesMs.map(ms).join(' '),
        'key bits': signature.keyBits,
        'CPU ÷ signature': ratio.toFixed(2),
        'load avg per window': sides.get(alg)!.loads.join(' '),
      },
      target,
      met,
    };
  });
  return [...rows, ...poolRows];
}
