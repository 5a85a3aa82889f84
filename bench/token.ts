/**
 * Refresh-token grants with rotation (issue 3 item 9, issue 9): a real server (`gatehouse serve`
 * from dist/, its own process) on the embedded store, driven by autocannon over keep-alive
 * connections — first 1 connection (sequential), then 8 at once.
 *
 * Seeding goes through the public API: one person signs up, then code flows with
 * `openid offline_access` give one refresh-token family each. The live tokens wait in a pool:
 * each request takes one, and its answer puts the successor back, so every grant presents the
 * newest token of its family exactly once — a real rotation (one joined read, a conditional
 * update, an insert and one RS256 signature), never a reuse.
 *
 * Target (2 cores): ≥ 1,500 grants/s at 8 connections with p99 ≤ 25 ms.
 */
import type { BenchResult, Scenario } from './run.js';
import {
  codeFlow, cpuPerOp, createApplication, loadFigures, refreshLoad, signUp, startBenchServer, type CannonRun, type CpuSample,
} from './_server.js';

const CONNECTIONS = 8;
/** Families in the pool: more than connections, so a request never waits for a token. */
const FAMILIES = 2 * CONNECTIONS;
const SEQUENTIAL_GRANTS = 1_000;
const CONCURRENT_SECONDS = 5;
const WARM_UP_GRANTS = 500;
const TARGET_RPS = 1_500;
const TARGET_P99_MS = 25;
const CLIENT = 'bench';

function summary(name: string, run: CannonRun, connections: number, checkTarget: boolean, before?: CpuSample, after?: CpuSample): BenchResult {
  const { figures, ...timing } = loadFigures(run.latencies, run.result.duration, cpuPerOp(before, after, run.latencies.length), run.clientCpuMs);
  return {
    scenario: name,
    ...timing,
    extra: { connections, ...figures },
    target: checkTarget ? `≥ ${TARGET_RPS}/s, p99 ≤ ${TARGET_P99_MS} ms` : 'reference',
    met: checkTarget ? timing.throughput >= TARGET_RPS && timing.p99Ms <= TARGET_P99_MS : true,
  };
}

async function run(): Promise<BenchResult[]> {
  const server = await startBenchServer('token');
  try {
    await createApplication(server, CLIENT);
    const cookie = await signUp(server, 'bench@example.com', CLIENT);
    const pool: string[] = [];
    for (let i = 0; i < FAMILIES; i++) {
      const tokens = await codeFlow(server, CLIENT, cookie, 'openid offline_access');
      pool.push(tokens.refresh_token!);
    }

    await refreshLoad(server, CLIENT, pool, { connections: 1, amount: WARM_UP_GRANTS });

    const cpu0 = server.cpu();
    const sequential = await refreshLoad(server, CLIENT, pool, { connections: 1, amount: SEQUENTIAL_GRANTS });
    const cpu1 = server.cpu();
    const concurrent = await refreshLoad(server, CLIENT, pool, { connections: CONNECTIONS, duration: CONCURRENT_SECONDS });
    const cpu2 = server.cpu();

    return [
      summary('token refresh, sequential', sequential, 1, false, cpu0, cpu1),
      summary('token refresh, 8 connections', concurrent, CONNECTIONS, true, cpu1, cpu2),
    ];
  } finally {
    await server.stop();
  }
}

export const scenario: Scenario = {
  name: 'token',
  description: 'refresh-token grants with rotation, sequential and over 8 keep-alive connections',
  run,
};
