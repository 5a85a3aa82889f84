/**
 * What the Prometheus counting (server/metrics/metrics.ts) costs a refresh grant (issue 36: at most
 * 2 % of the token endpoint's CPU per grant). One server, one database, one token pool: the
 * counting is switched off and on over the bench IPC channel (server/cli/bench-metrics.ts) between
 * windows of the same load, in the order off, on, on, off, … (ABBA, so a drift of the shared
 * machine's load falls on both sides alike), and the server's CPU per grant (every thread, /proc)
 * is summed per side. With counting on, a grant counts `gatehouse_tokens_issued_total` and its
 * request in `gatehouse_http_request_duration_seconds`; nothing scrapes during the windows (a scrape
 * every 15 s or more is not per grant).
 *
 * Beside it, the same counting timed in this process (a million grants' worth of the calls a
 * grant makes): a figure the shared machine's noise barely moves, to read the windows against.
 */
import type { BenchResult } from './run.js';
import { loadAverage, refreshLoad, type BenchServer } from './_server.js';
import { perOpOrThrow } from './_cost.js';
import { Metrics } from '../server/metrics/metrics.js';

const WINDOW_SECONDS = 3;
/** ABBA blocks: each side gets 2 windows per block. */
const BLOCKS = 3;
const TARGET_SHARE = 0.02;

export async function metricsCountingCost(server: BenchServer, clientId: string, pool: string[], connections: number): Promise<BenchResult> {
  const totals = { on: { cpuMs: 0, mainMs: 0, ops: 0, seconds: 0 }, off: { cpuMs: 0, mainMs: 0, ops: 0, seconds: 0 } };
  const order: ('on' | 'off')[] = [];
  for (let block = 0; block < BLOCKS; block++) order.push('off', 'on', 'on', 'off');
  const loads: string[] = [];
  for (const side of order) {
    const answer = await server.ask<{ on: boolean }>({ type: 'bench-counting', on: side === 'on' });
    if (answer.on !== (side === 'on')) throw new Error('the server did not switch its metrics counting');
    const before = server.cpu();
    const run = await refreshLoad(server, clientId, pool, { connections, duration: WINDOW_SECONDS });
    const ops = run.latencies.length;
    const perOp = perOpOrThrow(before, server.cpu(), ops);
    const t = totals[side];
    t.cpuMs += perOp.totalMs * ops;
    t.mainMs += perOp.mainMs * ops;
    t.ops += ops;
    t.seconds += run.result.duration;
    loads.push(loadAverage());
  }
  await server.ask({ type: 'bench-counting', on: true });
  const on = { ms: totals.on.cpuMs / totals.on.ops, mainMs: totals.on.mainMs / totals.on.ops, rate: totals.on.ops / totals.on.seconds };
  const off = { ms: totals.off.cpuMs / totals.off.ops, mainMs: totals.off.mainMs / totals.off.ops, rate: totals.off.ops / totals.off.seconds };
  const share = (on.ms - off.ms) / off.ms;
  const mainShare = (on.mainMs - off.mainMs) / off.mainMs;
  const inProcessMs = countingInProcessMs();
  const pct = (n: number) => `${n >= 0 ? '+' : ''}${(100 * n).toFixed(1)} %`;
  return {
    scenario: `metrics counting, ${connections} connections (same server, off/on windows)`,
    throughput: on.rate,
    p50Ms: 0,
    p99Ms: 0,
    cpuSecondsPer1k: on.ms,
    measured: `${pct(share)} CPU per grant (${on.ms.toFixed(3)} ms on / ${off.ms.toFixed(3)} ms off), main thread ${pct(mainShare)}`,
    extra: {
      'grants counted on': totals.on.ops,
      'grants counted off': totals.off.ops,
      'server CPU ms/op on': on.ms.toFixed(4),
      'server CPU ms/op off': off.ms.toFixed(4),
      'main-thread ms/op on': on.mainMs.toFixed(4),
      'main-thread ms/op off': off.mainMs.toFixed(4),
      'grants/s on': Math.round(on.rate),
      'grants/s off': Math.round(off.rate),
      'counting in-process ms/grant': inProcessMs.toFixed(5),
      'counting in-process share': pct(inProcessMs / off.ms),
      'load avg per window': loads.join(' '),
    },
    target: `counting ≤ ${100 * TARGET_SHARE} % of a grant's CPU`,
    met: share <= TARGET_SHARE,
  };
}

/** CPU ms of what counting does per grant (a counter, two clock reads, a histogram observation), timed here. */
function countingInProcessMs(): number {
  const metrics = new Metrics();
  const grant = () => {
    const started = performance.now();
    metrics.tokenIssued('refresh_token');
    metrics.requestDone('/api/auth/oauth2/token', 200, (performance.now() - started) / 1000);
  };
  for (let i = 0; i < 100_000; i++) grant(); // warm-up
  const n = 1_000_000;
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) grant();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / n;
}
