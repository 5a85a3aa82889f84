/**
 * `npm run bench -- refresh --db postgres --instances N` (issue 26): refresh-token grants with
 * rotation on PostgreSQL across N built server instances on one database, beside the same load on
 * the embedded SQLite store in the same run.
 *
 * Each engine gets a fresh set-up seeded over HTTP (an application, a person, one refresh family
 * per pool slot), a warm-up, then a timed window of CONNECTIONS keep-alive connections per
 * instance, every instance taking its share from one token pool (each answer puts the successor
 * back, so every grant is a real rotation). Measured per window: grants/s, p50/p99, and CPU per
 * grant from /proc — the Gatehouse processes (every thread) and, on PostgreSQL, the PostgreSQL
 * server's processes (postmaster and backends) separately. With N > 1, PostgreSQL is also measured
 * with only the first instance taking load, so the run shows how throughput grows from 1 to N.
 *
 * Target (issue 26, 2 cores): across two instances ≥ 1,500 grants/s with p99 ≤ 25 ms.
 */
import type { BenchResult } from './run.js';
import { codeFlow, createApplication, loadFigures, refreshLoad, signUp, startBenchServer, type BenchServer, type CannonRun } from './_server.js';
import { instancesCpu, startBenchPostgres, startInstances, type BenchPostgres } from './_postgres.js';

/** Connections per instance taking load: the SQLite scenario's 8. */
const CONNECTIONS = 8;
const SECONDS = 5;
const WARM_UP_GRANTS = 2_000;
const TARGET_RPS = 1_500;
const TARGET_P99_MS = 25;
const CLIENT = 'bench';

interface Window {
  run: CannonRun;
  /** Gatehouse CPU per grant (all its processes, every thread), ms. */
  gatehouseMs: number;
  mainMs: number;
  /** PostgreSQL server CPU per grant, ms (PostgreSQL only). */
  postgresMs?: number;
}

/** Seeds one refresh family per pool slot through the first instance; returns the pool. */
async function seed(server: BenchServer, families: number): Promise<string[]> {
  await createApplication(server, CLIENT);
  const cookie = await signUp(server, 'bench@example.com', CLIENT);
  const pool: string[] = [];
  for (let i = 0; i < families; i++) pool.push((await codeFlow(server, CLIENT, cookie, 'openid offline_access')).refresh_token!);
  return pool;
}

/** Runs the load on every server in `loaded` at once, all from one pool; merges the answers. */
async function spread(loaded: BenchServer[], pool: string[], options: { duration?: number; amount?: number }): Promise<CannonRun> {
  const runs = await Promise.all(
    loaded.map((s) =>
      refreshLoad(s, CLIENT, pool, { connections: CONNECTIONS, ...(options.amount ? { amount: Math.ceil(options.amount / loaded.length) } : { duration: options.duration }) }),
    ),
  );
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const duration = Math.max(...runs.map((r) => r.result.duration));
  // The first run's result stands for all; only its duration is read, set to the longest.
  return { result: { ...runs[0]!.result, duration }, latencies, clientCpuMs: runs.reduce((sum, r) => sum + r.clientCpuMs, 0) };
}

async function window(all: BenchServer[], loaded: BenchServer[], pool: string[], pg?: BenchPostgres): Promise<Window> {
  await spread(loaded, pool, { amount: WARM_UP_GRANTS });
  const before = instancesCpu(all);
  const pgBefore = pg?.cpuMs();
  const run = await spread(loaded, pool, { duration: SECONDS });
  const after = instancesCpu(all);
  const pgAfter = pg?.cpuMs();
  if (!before || !after) throw new Error('server CPU could not be read from /proc (Linux only)');
  const grants = run.latencies.length;
  return {
    run,
    gatehouseMs: (after.totalMs - before.totalMs) / grants,
    mainMs: (after.mainMs - before.mainMs) / grants,
    ...(pg ? { postgresMs: (pgAfter! - pgBefore!) / grants } : {}),
  };
}

function row(name: string, w: Window, instances: number, target?: { rps: number; p99Ms: number }): BenchResult {
  const { figures, ...timing } = loadFigures(w.run.latencies, w.run.result.duration, { totalMs: w.gatehouseMs, mainMs: w.mainMs }, w.run.clientCpuMs);
  const total = w.gatehouseMs + (w.postgresMs ?? 0);
  const measured =
    w.postgresMs === undefined
      ? `CPU ${w.gatehouseMs.toFixed(3)} ms/grant`
      : `CPU ${total.toFixed(3)} ms/grant = Gatehouse ${w.gatehouseMs.toFixed(3)} + PostgreSQL ${w.postgresMs.toFixed(3)}`;
  return {
    scenario: name,
    ...timing,
    cpuSecondsPer1k: total,
    measured,
    extra: {
      instances,
      connections: CONNECTIONS * instances,
      ...figures,
      'Gatehouse CPU ms/grant': w.gatehouseMs.toFixed(3),
      ...(w.postgresMs === undefined ? {} : { 'PostgreSQL CPU ms/grant': w.postgresMs.toFixed(3) }),
    },
    target: target ? `≥ ${target.rps}/s, p99 ≤ ${target.p99Ms} ms` : 'reference',
    met: target ? timing.throughput >= target.rps && timing.p99Ms <= target.p99Ms : true,
  };
}

async function onSqlite(): Promise<Window> {
  const server = await startBenchServer('refresh-sqlite');
  try {
    const pool = await seed(server, 6 * CONNECTIONS);
    return await window([server], [server], pool);
  } finally {
    await server.stop();
  }
}

export async function refreshOnPostgres(instances: number): Promise<BenchResult[]> {
  const sqlite = await onSqlite();
  const pg = await startBenchPostgres();
  try {
    const servers = await startInstances('refresh-pg', instances, pg.url);
    try {
      const pool = await seed(servers[0]!, 6 * CONNECTIONS * instances);
      const rows = [row('token refresh, SQLite, 1 instance (same run)', sqlite, 1)];
      let single: Window | undefined;
      if (instances > 1) {
        single = await window(servers, [servers[0]!], pool, pg);
        rows.push(row('token refresh, PostgreSQL, load on 1 instance', single, 1));
      }
      const all = await window(servers, servers, pool, pg);
      const judged = row(`token refresh, PostgreSQL, ${instances} instance${instances > 1 ? 's' : ''}`, all, instances, instances > 1 ? { rps: TARGET_RPS, p99Ms: TARGET_P99_MS } : undefined);
      const sqliteRps = sqlite.run.latencies.length / sqlite.run.result.duration;
      judged.extra = {
        ...judged.extra,
        'throughput vs SQLite': (judged.throughput / sqliteRps).toFixed(2),
        ...(single ? { [`throughput ${instances} ÷ 1 instance`]: (judged.throughput / (single.run.latencies.length / single.run.result.duration)).toFixed(2) } : {}),
      };
      rows.push(judged);
      return rows;
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  } finally {
    pg.stop();
  }
}
