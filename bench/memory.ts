/**
 * Idle memory after a light day's use (issues 9 and 45): `npm run bench -- memory`.
 *
 * `gatehouse serve --ldap` is started the way a person starts it, `node bin/gatehouse.js serve`
 * with no launch flags of the bench's own, and every process it keeps alive is measured. The
 * warm-up, over the wire as clients do it:
 * - 20 sign-ups and 20 password sign-ins (argon2 each), one authorize + token (PKCE,
 *   `openid offline_access`) and a refresh, the admin member list, an invitation, the JWKS and
 *   discovery, and the signed webhook deliveries those cause (to a receiver here, waited for);
 * - forward auth: the hand-over of one person to a protected site (start → callback → site
 *   cookie) and 200 checks with that cookie, as Caddy's `forward_auth` sends them;
 * - an LDAP connection: the application's service account and then the person (with an app
 *   password) bind, and each searches, with ldapts;
 * - a Prometheus scrape of /metrics (loopback);
 * - the control panel: its page and every script and style it loads, and the admin API calls of
 *   its overview and lists;
 * then IDLE_MS of idleness. Reported: the resident set (VmRSS) of each process `gatehouse serve`
 * keeps alive and their sum (judged), the server's anonymous and file-backed parts, and over IPC
 * (GATEHOUSE_BENCH_METRICS=1) V8's heap used and total, external memory and array buffers — at
 * ready, right after the warm-up and after the idle time.
 *
 * The floor, in the same run and the same idle time: a bare Node process with Fastify,
 * better-sqlite3 and jose loaded, used once and listening (bench/_memory-floor.mjs). It is
 * started beside the server and measured at the same moment, so both see the same machine.
 *
 * Target: ≤ 64 MB (10^6 bytes) resident for everything `gatehouse serve` keeps alive.
 *
 * Looking into it: BENCH_HEAP_SNAPSHOT=FILE writes the server's heap at ready and after the idle
 * time; BENCH_MEMORY_SMAPS=FILE copies the server's and the floor's /proc/PID/smaps after it.
 */
import { fork } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from 'ldapts';
import type { BenchResult, Scenario } from './run.js';
import type { BenchMetrics } from '../server/cli/bench-metrics.js';
import { BENCH_PASSWORD, BENCH_REDIRECT, codeFlow, createApplication, loadAverage, rssParts, serveDataDir, signUp, type BenchServer } from './_server.js';

const TARGET_MB = 64;
const APP = 'memory-bench';
const SITE = 'site';
const SITE_HOST = 'site.localhost';
const PEOPLE = 20;
const FORWARD_CHECKS = 200;
const MB = 1e6;
/** Idle time before the measurement (issue 45: 40 s). BENCH_MEMORY_IDLE_MS overrides it (trying things). */
const IDLE_MS = Number(process.env.BENCH_MEMORY_IDLE_MS ?? 40_000);

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const mb = (bytes: number) => Number((bytes / MB).toFixed(1));

