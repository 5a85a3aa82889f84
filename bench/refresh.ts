/**
 * Refresh-token grants with rotation (issue 3 item 9, issue 9, issue 27): a real server
 * (`gatehouse serve` from dist/, its own process) on the embedded store, driven by autocannon
 * over keep-alive connections from this process — first 1 connection (sequential), then 8 at once.
 * `npm run bench -- token` is the same scenario (its name before issue 27).
 *
 * Seeding goes through the public API: one person signs up, then code flows with
 * `openid offline_access` give one refresh-token family each. The live tokens wait in a pool:
 * each request takes one, and its answer puts the successor back, so every grant presents the
 * newest token of its family exactly once — a real rotation (one joined read, a conditional
 * update, an insert and one RS256 signature), never a reuse.
 *
 * Judged at 8 connections (issue 27): the server's CPU per grant (every thread, /proc) at most
 * 1.5 × the cost of its one signature measured in the same run (bench/_signature.ts), p99 ≤ 10 ms,
 * and throughput at least 75 % of the signing limit (the cores ÷ one signature's CPU). A second
 * window of the same load, profiled, splits the CPU into signing, SQLite, HTTP and the rest
 * (bench/_profile.ts, bench/_cost.ts); it is not part of the figures above.
 *
 * Then what the Prometheus counting costs a grant: the same load with counting switched off and on,
 * window by window, on this server (bench/_metrics-cost.ts; issue 36: ≤ 2 %).
 *
 * Last, the same load against the floor (bench/_lean-refresh.mjs): the same grant on the same
 * database and key with nothing but node:http, prepared statements and the pool signature, in a
 * process started like the server. Its row is a reference; the gap to it is what Gatehouse's own
 * structure costs.
 *
 * `-- refresh --db postgres --instances N` measures PostgreSQL mode instead, beside SQLite in the
 * same run (bench/_refresh-postgres.ts). `-- refresh --alg RS256,ES256,EdDSA` measures an
 * application of each signing algorithm on one server instead, each against its own signature
 * (bench/_refresh-algorithms.ts, issue 38).
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchResult, Scenario } from './run.js';
import { SERVE_ENV, serveNodeArgs } from '../server/cli/launch.js';
import { codeFlow, cpuSample, createApplication, loadFigures, peakRssDuring, peakRssMiB, refreshLoad, signUp, startBenchServer, type BenchServer, type CannonRun } from './_server.js';
import { cost, costFigures, perOpOrThrow, type Cost } from './_cost.js';
import { mainThreadShares, profiled } from './_profile.js';
import { signatureCost, signingInputOf } from './_signature.js';
import { benchEngine } from './_postgres.js';
import { refreshOnPostgres } from './_refresh-postgres.js';
import { metricsCountingCost } from './_metrics-cost.js';
import { benchAlgs, refreshByAlgorithm } from './_refresh-algorithms.js';
import { STRENGTH_WORKER_IDLE_MS } from '../server/accounts/password-strength.js';

const CONNECTIONS = 8;
/**
 * Families in the pool: more than connections, so a request never waits for a token, and enough
 * for every timed run (3 here, 12 windows in bench/_metrics-cost.ts): a run that stops on time
 * drops the answers in flight, and with them up to one successor token per connection.
 */
const FAMILIES = 20 * CONNECTIONS;
const SEQUENTIAL_GRANTS = 1_000;
const CONCURRENT_SECONDS = 5;
const PROFILED_SECONDS = 3;
const WARM_UP_GRANTS = 2_000;
const TARGET_RATIO = 1.5;
const TARGET_P99_MS = 10;
const TARGET_SHARE_OF_LIMIT = 0.75;
const CLIENT = 'bench';

function refreshRow(name: string, run: CannonRun, connections: number, perOp: { totalMs: number; mainMs: number }, c: Cost | undefined): BenchResult {
  const { figures, ...timing } = loadFigures(run.latencies, run.result.duration, perOp, run.clientCpuMs);
  const extra = { connections, ...figures };
  if (!c) return { scenario: name, ...timing, extra, target: 'reference', met: true };
  const share = timing.throughput / c.signingLimit;
  return {
    scenario: name,
    ...timing,
    cost: c,
    measured: `${c.ratio.toFixed(2)} × signature (${c.cpuMs.toFixed(3)} / ${c.signatureMs.toFixed(3)} ms), ${Math.round(100 * share)} % of ${Math.round(c.signingLimit).toLocaleString('en')}/s`,
    extra: { ...extra, ...costFigures(c), 'share of signing limit': share.toFixed(3) },
    target: `CPU ≤ ${TARGET_RATIO} × signature, p99 ≤ ${TARGET_P99_MS} ms, ≥ ${100 * TARGET_SHARE_OF_LIMIT} % of signing limit`,
    met: c.ratio <= TARGET_RATIO && timing.p99Ms <= TARGET_P99_MS && share >= TARGET_SHARE_OF_LIMIT,
  };
}

