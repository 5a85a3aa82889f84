/**
 * Start-up to ready (issues 9 and 45): the time from spawning `gatehouse serve` (`node
 * bin/gatehouse.js serve`, the command a person runs, on the built dist/) to its IPC
 * `ready` message, which is what the Electron supervisor and `npm start` wait for. The first
 * start creates the data directory (database, migrations, signing key, admin token) and is shown
 * for reference; then the server is started again on that existing directory several times and
 * the median is judged. The server's own CPU time at ready (from /proc) is reported beside it:
 * unlike wall-clock time it does not grow when other work shares the cores.
 * Target: median ≤ 1 s on an existing data directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchResult, Scenario } from './run.js';
import { cpuSample, loadAverage, percentile, rssMiB, spawnServe } from './_server.js';

const RUNS = 7;
const TARGET_MS = 1_000;

interface Start {
  readyMs: number;
  cpuMs: number;
  rssMiB: number;
}

/** One spawn → ready → SIGTERM → exit cycle. */
async function startOnce(dataDir: string): Promise<Start> {
  const started = performance.now();
  // As a person starts it: the `gatehouse` command (bin/gatehouse.js), one process since issue 45.
  const { child, exited, ready } = spawnServe(dataDir, {}, [], 0, 'bin/gatehouse.js');
  await ready;
  const readyMs = performance.now() - started;
  const cpu = cpuSample(child.pid!);
  const rss = rssMiB(child.pid!);
  child.kill('SIGTERM');
  await exited;
  return { readyMs, cpuMs: cpu?.totalMs ?? NaN, rssMiB: rss };
}

const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);

async function run(): Promise<BenchResult[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-startup-'));
  try {
    const first = await startOnce(dataDir);
    const runs: Start[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await startOnce(dataDir));
    const ready = runs.map((r) => r.readyMs).sort((a, b) => a - b);
    const readyMedian = median(ready);
    return [
      {
        scenario: 'start-up to ready',
        throughput: 0,
        p50Ms: readyMedian,
        p99Ms: ready.at(-1)!,
        measured: `median ${Math.round(readyMedian)} ms (CPU ${Math.round(median(runs.map((r) => r.cpuMs)))} ms)`,
        extra: {
          runs: RUNS,
          'ready ms (each)': ready.map((ms) => Math.round(ms)).join(' '),
          'server CPU ms at ready (median)': Math.round(median(runs.map((r) => r.cpuMs))),
          'RSS MiB at ready (median)': Number(median(runs.map((r) => r.rssMiB)).toFixed(1)),
          'first start on an empty directory ms': Math.round(first.readyMs),
          'load avg': loadAverage(),
        },
        target: `median ≤ ${TARGET_MS} ms on an existing data directory`,
        met: readyMedian <= TARGET_MS,
      },
    ];
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export const scenario: Scenario = {
  name: 'startup',
  description: `spawn → IPC ready of gatehouse serve, ${RUNS} starts on an existing data directory`,
  run,
};
