/**
 * Shared pieces of the benchmark scenarios that measure a real server over HTTP (the leading
 * underscore keeps bench/run.ts from taking this file for a scenario):
 * - `startBenchServer()` spawns `gatehouse serve` from dist/ in its own process on a fresh data
 *   directory (`BENCH_PROF=1` adds `--cpu-prof` into /tmp/prof, `BENCH_NODE_ARGS` any node flags
 *   after the launch settings), so the load generator never
 *   shares the server's event loop;
 * - `server.cpu()` reads the server's CPU time from /proc, split into the main thread (the
 *   event loop: the serial bottleneck) and all threads (plus libuv's pool, where signing runs).
 *   CPU per operation is the figure that holds on a busy machine; throughput is not;
 * - `createApplication`, `signUp`, `authorizeCode`, `exchangeCode`: the seed steps, all over
 *   HTTP through the public API (no back door into the store);
 * - `cannon()`: autocannon as a promise, with every response's latency (float ms) collected.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { SERVER_BUNDLE } from '../server/cli/launch.js';

export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
export const BENCH_PASSWORD = 'correct horse battery staple';
export const BENCH_REDIRECT = 'http://127.0.0.1:5173/callback';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat (100 on Linux). */
const TICKS_PER_SECOND = 100;

export interface CpuSample {
  /** Every thread of the server process, in ms. */
  totalMs: number;
  /** The main thread (the event loop) alone, in ms. */
  mainMs: number;
}

function ticksMs(statFile: string): number {
  const fields = readFileSync(statFile, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND; // utime + stime
}

/** CPU used by the process so far (Linux /proc), or undefined elsewhere. */
export function cpuSample(pid: number): CpuSample | undefined {
  try {
    return { totalMs: ticksMs(`/proc/${pid}/stat`), mainMs: ticksMs(`/proc/${pid}/task/${pid}/stat`) };
  } catch {
    return undefined;
  }
}

/** CPU used between two samples, per operation, in ms (undefined when not measurable). */
export function cpuPerOp(before: CpuSample | undefined, after: CpuSample | undefined, ops: number) {
  if (!before || !after || ops <= 0) return undefined;
  return { totalMs: (after.totalMs - before.totalMs) / ops, mainMs: (after.mainMs - before.mainMs) / ops };
}

/** The "<field>: <n> kB" lines of /proc/<pid>/status we use, in bytes, from one read. */
function statusBytes(pid: number): { VmRSS: number; RssAnon: number; RssFile: number; VmHWM: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1]) * 1024;
  return { VmRSS: field('VmRSS'), RssAnon: field('RssAnon'), RssFile: field('RssFile'), VmHWM: field('VmHWM') };
}

/** The highest resident set size the process has had (VmHWM), in MiB; NaN once it has exited. */
export function peakRssMiB(pid: number): number {
  try {
    return statusBytes(pid).VmHWM / 2 ** 20;
  } catch {
    return NaN;
  }
}

/**
 * Runs `work` while sampling the process's resident set every `everyMs`: the highest VmRSS seen, in
 * MiB (VmHWM cannot say what one window held: it counts from the process's start).
 */