/** Starts the lean floor on the bench server's data directory; resolves once it listens. */
async function startLean(server: BenchServer): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const script = join(dirname(fileURLToPath(import.meta.url)), '_lean-refresh.mjs');
  const child = spawn(process.execPath, [...serveNodeArgs(process.env), script, server.dataDir, server.url], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, ...SERVE_ENV },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the lean floor exited with ${code}`)));
    child.on('message', (m: { type?: string; url?: string }) => m.type === 'ready' && m.url && resolve(m.url));
  });
  return {
    url,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function run(): Promise<BenchResult[]> {
  const { engine, instances } = benchEngine();
  if (engine === 'postgres') return refreshOnPostgres(instances);
  const algs = benchAlgs();
  const server = await startBenchServer('refresh', { GATEHOUSE_BENCH_METRICS: '1' });
  try {
    if (algs) return await refreshByAlgorithm(server, algs);
    await createApplication(server, CLIENT);
    const cookie = await signUp(server, 'bench@example.com', CLIENT);
    const signedUpAt = Date.now();
    const pool: string[] = [];
    let accessToken = '';
    for (let i = 0; i < FAMILIES; i++) {
      const tokens = await codeFlow(server, CLIENT, cookie, 'openid offline_access');
      pool.push(tokens.refresh_token!);
      accessToken = tokens.access_token!; // the same claims a refresh grant signs
    }

    await refreshLoad(server, CLIENT, pool, { connections: CONNECTIONS, amount: WARM_UP_GRANTS });
    // The sign-up's password-strength worker (zxcvbn's dictionaries, ~85 MB) lives on for
    // STRENGTH_WORKER_IDLE_MS after it: the setting of a password, not the refreshing measured
    // here. The windows start once it has ended (a quiet machine reaches them sooner than that).
    const workerLeft = signedUpAt + STRENGTH_WORKER_IDLE_MS + 1_000 - Date.now();
    if (workerLeft > 0) await new Promise((resolve) => setTimeout(resolve, workerLeft));

    const cpu0 = server.cpu();
    const sequential = await refreshLoad(server, CLIENT, pool, { connections: 1, amount: SEQUENTIAL_GRANTS });
    const cpu1 = server.cpu();
    // Issue 45: ≤ 160 MB resident while refreshing: VmRSS sampled through this window, beside VmHWM
    // (the most the server has held since it started, its sign-up and code flows included).
    const { result: concurrent, peakMiB: windowPeakMiB } = await peakRssDuring(server.pid, () =>
      refreshLoad(server, CLIENT, pool, { connections: CONNECTIONS, duration: CONCURRENT_SECONDS }),
    );
    const cpu2 = server.cpu();
    const peakMiB = peakRssMiB(server.pid);
    const { profile } = await profiled(server, () => refreshLoad(server, CLIENT, pool, { connections: CONNECTIONS, duration: PROFILED_SECONDS }));
    const signature = await signatureCost(server.dataDir, signingInputOf(accessToken));
    // Prometheus counting on against off, on this same server (bench/_metrics-cost.ts).
    const counting = await metricsCountingCost(server, CLIENT, pool, CONNECTIONS);

    const perOp = perOpOrThrow(cpu1, cpu2, concurrent.latencies.length);

    // The floor, on the same database (the server stays up, idle) with the same token pool.
    const lean = await startLean(server);
    let floor: { run: CannonRun; perOp: { totalMs: number; mainMs: number } };
    try {
      const target = { ...server, url: lean.url };
      await refreshLoad(target, CLIENT, pool, { connections: CONNECTIONS, amount: WARM_UP_GRANTS });
      const before = cpuSample(lean.pid);
      const leanRun = await refreshLoad(target, CLIENT, pool, { connections: CONNECTIONS, duration: CONCURRENT_SECONDS });
      floor = { run: leanRun, perOp: perOpOrThrow(before, cpuSample(lean.pid), leanRun.latencies.length) };
    } finally {
      await lean.stop();
    }

    const measured = refreshRow('token refresh, 8 connections', concurrent, CONNECTIONS, perOp, cost(perOp, mainThreadShares(profile), signature, 1));
    const floorRatio = floor.perOp.totalMs / signature.signMs;
    measured.extra = {
      ...measured.extra,
      'server peak RSS MB (sampled during this window)': Number(((windowPeakMiB * 2 ** 20) / 1e6).toFixed(1)),
      'server peak RSS MB (VmHWM, start to the end of this window)': Number(((peakMiB * 2 ** 20) / 1e6).toFixed(1)),
      'server peak RSS MB (VmHWM, whole run)': Number(((peakRssMiB(server.pid) * 2 ** 20) / 1e6).toFixed(1)),
    };
    measured.extra = { ...measured.extra, 'lean floor ms/op': floor.perOp.totalMs.toFixed(3), 'above the floor': (perOp.totalMs / floor.perOp.totalMs).toFixed(2) };
    const floorRow = refreshRow('lean floor (node:http + SQLite + pool), 8 connections', floor.run, CONNECTIONS, floor.perOp, undefined);
    floorRow.measured = `${floorRatio.toFixed(2)} × signature (${floor.perOp.totalMs.toFixed(3)} / ${signature.signMs.toFixed(3)} ms); Gatehouse ${(perOp.totalMs / floor.perOp.totalMs).toFixed(2)} × this`;
    return [
      refreshRow('token refresh, sequential', sequential, 1, perOpOrThrow(cpu0, cpu1, sequential.latencies.length), undefined),
      measured,
      floorRow,
      counting,
    ];
  } finally {
    await server.stop();
  }
}

export const scenario: Scenario = {
  name: 'refresh',
  description: 'refresh-token grants with rotation, sequential and over 8 keep-alive connections, against the cost of their signature',
  run,
};
