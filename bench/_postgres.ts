/**
 * PostgreSQL mode in the benchmarks (issue 26): `npm run bench -- refresh --db postgres
 * --instances 2` (bench/run.ts passes the flags as BENCH_DB and BENCH_INSTANCES).
 * - `startBenchPostgres()`: Debian's PostgreSQL 15 started as the tests start it
 *   (test/helpers/postgres-server.ts), but durable (fsync on; commits asynchronous, like SQLite's
 *   WAL with synchronous=NORMAL), with one database;
 * - `postgresCpuMs(pid)`: CPU of the PostgreSQL server — the postmaster, its live children (one
 *   backend per pooled connection, the WAL writer, the checkpointer, …) and the children it has
 *   already reaped — from /proc, so CPU per operation is split between Gatehouse and PostgreSQL;
 * - `startInstances(n)`: n built `gatehouse serve` processes on that database, each on its own
 *   data directory, with one issuer, admin token and key secret, as deployed behind a balancer.
 */
import { readdirSync, readFileSync, mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/helpers/free-port.js';
import { startPostgres, type PostgresServer } from '../test/helpers/postgres-server.js';
import { cpuSample, serveDataDir, type BenchServer, type CpuSample } from './_server.js';

export type Engine = 'sqlite' | 'postgres';

/** The engine and instance count asked for on the command line. */
export function benchEngine(): { engine: Engine; instances: number } {
  const engine = (process.env.BENCH_DB ?? 'sqlite') as Engine;
  if (engine !== 'sqlite' && engine !== 'postgres') throw new Error(`--db must be sqlite or postgres, got "${engine}"`);
  const instances = Number(process.env.BENCH_INSTANCES ?? '1');
  if (!Number.isInteger(instances) || instances < 1) throw new Error(`--instances must be a whole number of at least 1, got "${process.env.BENCH_INSTANCES}"`);
  if (engine === 'sqlite' && instances > 1) throw new Error('--instances above 1 needs --db postgres: SQLite is one process');
  return { engine, instances };
}

export interface BenchPostgres {
  server: PostgresServer;
  url: string;
  /** CPU of the whole PostgreSQL server so far, in ms. */
  cpuMs(): number;
  stop(): void;
}

const TICKS_PER_SECOND = 100;

function statFields(pid: number | string): string[] {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
}

/**
 * utime + stime of the postmaster and its live children, plus cutime + cstime (its reaped
 * children: a backend whose connection closed). A process that exits between two samples is
 * counted once it is reaped.
 */
export function postgresCpuMs(postmaster: number): number {
  const own = statFields(postmaster);
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = statFields(entry);
      if (Number(fields[1]) === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone meanwhile
    }
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

export async function startBenchPostgres(): Promise<BenchPostgres> {
  const server = await startPostgres({ durable: true });
  try {
    const url = await server.createDatabase('gatehouse_bench');
    return { server, url, cpuMs: () => postgresCpuMs(server.pid), stop: () => server.stop() };
  } catch (error) {
    server.stop();
    throw error;
  }
}

/** The settings every instance on the shared database gets (plus the scenario's own `env`). */
export function instanceEnv(databaseUrl: string, issuer: string, keySecret: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    GATEHOUSE_DATABASE_URL: databaseUrl,
    GATEHOUSE_KEY_SECRET: keySecret,
    GATEHOUSE_ISSUER: issuer,
    ...env,
  };
}

/**
 * `count` instances on `databaseUrl`, started together (the first start migrates, under the
 * advisory lock). The issuer is the first instance's address: the seed steps go there, and every
 * instance names the same one.
 */
export async function startInstances(name: string, count: number, databaseUrl: string, env: Record<string, string> = {}): Promise<BenchServer[]> {
  const keySecret = randomBytes(32).toString('base64url');
  // The issuer must be fixed before any instance starts: a port chosen now for the first one.
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const settings = instanceEnv(databaseUrl, issuer, keySecret, env);
  const dir = () => mkdtempSync(join(tmpdir(), `gatehouse-bench-${name}-`));
  const started = await Promise.allSettled(
    Array.from({ length: count }, (_, i) => serveDataDir(dir(), settings, { removeOnStop: true, listenUrl: true, ...(i === 0 ? { port } : {}) })),
  );
  const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all(servers.map((s) => s.stop()));
    throw failed.reason;
  }
  return servers;
}

/** CPU of several Gatehouse processes together (every thread), in ms. */
export function instancesCpu(servers: BenchServer[]): CpuSample | undefined {
  let totalMs = 0;
  let mainMs = 0;
  for (const s of servers) {
    const sample = cpuSample(s.pid);
    if (!sample) return undefined;
    totalMs += sample.totalMs;
    mainMs += sample.mainMs;
  }
  return { totalMs, mainMs };
}