async function expectOk(res: Response, what: string): Promise<unknown> {
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`);
  return res.headers.get('content-type')?.includes('json') ? res.json() : res.text();
}

/** A webhook receiver that counts the deliveries it is sent (answering 204 to each). */
async function startReceiver(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
  let count = 0;
  const receiver: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received: () => count,
    close: () => new Promise((resolve) => receiver.close(() => resolve())),
  };
}

/** Waits until the receiver has `count` deliveries (the outbox delivers within a second). */
async function awaitDeliveries(received: () => number, count: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (received() < count) {
    if (Date.now() > deadline) throw new Error(`webhooks: ${received()} of ${count} deliveries arrived in 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** One GET naming `host` (fetch cannot set Host); status and headers. */
function get(url: string, host: string, path: string, headers: Record<string, string>) {
  const base = new URL(url);
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
    const req = httpRequest({ host: base.hostname, port: base.port, path, headers: { host, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

const sessionCookie = (res: Response) => res.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='))!.split(';')[0]!;

/** 20 sign-ups and sign-ins, and one of each OAuth and admin flow, as in the first days of use. */
async function accountsAndOAuth(server: BenchServer, webhookUrl: string): Promise<void> {
  await createApplication(server, APP, { webhookUrl, webhookSecret: `whsec_${randomBytes(32).toString('base64')}` });
  for (let i = 0; i < PEOPLE; i++) await signUp(server, `person${i}@example.com`, APP);
  let cookie = '';
  for (let i = 0; i < PEOPLE; i++) {
    const signedIn = await fetch(`${server.url}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `person${i}@example.com`, password: BENCH_PASSWORD, applicationId: APP }),
    });
    await expectOk(signedIn, 'sign-in');
    cookie = sessionCookie(signedIn);
  }
  const tokens = await codeFlow(server, APP, cookie, 'openid offline_access');
  const refreshed = await fetch(`${server.url}/api/auth/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', client_id: APP, refresh_token: tokens.refresh_token! }).toString(),
  });
  await expectOk(refreshed, 'refresh');
  await expectOk(await server.admin('GET', `/api/admin/applications/${APP}/users?limit=50`), 'admin member list');
  const invited = await server.admin('POST', `/api/admin/applications/${APP}/invitations`, { emails: ['invited@example.com'], role: 'member' });
  if (invited.status !== 201) throw new Error(`invitation: HTTP ${invited.status} ${await invited.text()}`);
  await expectOk(await fetch(`${server.url}/api/auth/jwks`), 'JWKS');
  await expectOk(await fetch(`${server.url}/.well-known/openid-configuration`), 'discovery');
}

/** The events above: 20 membership.created, 20 membership.signed_in, one invitation.created. */
const EXPECTED_DELIVERIES = 2 * PEOPLE + 1;

/**
 * A protected site with LDAP on: one person signs up, is handed over to the site and checked
 * FORWARD_CHECKS times; then an LDAP connection binds as the service account and as the person
 * (an app password) and searches.
 */
async function forwardAuthAndLdap(server: BenchServer, ldapPort: number): Promise<void> {
  const created = await server.admin('POST', '/api/admin/applications', {
    id: SITE, name: 'Site', audience: 'https://site.example.com/api', clientType: 'web', redirectUris: [BENCH_REDIRECT],
    authPolicy: { signup_policy: 'open' }, forwardAuth: { hosts: [SITE_HOST] }, ldap: { enabled: true },
  });
  const site = (await expectOk(created, 'creating the site')) as { ldapPassword: string };
  const cookie = await signUp(server, 'site@example.com', SITE);
  const start = await fetch(`${server.url}/api/auth/forward/start?${new URLSearchParams({ rd: `http://${SITE_HOST}/` })}`, { redirect: 'manual', headers: { cookie } });
  const bounce = new URL(start.headers.get('location') ?? 'http://nowhere.invalid/');
  if (start.status !== 302 || bounce.host !== SITE_HOST) throw new Error(`forward start: HTTP ${start.status} ${bounce.href}`);
  // The site's /.gatehouse/start keeps the verifier the code is bound to (issue 49, H6).
  const atHost = await get(server.url, SITE_HOST, `${bounce.pathname}${bounce.search}`, { 'x-forwarded-host': SITE_HOST, 'x-forwarded-proto': 'http' });
  const state = ([] as string[]).concat(atHost.headers['set-cookie'] ?? []).find((c) => c.startsWith('gatehouse_state='))?.split(';')[0];
  if (atHost.status !== 302 || !state) throw new Error(`forward host start: HTTP ${atHost.status}`);
  const again = await fetch(String(atHost.headers.location), { redirect: 'manual', headers: { cookie } });
  const to = new URL(again.headers.get('location') ?? 'http://nowhere.invalid/');
  if (again.status !== 302 || to.host !== SITE_HOST) throw new Error(`forward start: HTTP ${again.status} ${to.href}`);
  const back = await get(server.url, SITE_HOST, `${to.pathname}${to.search}`, { 'x-forwarded-host': SITE_HOST, 'x-forwarded-proto': 'http', cookie: state });
  const siteCookie = ([] as string[]).concat(back.headers['set-cookie'] ?? []).find((c) => c.startsWith('gatehouse_site='))?.split(';')[0];
  if (back.status !== 302 || !siteCookie) throw new Error(`forward callback: HTTP ${back.status}`);
  const host = new URL(server.url).host;
  for (let i = 0; i < FORWARD_CHECKS; i++) {
    const check = await get(server.url, host, '/api/auth/forward', {
      'x-forwarded-proto': 'http', 'x-forwarded-host': SITE_HOST, 'x-forwarded-uri': `/page/${i}`, 'x-forwarded-method': 'GET',
      accept: 'text/html', cookie: siteCookie,
    });
    if (check.status !== 200 || check.headers['remote-user'] !== 'site') throw new Error(`forward check: HTTP ${check.status} ${String(check.headers['remote-user'])}`);
  }

  // The person's username is what the checks named them (Remote-User).
  const me = { username: 'site' };
  const appPassword = (await expectOk(
    await fetch(`${server.url}/api/me/app-passwords`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ applicationId: SITE, name: 'NAS' }) }),
    'app password',
  )) as { password: string };
  const ldap = new Client({ url: `ldap://127.0.0.1:${ldapPort}` });
  try {
    await ldap.bind(`cn=${SITE},ou=services,dc=gatehouse`, site.ldapPassword);
    const everyone = await ldap.search('ou=people,dc=gatehouse', { scope: 'sub', filter: '(objectClass=posixAccount)' });
    if (everyone.searchEntries.length !== 1) throw new Error(`LDAP search as the service: ${everyone.searchEntries.length} entries`);
    await ldap.bind(`uid=${me.username},ou=people,dc=gatehouse`, appPassword.password);
    const self = await ldap.search('ou=people,dc=gatehouse', { scope: 'sub', filter: `(&(objectClass=posixAccount)(uid=${me.username}))`, attributes: ['uid', 'cn', 'mail', 'memberOf'] });
    if (self.searchEntries.length !== 1) throw new Error(`LDAP search as the person: ${self.searchEntries.length} entries`);
  } finally {
    await ldap.unbind();
  }
}

/** A Prometheus scrape, and the control panel: its page, scripts and styles, and its first API calls. */
async function metricsAndPanel(server: BenchServer): Promise<void> {
  const scrape = await fetch(`${server.url}/metrics`);
  if (scrape.status !== 200 || !(await scrape.text()).includes('gatehouse_')) throw new Error(`metrics: HTTP ${scrape.status}`);
  const page = (await expectOk(await fetch(`${server.url}/admin/`), 'panel')) as string;
  const assets = [...page.matchAll(/(?:src|href)="(\/admin\/[^"]+)"/g)].map((m) => m[1]!);
  if (!assets.length) throw new Error('panel: no scripts or styles in the page');
  for (const asset of assets) await expectOk(await fetch(`${server.url}${asset}`), `panel asset ${asset}`);
  for (const path of ['/api/admin/overview', '/api/admin/applications', `/api/admin/applications/${SITE}`, '/api/admin/people?limit=50', '/api/admin/groups', '/api/admin/audit-log', '/api/admin/activity', '/api/admin/operations']) {
    await expectOk(await server.admin('GET', path), `panel ${path}`);
  }
}

/** Every process in the tree under (and including) `pid`, with its command line. */
function processTree(pid: number): { pid: number; command: string }[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // exited meanwhile
    }
  }
  const out: { pid: number; command: string }[] = [];
  const visit = (p: number) => {
    let command = '?';
    try {
      command = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').filter(Boolean).map((a) => a.replace(root + '/', '')).join(' ');
    } catch {
      return;
    }
    out.push({ pid: p, command });
    for (const child of parents.get(p) ?? []) visit(child);
  };
  visit(pid);
  return out;
}

interface Snapshot {
  processes: { pid: number; command: string; rssBytes: number; anonBytes: number; fileBytes: number; threads: number }[];
  totalBytes: number;
  server: BenchMetrics['memory'];
  spaces: Record<string, number>;
  malloc: BenchMetrics['malloc'] | undefined;
  launch: BenchMetrics['launch'] | undefined;
  reclaims: BenchMetrics['idleReclaim'];
}

async function snapshot(server: BenchServer): Promise<Snapshot> {
  const processes = processTree(server.pid).map((p) => ({ ...p, ...rssParts(p.pid), threads: readdirSync(`/proc/${p.pid}/task`).length }));
  const { memory, heapSpaces, malloc, launch, idleReclaim } = await server.ask<BenchMetrics>({ type: 'bench-metrics' });
  return { processes, totalBytes: processes.reduce((sum, p) => sum + p.rssBytes, 0), server: memory, spaces: heapSpaces ?? {}, malloc, launch, reclaims: idleReclaim };
}

/** `gatehouse serve --ldap` as a person starts it: `node bin/gatehouse.js serve`, no flags of ours. */
function startGatehouse(dataDir: string, ldapPort: number): Promise<BenchServer> {
  return serveDataDir(
    dataDir,
    {
      GATEHOUSE_LDAP_PORT: String(ldapPort), GATEHOUSE_BENCH_METRICS: '1', GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: '1',
      // 21 sign-ups from one address in a minute: above the per-IP default of 10.
      GATEHOUSE_SIGN_UP_RATE_LIMIT: '100',
    },
    { removeOnStop: false, entry: 'bin/gatehouse.js', serveArgs: ['--ldap'] },
  );
}

/** The floor process (bench/_memory-floor.mjs), plain `node`, ready and answered once. */
async function startFloor(dataDir: string): Promise<{ pid: number; stop(): Promise<void> }> {
  const child = fork(join(root, 'bench/_memory-floor.mjs'), [dataDir], { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the floor process exited with ${code}`)));
    child.on('message', (m: { type?: string; url?: string }) => m.type === 'ready' && m.url && resolve(m.url));
  });
  await expectOk(await fetch(url), 'floor');
  return {
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function describe(s: Snapshot): string {
  return s.processes.map((p) => `${p.command.split(' ').slice(0, 3).join(' ')}: ${mb(p.rssBytes)} (${p.threads} threads)`).join('; ');
}

async function run(): Promise<BenchResult[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-memory-'));
  const floorDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-memory-floor-'));
  const receiver = await startReceiver();
  const ldapPort = await freePort();
  const started = performance.now();
  const server = await startGatehouse(dataDir, ldapPort);
  const readyMs = performance.now() - started;
  const floor = await startFloor(floorDir);
  try {
    const atReady = await snapshot(server);
    if (process.env.BENCH_HEAP_SNAPSHOT) await server.ask({ type: 'bench-heap-snapshot', file: `${process.env.BENCH_HEAP_SNAPSHOT}.ready` });
    await accountsAndOAuth(server, receiver.url);
    await awaitDeliveries(receiver.received, EXPECTED_DELIVERIES);
    await forwardAuthAndLdap(server, ldapPort);
    await metricsAndPanel(server);
    const busy = await snapshot(server);
    const busyLoad = loadAverage();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const idle = await snapshot(server);
    // BENCH_HEAP_SNAPSHOT=FILE: the idle server's heap (and FILE.ready at ready), to read in DevTools.
    if (process.env.BENCH_HEAP_SNAPSHOT) await server.ask({ type: 'bench-heap-snapshot', file: process.env.BENCH_HEAP_SNAPSHOT });
    // BENCH_MEMORY_SMAPS=FILE: the idle server's and the floor's memory maps (FILE, FILE.floor), to see what is resident where.
    if (process.env.BENCH_MEMORY_SMAPS) {
      writeFileSync(process.env.BENCH_MEMORY_SMAPS, readFileSync(`/proc/${server.pid}/smaps`));
      writeFileSync(`${process.env.BENCH_MEMORY_SMAPS}.floor`, readFileSync(`/proc/${floor.pid}/smaps`));
    }
    const floorIdle = rssParts(floor.pid);
    const main = idle.processes.at(-1)!;
    const parts = (s: Snapshot) => ({ heapUsed: mb(s.server.heapUsed), heapTotal: mb(s.server.heapTotal), external: mb(s.server.external), arrayBuffers: mb(s.server.arrayBuffers) });
    const extra: Record<string, string | number> = {
      processes: idle.processes.length,
      'ready ms': Math.round(readyMs),
      'RSS at ready MB (all processes)': mb(atReady.totalBytes),
      'RSS right after the warm-up MB (all processes)': mb(busy.totalBytes),
      [`RSS after ${IDLE_MS / 1000} s idle MB (all processes)`]: mb(idle.totalBytes),
      'per process after idle MB': describe(idle),
      'server anonymous MB': mb(main.anonBytes),
      'server mapped files MB': mb(main.fileBytes),
      'server heap used / total MB (ready, warm-up, idle)': [atReady, busy, idle].map((s) => `${parts(s).heapUsed}/${parts(s).heapTotal}`).join(', '),
      'server external MB (ready, warm-up, idle)': [atReady, busy, idle].map((s) => parts(s).external).join(', '),
      'server array buffers MB (ready, warm-up, idle)': [atReady, busy, idle].map((s) => parts(s).arrayBuffers).join(', '),
      'server V8 spaces MB after idle': Object.entries(idle.spaces).filter(([, bytes]) => bytes > 0).map(([space, bytes]) => `${space.replace(/_space$/, '')} ${mb(bytes)}`).join(', '),
      'server malloc MB after idle (arena, in use, free, mmapped)': idle.malloc ? [idle.malloc.arena, idle.malloc.inUse, idle.malloc.free, idle.malloc.mmapped].map(mb).join(', ') : 'n/a',
      'idle reclaims': idle.reclaims ? `${idle.reclaims.count}, last ${mb(idle.reclaims.last?.beforeBytes ?? 0)} → ${mb(idle.reclaims.last?.afterBytes ?? 0)} MB in ${idle.reclaims.last?.ms ?? 0} ms (${idle.reclaims.last?.forgotten ?? 0} compiled schemas forgotten)` : 'off',
      'server launch settings': idle.launch ? `${idle.launch.v8Flags.join(' ') || 'command line'}${idle.launch.mmapThreshold ? ', mmap threshold' : ''}${idle.launch.arenaMax ? ', arena max' : ''}` : 'n/a',
      'floor RSS MB (Fastify + better-sqlite3 + jose, listening)': mb(floorIdle.rssBytes),
      'floor anonymous / files MB': `${mb(floorIdle.anonBytes)} / ${mb(floorIdle.fileBytes)}`,
      'load avg (warm-up end, measurement)': `${busyLoad}, ${loadAverage()}`,
    };
    return [
      {
        scenario: `idle memory after a light day's use (${IDLE_MS / 1000} s idle)`,
        throughput: 0,
        p50Ms: 0,
        p99Ms: 0,
        measured: `RSS ${mb(idle.totalBytes)} MB in ${idle.processes.length} process${idle.processes.length === 1 ? '' : 'es'} (floor ${mb(floorIdle.rssBytes)} MB)`,
        extra,
        target: `RSS ≤ ${TARGET_MB} MB`,
        met: idle.totalBytes <= TARGET_MB * MB,
      },
    ];
  } finally {
    await server.stop();
    await floor.stop();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(floorDir, { recursive: true, force: true });
  }
}

export const scenario: Scenario = {
  name: 'memory',
  description: "RSS of everything `gatehouse serve --ldap` keeps alive after 20 sign-ups and sign-ins, OAuth, forward auth, LDAP, a metrics scrape and the panel, then 40 s idle; beside a bare Node + Fastify + better-sqlite3 + jose floor",
  run,
};
