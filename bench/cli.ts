/**
 * Command-line start-up (issue 20): how long `gatehouse --help` takes, spawn to exit, through the
 * installed bin (bin/gatehouse.js → dist/gatehouse.mjs) as an administrator runs it. Commands are
 * imported only when they run (server/cli/commands.ts), so the help loads the command list and
 * nothing of the server. For reference, `gatehouse app list --help` loads one admin command and
 * `gatehouse serve --help` loads the whole server, which every command cost before.
 * Target: median < 150 ms for `gatehouse --help`.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchResult, Scenario } from './run.js';
import { loadAverage, percentile } from './_server.js';

const RUNS = 21;
const TARGET_MS = 150;
const bin = join(fileURLToPath(new URL('..', import.meta.url)), 'bin', 'gatehouse.js');

interface Timing {
  wallMs: number[];
  cpuMs: number[];
}

/** Spawns `gatehouse ...args` RUNS times (one warm-up first), one after another. */
function time(args: string[]): Timing {
  const run = () => {
    const started = performance.now();
    const result = spawnSync(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const wallMs = performance.now() - started;
    if (result.status !== 0) throw new Error(`gatehouse ${args.join(' ')} exited ${result.status}: ${result.stderr.toString().trim()}`);
    return wallMs;
  };
  run(); // the page cache and the compile cache, as an administrator's second call finds them
  const wallMs: number[] = [];
  const cpuMs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const cpuBefore = childrenCpuMs();
    wallMs.push(run());
    cpuMs.push(childrenCpuMs() - cpuBefore);
  }
  return { wallMs: wallMs.sort((a, b) => a - b), cpuMs: cpuMs.sort((a, b) => a - b) };
}

/** CPU time of this process's finished children so far: cutime + cstime of /proc/self/stat, in ms (10 ms steps). */
function childrenCpuMs(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return NaN; // not Linux
  }
}

const median = (sorted: number[]) => percentile(sorted, 50);

async function run(): Promise<BenchResult[]> {
  const help = time(['--help']);
  const appList = time(['app', 'list', '--help']);
  const serve = time(['serve', '--help']);
  const row = (scenario: string, t: Timing, target: string, met: boolean): BenchResult => ({
    scenario,
    throughput: 0,
    p50Ms: median(t.wallMs),
    p99Ms: t.wallMs.at(-1)!,
    measured: `median ${Math.round(median(t.wallMs))} ms (CPU ${Math.round(median(t.cpuMs))} ms)`,
    extra: {
      runs: RUNS,
      'min ms': Math.round(t.wallMs[0]!),
      'each ms': t.wallMs.map((ms) => Math.round(ms)).join(' '),
      'CPU ms (median)': Math.round(median(t.cpuMs)),
      'load avg': loadAverage(),
    },
    target,
    met,
  });
  return [
    row('gatehouse --help', help, `median < ${TARGET_MS} ms`, median(help.wallMs) < TARGET_MS),
    row('gatehouse app list --help', appList, 'reference', true),
    row('gatehouse serve --help (loads the server)', serve, 'reference', true),
  ];
}

export const scenario: Scenario = {
  name: 'cli',
  description: `gatehouse --help, spawn to exit, ${RUNS} runs (and two commands' --help for reference)`,
  run,
};
