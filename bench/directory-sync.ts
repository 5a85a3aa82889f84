/**
 * A directory source under load (issue 47, spec directory-sources.md "Limits"):
 * `npm run bench -- directory-sync`.
 *
 * Debian's slapd, started from a configuration in a temporary directory (test/helpers/slapd.ts),
 * loaded by slapadd with 100,000 inetOrgPerson people and 500 groupOfNames groups of 600 members
 * each, served over ldaps:// under a test CA. The built `gatehouse serve` (SQLite) gets the source
 * through the admin API and runs:
 * 1. a full sync of everything (people created, members of one application, groups mirrored),
 *    timed from `POST …/sync` to the run's end, with the server's event-loop delay over the run
 *    (perf_hooks, inside the server: GATEHOUSE_BENCH_METRICS) and its resident memory before/after;
 * 2. the same run again with nothing changed (reads and digests only);
 * 3. sign-ins one after another, alternating a local person (argon2id) and a source person (a
 *    bind to slapd over TLS), and their medians compared.
 *
 * Targets: the full run ≤ 3 min with loop-delay p99 ≤ 50 ms and ≤ 300 MB more memory; the
 * unchanged run ≤ 60 s; a sign-in through the source ≤ 1.5× a local one in the same run.
 */
import type { BenchResult, Scenario } from './run.js';
import { BENCH_PASSWORD, loadAverage, percentile, startBenchServer, type BenchServer } from './_server.js';
import type { BenchMetrics } from '../server/cli/bench-metrics.js';
import { ADMIN_DN, ADMIN_PASSWORD, GROUPS_BASE, PEOPLE_BASE, passwordOf, startSlapd, userName } from '../test/helpers/slapd.js';

/**
 * BENCH_DIRECTORY_PEOPLE=N runs a smaller (or larger) directory to iterate on: groups scale with
 * it (500 per 100,000 people, at least 5), and so do the time targets; the table says the size.
 */
const PEOPLE = Number(process.env.BENCH_DIRECTORY_PEOPLE ?? 100_000);
if (!Number.isInteger(PEOPLE) || PEOPLE < 1000) throw new Error(`BENCH_DIRECTORY_PEOPLE must be a whole number of at least 1000, got "${process.env.BENCH_DIRECTORY_PEOPLE}"`);
const SCALE = PEOPLE / 100_000;
const GROUPS = Math.max(5, Math.round(500 * SCALE));
const PER_GROUP = Math.min(600, PEOPLE);
/** In the scenario names when the size is not the issue's (so results.json keeps the two apart). */
const SIZE = PEOPLE === 100_000 ? '' : `, ${PEOPLE.toLocaleString('en')} people`;
const SIGN_INS = 40;
const TARGET_FULL_S = 180 * SCALE;
const TARGET_UNCHANGED_S = 60 * SCALE;
const TARGET_LOOP_P99_MS = 50;
const TARGET_MEMORY_MB = 300;
const TARGET_RATIO = 1.5;
/** How long the idle server's loop delay is measured before the full run (the same-run baseline). */
const IDLE_BASELINE_MS = 30_000;

const log = (line: string) => console.error(`  directory-sync: ${line}`);
const round = (n: number, digits = 2) => Number(n.toFixed(digits));

async function json<T>(res: Response, status: number): Promise<T> {
  const body = await res.text();
  if (res.status !== status) throw new Error(`${res.url} answered ${res.status}: ${body.slice(0, 300)}`);
  return JSON.parse(body) as T;
}

interface Run {
  id: string;
  state: string;
  counts: Record<string, number>;
  error: string | null;
}

/**
 * Starts a run and polls it to its end: the seconds it took, and the server's CPU seconds over it
 * (the main thread, and every thread): on a shared machine the wall clock counts other programs'
 * turns, the CPU time does not.
 */
async function timedRun(server: BenchServer, sourceId: string, full = true): Promise<{ run: Run; seconds: number; cpuMain: number; cpuTotal: number }> {
  const started = performance.now();
  const cpuBefore = server.cpu();
  const cpu = () => {
    const after = server.cpu();
    return { cpuMain: cpuBefore && after ? (after.mainMs - cpuBefore.mainMs) / 1000 : NaN, cpuTotal: cpuBefore && after ? (after.totalMs - cpuBefore.totalMs) / 1000 : NaN };
  };
  const { run } = await json<{ run: Run }>(await server.admin('POST', `/api/admin/directory-sources/${sourceId}/sync`, { full }), 202);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = await json<Run>(await server.admin('GET', `/api/admin/directory-sources/${sourceId}/runs/${run.id}`), 200);
    if (now.state !== 'running') return { run: now, seconds: (performance.now() - started) / 1000, ...cpu() };
  }
}