export async function peakRssDuring<T>(pid: number, work: () => Promise<T>, everyMs = 50): Promise<{ result: T; peakMiB: number }> {
  let peak = 0;
  const sample = () => {
    try {
      peak = Math.max(peak, statusBytes(pid).VmRSS / 2 ** 20);
    } catch {
      // exited: keep what was seen
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  try {
    const result = await work();
    sample();
    return { result, peakMiB: peak };
  } finally {
    clearInterval(timer);
  }
}

/** Resident set size of a process in MiB (VmRSS in /proc/<pid>/status). */
export function rssMiB(pid: number): number {
  return statusBytes(pid).VmRSS / 2 ** 20;
}

/**
 * The resident set, and its split into anonymous memory (heaps, stacks, malloc: what the process
 * alone costs) and mapped files (the node binary and shared libraries, shared with the page cache).
 */
export function rssParts(pid: number): { rssBytes: number; anonBytes: number; fileBytes: number } {
  const status = statusBytes(pid);
  return { rssBytes: status.VmRSS, anonBytes: status.RssAnon, fileBytes: status.RssFile };
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The 1-minute load average, for the table: figures mean little when other work fills the cores. */
export const loadAverage = () => loadavg()[0]!.toFixed(1);

/**
 * The common figures of a load run, for a BenchResult: throughput, p50/p99 of `latencies`
 * (sorted, one per operation), and under `figures` (for `extra`) the server's CPU per operation —
 * all threads, and the main thread alone, the serial part that caps throughput at
 * 1000 / main-thread ms per second — the load generator's own CPU per operation (it shares the
 * cores) and the load average.
 */
export function loadFigures(latencies: number[], seconds: number, cpu: ReturnType<typeof cpuPerOp>, clientCpuMs: number) {
  const ops = latencies.length;
  return {
    throughput: ops / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    ...(cpu ? { cpuSecondsPer1k: cpu.totalMs } : {}),
    figures: {
      operations: ops,
      'server CPU ms/op': cpu ? cpu.totalMs.toFixed(3) : 'n/a',
      'main-thread ms/op': cpu ? cpu.mainMs.toFixed(3) : 'n/a',
      'load generator CPU ms/op': (clientCpuMs / ops).toFixed(3),
      'load avg': loadAverage(),
    },
  };
}

export interface BenchServer {
  url: string;
  pid: number;
  /** The server's data directory (the signature bench reads its signing key there). */
  dataDir: string;
  cpu(): CpuSample | undefined;
  /** Resident memory of the server process in MiB (Linux /proc). */
  rssMiB(): number;
  /** The same in bytes, and split into anonymous and file-backed pages (Linux /proc). */
  rssParts(): { rssBytes: number; anonBytes: number; fileBytes: number };
  /**
   * Sends an IPC message and resolves with the first answer of the same `type` (the server's
   * bench metrics, on with GATEHOUSE_BENCH_METRICS=1: see server/cli/bench-metrics.ts).
   */
  ask<T>(message: { type: string; [field: string]: unknown }): Promise<T>;
  /** An admin API call with the bench's admin token; JSON in and out. */
  admin(method: string, path: string, body?: unknown): Promise<Response>;
  stop(): Promise<void>;
}

/**
 * Spawns the built `gatehouse serve` on `dataDir`, which applies its launch settings to itself
 * (server/cli/launch.ts); `ready` resolves with its URL once it says so over IPC. `entry` is the
 * bundle, or `bin/gatehouse.js` to start it as the installed command does.
 */
export function spawnServe(dataDir: string, env: Record<string, string> = {}, nodeArgs: string[] = [], port = 0, entry: string = SERVER_BUNDLE, serveArgs: string[] = []) {
  const child: ChildProcess = spawn(
    process.execPath,
    [...nodeArgs, join(root, entry), 'serve', '--data-dir', dataDir, '--port', String(port), ...serveArgs],
    // The admin token through the environment: `serve` refuses it on the command line (ps shows that).
    // BENCH_SERVER_LOG=FILE keeps the server's log lines (warnings and errors) there.
    {
      stdio: ['ignore', process.env.BENCH_SERVER_LOG ? openSync(process.env.BENCH_SERVER_LOG, 'a') : 'ignore', 'inherit', 'ipc'],
      env: { ...process.env, LOG_LEVEL: 'warn', ADMIN_TOKEN: BENCH_ADMIN_TOKEN, ...env },
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited with ${code} before it was ready`)));
    child.on('message', (m: { type?: string; url?: string }) => {
      if (m.type === 'ready' && m.url) resolve(m.url);
    });
  });
  return { child, exited, ready };
}

/**
 * Spawns `gatehouse serve` (dist/) on a fresh data directory and waits for its ready message.
 * `port` fixes the port (with `GATEHOUSE_ISSUER` in `env`, e.g. a `localhost` issuer for passkeys).
 */
export async function startBenchServer(name: string, env: Record<string, string> = {}, port = 0): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), `gatehouse-bench-${name}-`));
  return serveDataDir(dataDir, env, { removeOnStop: true, port });
}

/** Spawns `gatehouse serve` (dist/) on `dataDir` (on `port`, 0: a free one) and waits for its ready message. */
export async function serveDataDir(
  dataDir: string,
  env: Record<string, string> = {},
  /**
   * `listenUrl`: talk to the instance's own address even when GATEHOUSE_ISSUER names another (a
   * balancer's); `entry`: what node runs (the bundle, or `bin/gatehouse.js` as the installed
   * command); `serveArgs`: more `serve` options (`--ldap`).
   */
  options: { removeOnStop: boolean; port?: number; listenUrl?: boolean; entry?: string; serveArgs?: string[] } = { removeOnStop: false },
): Promise<BenchServer> {
  const port = options.port ?? 0;
  const profile = process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : [];
  // BENCH_NODE_ARGS: extra node/V8 flags for the server (to try some; `--max-semi-space-size=1`
  // with MALLOC_MMAP_THRESHOLD_=131072 in the environment is the launch settings' command-line form).
  const extra = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const { child, exited, ready } = spawnServe(dataDir, env, [...profile, ...extra], port, options.entry, options.serveArgs);
  const url = (!options.listenUrl && env.GATEHOUSE_ISSUER) || (await ready);
  await ready;
  const pid = child.pid!;
  return {
    url,
    pid,
    dataDir,
    cpu: () => cpuSample(pid),
    rssMiB: () => rssMiB(pid),
    rssParts: () => rssParts(pid),
    ask: <T>(message: { type: string; [field: string]: unknown }) =>
      new Promise<T>((resolve) => {
        const onMessage = (answer: { type?: string }) => {
          if (answer.type !== message.type) return;
          child.off('message', onMessage);
          resolve(answer as T);
        };
        child.on('message', onMessage);
        child.send(message);
      }),
    admin: (method, path, body) =>
      fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    async stop() {
      child.kill('SIGTERM');
      await exited;
      if (options.removeOnStop) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * `GET path` (default /healthz) every `everyMs` until stopped; `stop()` resolves with the sorted
 * latencies. Scenarios that compare engines probe a path answered from memory on both: /healthz
 * asks the database, which on PostgreSQL adds a round trip and a query per probe to what is measured.
 */
export function probeHealthz(server: BenchServer, everyMs: number, path = '/healthz'): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(`${server.url}${path}`);
      await res.arrayBuffer();
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return latencies.sort((a, b) => a - b);
    },
  };
}

async function expectStatus(res: Response, status: number, what: string): Promise<Response> {
  if (res.status !== status) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`);
  return res;
}

/** A public (`spa`) application with open sign-up and the bench redirect URI (`extra` adds fields to the create). */
export async function createApplication(server: BenchServer, id: string, extra: Record<string, unknown> = {}): Promise<{ id: string; audience: string }> {
  const audience = `https://${id}.example.com/api`;
  const body = { id, name: id, audience, clientType: 'spa', redirectUris: [BENCH_REDIRECT], authPolicy: { signup_policy: 'open' }, ...extra };
  await expectStatus(await server.admin('POST', '/api/admin/applications', body), 201, `creating application ${id}`);
  return { id, audience };
}

/** Signs a new person up for the application; returns the session's `Cookie` header value. */
export async function signUp(server: BenchServer, email: string, applicationId: string): Promise<string> {
  const res = await fetch(`${server.url}/api/auth/sign-up/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: BENCH_PASSWORD, name: email.split('@')[0], applicationId }),
  });
  await expectStatus(res, 201, `signing up ${email}`);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='));
  if (!cookie) throw new Error(`signing up ${email}: no session cookie`);
  return cookie.split(';')[0]!;
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The authorize request path (query included) of a PKCE code flow. */
export function authorizePath(clientId: string, scope: string, challenge: string): string {
  const query = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: BENCH_REDIRECT, scope,
    state: randomBytes(8).toString('base64url'), nonce: randomBytes(8).toString('base64url'),
    code_challenge: challenge, code_challenge_method: 'S256',
  });
  return `/api/auth/oauth2/authorize?${query.toString()}`;
}

/** The `code` of an authorize answer's Location (302 to the redirect URI), or an error. */
export function codeFrom(status: number, location: unknown): string {
  const code = status === 302 && typeof location === 'string' ? new URL(location).searchParams.get('code') : null;
  if (!code) throw new Error(`authorize did not answer with a code: HTTP ${status} ${String(location)}`);
  return code;
}

/** The token-exchange form body of a PKCE code flow (public client). */
export function codeExchangeBody(clientId: string, code: string, verifier: string): string {
  return new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: BENCH_REDIRECT, client_id: clientId, code_verifier: verifier }).toString();
}

/** One authorization-code flow with the session cookie; returns the token response. */
export async function codeFlow(server: BenchServer, clientId: string, cookie: string, scope: string): Promise<Record<string, string>> {
  const { verifier, challenge } = pkcePair();
  const authorized = await fetch(`${server.url}${authorizePath(clientId, scope, challenge)}`, { redirect: 'manual', headers: { cookie } });
  const code = codeFrom(authorized.status, authorized.headers.get('location'));
  const res = await fetch(`${server.url}/api/auth/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: codeExchangeBody(clientId, code, verifier),
  });
  await expectStatus(res, 200, 'code exchange');
  return (await res.json()) as Record<string, string>;
}

export interface CannonRun {
  result: autocannon.Result;
  /** Every response's latency in ms (float), sorted. */
  latencies: number[];
  /** CPU this (load-generating) process used during the run, in ms: it shares the cores too. */
  clientCpuMs: number;
}

/**
 * Runs autocannon against the server and collects each response's latency (autocannon's own
 * histogram has 1 ms resolution). Rejects when a connection failed or timed out; scenarios
 * check statuses and bodies in their `onResponse` (a benchmark of errors measures nothing).
 */
export function cannon(options: autocannon.Options): Promise<CannonRun> {
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => {
      if (error) return reject(error);
      if (result.errors || result.timeouts) return reject(new Error(`${result.errors} connection errors, ${result.timeouts} timeouts`));
      const used = process.cpuUsage(cpuBefore);
      resolve({ result, latencies: latencies.sort((a, b) => a - b), clientCpuMs: (used.user + used.system) / 1000 });
    });
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => latencies.push(responseTime));
  });
}

