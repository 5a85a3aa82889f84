/**
 * The sign-in trace of a bench's server (BENCH_TRACE=FILE, off by default): `traceServer` has the
 * server started afterwards run with bench/_trace.mjs, which writes a line per password sign-in
 * (arrival, the hash's start and result, the response; the scheduler's run and wait time of the
 * main thread, the niced pool threads and the other threads at each) and one per 250 ms (the
 * loop's delay, GC pauses, the same scheduler figures); `traceSummary` sums up a window of it.
 * Used by bench/radius.ts (decision 0415); any bench that signs people in can use it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { percentile } from './_server.js';

/** The trace file asked for (BENCH_TRACE), undefined when the bench runs untraced. */
export const TRACE = process.env.BENCH_TRACE;

/** Empties `file` and loads bench/_trace.mjs into the bench servers started after this (BENCH_NODE_ARGS). */
export function traceServer(file: string): void {
  writeFileSync(file, '');
  process.env.BENCH_NODE_ARGS = `${process.env.BENCH_NODE_ARGS ?? ''} --import ${join(dirname(fileURLToPath(import.meta.url)), '_trace.mjs')}`;
}

type Sched = Record<'main' | 'pool' | 'other', [number, number]>;
interface TracedSignIn {
  arrived: number;
  finished: number;
  s0: Sched;
  s3: Sched;
  hashes: { asked: number; started: number; ended: number; s1: Sched; s2: Sched }[];
}
interface Tick { at: number; loopMaxMs: number; loopP99Ms: number; gc: { count: number; sum: number; max: number }; s: Sched }

const round = (n: number, digits = 2) => Number(n.toFixed(digits));

/**
 * The sign-ins traced in `window` (epoch ms; those with one password hash) in phases, p50 / p99 /
 * max each, the five slowest broken down, and the window's threads, loop delay and GC per second.
 */
export function traceSummary(file: string, window: { from: number; to: number }) {
  const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string });
  const signIns = (lines.filter((l) => l.kind === 'sign-in') as unknown as TracedSignIn[]).filter((t) => t.arrived >= window.from && t.finished <= window.to && t.hashes.length === 1 && t.hashes[0]!.ended);
  const ticks = (lines.filter((l) => l.kind === 'tick') as unknown as Tick[]).filter((t) => t.at >= window.from && t.at <= window.to);
  const ms = (ns: number) => ns / 1e6;
  const phases = signIns.map((t) => {
    const h = t.hashes[0]!;
    return {
      total: t.finished - t.arrived,
      beforeHash: h.asked - t.arrived,
      hashQueued: h.started - h.asked,
      hash: h.ended - h.started,
      poolRun: ms(h.s2.pool[0] - h.s1.pool[0]),
      poolWait: ms(h.s2.pool[1] - h.s1.pool[1]),
      mainRunInHash: ms(h.s2.main[0] - h.s1.main[0]),
      afterHash: t.finished - h.ended,
      mainWait: ms(t.s3.main[1] - t.s0.main[1]),
    };
  });
  const stat = (key: keyof (typeof phases)[number]) => {
    const sorted = phases.map((p) => p[key]).sort((a, b) => a - b);
    return `${round(percentile(sorted, 50), 1)} / ${round(percentile(sorted, 99), 1)} / ${round(sorted.at(-1) ?? NaN, 1)}`;
  };
  const seconds = (window.to - window.from) / 1000;
  const first = ticks[0];
  const last = ticks.at(-1);
  const share = (kind: keyof Sched, i: 0 | 1) => (first && last ? round(ms(last.s[kind][i] - first.s[kind][i]) / ((last.at - first.at) / 1000), 0) : NaN);
  const loopMax = ticks.map((t) => t.loopMaxMs).sort((a, b) => a - b);
  return {
    'sign-ins traced': signIns.length,
    'p50 / p99 / max ms: total': stat('total'),
    'before the hash': stat('beforeHash'),
    'queued for the pool': stat('hashQueued'),
    'hash, started → result on the loop': stat('hash'),
    'pool thread run ms in it': stat('poolRun'),
    'pool thread runqueue wait ms in it': stat('poolWait'),
    'main thread run ms in it': stat('mainRunInHash'),
    'after the hash → response finished': stat('afterHash'),
    'main thread runqueue wait ms, whole sign-in': stat('mainWait'),
    'slowest 5 (total = before + hash [pool run, pool wait] + after)': [...phases].sort((a, b) => b.total - a.total).slice(0, 5).map((p) => `${round(p.total, 1)} = ${round(p.beforeHash + p.hashQueued, 1)} + ${round(p.hash, 1)} [${round(p.poolRun, 1)}, ${round(p.poolWait, 1)}] + ${round(p.afterHash, 1)}`),
    'per s: main run / wait ms': `${share('main', 0)} / ${share('main', 1)}`,
    'per s: pool run / wait ms': `${share('pool', 0)} / ${share('pool', 1)}`,
    'per s: other threads run / wait ms': `${share('other', 0)} / ${share('other', 1)}`,
    'loop delay max per 250 ms, p50 / p99 / max': `${round(percentile(loopMax, 50), 1)} / ${round(percentile(loopMax, 99), 1)} / ${round(loopMax.at(-1) ?? NaN, 1)}`,
    'GC per s: pauses, ms; longest pause': `${round(ticks.reduce((n, t) => n + t.gc.count, 0) / seconds, 1)}, ${round(ticks.reduce((n, t) => n + t.gc.sum, 0) / seconds, 1)}; ${round(Math.max(...ticks.map((t) => t.gc.max)), 1)}`,
  };
}