async function signIn(server: BenchServer, path: string, body: Record<string, string>): Promise<number> {
  const begin = performance.now();
  const res = await fetch(`${server.url}/api/auth/sign-in/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`sign-in by ${path} answered ${res.status}`);
  return performance.now() - begin;
}

export const scenario: Scenario = {
  name: 'directory-sync',
  description: `A ${PEOPLE.toLocaleString('en')}-person, ${GROUPS}-group slapd synced over ldaps://; an unchanged run; sign-ins through the source beside local ones`,
  async run(): Promise<BenchResult[]> {
    const loadStarted = performance.now();
    const slapd = await startSlapd({ people: PEOPLE, groups: false, benchGroups: { count: GROUPS, perGroup: PER_GROUP } });
    log(`slapd loaded with ${PEOPLE} people and ${GROUPS} groups in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);
    const server = await startBenchServer('directory-sync', { GATEHOUSE_BENCH_METRICS: '1', GATEHOUSE_SIGN_IN_RATE_LIMIT: '100000' });
    const loopDelay = async (reset = true) => (await server.ask<BenchMetrics>({ type: 'bench-metrics', reset })).loopDelay;
    try {
      await json(await server.admin('POST', '/api/admin/applications', { id: 'wiki', name: 'Wiki', audience: 'https://wiki.example.com', redirectUris: ['https://wiki.example.com/cb'], clientType: 'web' }), 201);
      await json(await server.admin('POST', '/api/admin/people', { email: 'local@example.com', password: BENCH_PASSWORD }), 201);
      const source = await json<{ id: string }>(await server.admin('POST', '/api/admin/directory-sources', {
        name: 'Bench LDAP', kind: 'ldap', url: slapd.ldapsUrl, caCertificate: slapd.caPem, bindDn: ADMIN_DN, bindPassword: ADMIN_PASSWORD,
        peopleBase: PEOPLE_BASE, groupsBase: GROUPS_BASE, syncIntervalMinutes: null, applications: ['wiki'],
      }), 201);

      // The same-run baseline: the same server's loop delay while it does nothing, for 30 s just
      // before the run (what the machine's other work alone costs it on a shared machine).
      await loopDelay();
      await new Promise((resolve) => setTimeout(resolve, IDLE_BASELINE_MS));
      const loopIdle = await loopDelay();
      const loadIdle = loadAverage();
      log(`idle baseline: loop p99 ${round(loopIdle?.p99Ms ?? NaN)} ms, max ${round(loopIdle?.maxMs ?? NaN)} ms, load ${loadIdle}`);

      const rssBefore = server.rssMiB();
      await loopDelay();
      const full = await timedRun(server, source.id);
      const loopFull = await loopDelay();
      const rssAfter = server.rssMiB();
      log(`full run: ${full.seconds.toFixed(1)} s (server CPU ${full.cpuMain.toFixed(1)} s main thread, ${full.cpuTotal.toFixed(1)} s all), ${JSON.stringify(full.run.counts)}${full.run.error ? `, error: ${full.run.error}` : ''}`);
      if (full.run.state !== 'succeeded' || full.run.counts.created !== PEOPLE) throw new Error(`the full run ended ${full.run.state}: ${JSON.stringify(full.run.counts)} ${full.run.error ?? ''}`);

      await loopDelay();
      const unchanged = await timedRun(server, source.id);
      const loopUnchanged = await loopDelay();
      log(`unchanged run: ${unchanged.seconds.toFixed(1)} s (server CPU ${unchanged.cpuMain.toFixed(1)} s main thread), ${JSON.stringify(unchanged.run.counts)}`);

      // The scheduled kind of run: only entries changed since the last (modifyTimestamp), none here.
      await loopDelay();
      const changesOnly = await timedRun(server, source.id, false);
      const loopChangesOnly = await loopDelay();
      log(`changes-only run: ${changesOnly.seconds.toFixed(1)} s (server CPU ${changesOnly.cpuMain.toFixed(1)} s main thread), ${JSON.stringify(changesOnly.run.counts)}`);

      // Sign-ins, alternating, after one of each to warm up.
      await signIn(server, 'email', { email: 'local@example.com', password: BENCH_PASSWORD });
      await signIn(server, 'username', { username: userName(1), password: passwordOf(userName(1)) });
      const local: number[] = [];
      const directory: number[] = [];
      for (let i = 0; i < SIGN_INS; i++) {
        local.push(await signIn(server, 'email', { email: 'local@example.com', password: BENCH_PASSWORD }));
        const user = userName(2 + ((i * 7919) % (PEOPLE - 2)));
        directory.push(await signIn(server, 'username', { username: user, password: passwordOf(user) }));
      }
      local.sort((a, b) => a - b);
      directory.sort((a, b) => a - b);
      const ratio = percentile(directory, 50) / percentile(local, 50);
      const load = loadAverage();
      const fullMet = full.seconds <= TARGET_FULL_S && (loopFull?.p99Ms ?? Infinity) <= TARGET_LOOP_P99_MS && rssAfter - rssBefore <= TARGET_MEMORY_MB;
      return [
        {
          scenario: `directory-sync (full${SIZE})`,
          throughput: PEOPLE / full.seconds,
          p50Ms: 0,
          p99Ms: loopFull?.p99Ms ?? 0,
          measured: `${full.seconds.toFixed(1)} s, loop p99 ${round(loopFull?.p99Ms ?? NaN)} ms, +${Math.round(rssAfter - rssBefore)} MB`,
          target: `≤ ${TARGET_FULL_S} s, loop p99 ≤ ${TARGET_LOOP_P99_MS} ms, ≤ ${TARGET_MEMORY_MB} MB more`,
          met: fullMet,
          extra: {
            seconds: round(full.seconds, 1), 'server CPU s (main / all threads)': `${round(full.cpuMain, 1)} / ${round(full.cpuTotal, 1)}`, ...full.run.counts, groups: GROUPS, 'members per group': PER_GROUP,
            'loop delay p99 / max ms': `${round(loopFull?.p99Ms ?? NaN)} / ${round(loopFull?.maxMs ?? NaN)}`,
            'idle baseline loop p99 / max ms': `${round(loopIdle?.p99Ms ?? NaN)} / ${round(loopIdle?.maxMs ?? NaN)}`, 'load avg (idle baseline)': loadIdle,
            'RSS MiB before / after': `${Math.round(rssBefore)} / ${Math.round(rssAfter)}`, 'load avg': load,
          },
        },
        {
          scenario: `directory-sync (unchanged${SIZE})`,
          throughput: PEOPLE / unchanged.seconds,
          p50Ms: 0,
          p99Ms: loopUnchanged?.p99Ms ?? 0,
          measured: `${unchanged.seconds.toFixed(1)} s, loop p99 ${round(loopUnchanged?.p99Ms ?? NaN)} ms`,
          target: `≤ ${TARGET_UNCHANGED_S} s`,
          met: unchanged.seconds <= TARGET_UNCHANGED_S && unchanged.run.state === 'succeeded' && unchanged.run.counts.created === 0 && unchanged.run.counts.updated === 0,
          extra: { seconds: round(unchanged.seconds, 1), 'server CPU s (main / all threads)': `${round(unchanged.cpuMain, 1)} / ${round(unchanged.cpuTotal, 1)}`, ...unchanged.run.counts, 'loop delay p99 / max ms': `${round(loopUnchanged?.p99Ms ?? NaN)} / ${round(loopUnchanged?.maxMs ?? NaN)}`, 'load avg': load },
        },
        {
          scenario: `directory-sync (changes only${SIZE})`,
          throughput: 0,
          p50Ms: 0,
          p99Ms: loopChangesOnly?.p99Ms ?? 0,
          measured: `${changesOnly.seconds.toFixed(1)} s, loop p99 ${round(loopChangesOnly?.p99Ms ?? NaN)} ms`,
          target: `≤ ${TARGET_UNCHANGED_S} s`,
          met: changesOnly.seconds <= TARGET_UNCHANGED_S && changesOnly.run.state === 'succeeded' && changesOnly.run.counts.created === 0 && changesOnly.run.counts.updated === 0,
          extra: { seconds: round(changesOnly.seconds, 1), 'server CPU s (main / all threads)': `${round(changesOnly.cpuMain, 1)} / ${round(changesOnly.cpuTotal, 1)}`, ...changesOnly.run.counts, 'loop delay p99 / max ms': `${round(loopChangesOnly?.p99Ms ?? NaN)} / ${round(loopChangesOnly?.maxMs ?? NaN)}`, 'load avg': load },
        },
        {
          scenario: `directory-sync (sign-in${SIZE})`,
          throughput: 0,
          p50Ms: percentile(directory, 50),
          p99Ms: percentile(directory, 99),
          measured: `${round(ratio)}× a local sign-in (p50 ${round(percentile(directory, 50))} vs ${round(percentile(local, 50))} ms)`,
          target: `≤ ${TARGET_RATIO}× a local password sign-in`,
          met: ratio <= TARGET_RATIO,
          extra: {
            'source p50 / p99 ms': `${round(percentile(directory, 50))} / ${round(percentile(directory, 99))}`,
            'local p50 / p99 ms': `${round(percentile(local, 50))} / ${round(percentile(local, 99))}`,
            'sign-ins each': SIGN_INS, 'load avg': load,
          },
        },
      ];
    } finally {
      await server.stop();
      await slapd.stop();
    }
  },
};