/**
 * Refresh grants of `clientId` (a public client) over keep-alive connections, for `amount` grants
 * or `duration` s. Each request takes a live token from `pool` and its answer puts the successor
 * back, so every grant is a real rotation, never a reuse.
 */
export async function refreshLoad(
  server: BenchServer,
  clientId: string,
  pool: string[],
  options: Partial<autocannon.Options>,
  /** Hears every access token issued (the userinfo bench needs many distinct ones). */
  onAccessToken?: (token: string) => void,
): Promise<CannonRun> {
  let failure: string | undefined;
  const run = await cannon({
    url: server.url,
    ...options,
    requests: [
      {
        method: 'POST',
        path: '/api/auth/oauth2/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        setupRequest(request) {
          const token = pool.shift();
          if (!token) throw new Error('the token pool ran dry: a grant failed');
          return { ...request, body: `grant_type=refresh_token&client_id=${clientId}&refresh_token=${encodeURIComponent(token)}` };
        },
        onResponse(status, body) {
          const answer = status === 200 ? (JSON.parse(body) as { refresh_token?: string; access_token?: string }) : undefined;
          if (answer?.refresh_token) pool.push(answer.refresh_token);
          else failure ??= `HTTP ${status} ${body}`;
          if (answer?.access_token) onAccessToken?.(answer.access_token);
        },
      },
    ],
  });
  if (failure) throw new Error(`refresh failed: ${failure}`);
  return run;
}

