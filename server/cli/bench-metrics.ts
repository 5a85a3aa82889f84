/**
 * Figures only a process can see of itself, for `npm run bench`: how long the event loop was
 * held up (perf_hooks' event-loop delay histogram, 1 ms resolution) and memory. Off unless
 * GATEHOUSE_BENCH_METRICS=1, and answered over the IPC channel only (no HTTP surface): the
 * benchmark sends `{type: 'bench-metrics', reset?: true}` and gets the figures back.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { IdleReclaim, ReclaimStats } from '../ops/idle-memory.js';

export interface BenchMetrics {
  type: 'bench-metrics';
  /**
   * Event-loop delay since the last reset, in ms; null until the first `reset: true`, which starts
   * the measuring (the histogram's own memory stays out of runs that never ask for it).
   */
  loopDelay: { maxMs: number; p99Ms: number; meanMs: number; samples: number } | null;
  memory: NodeJS.MemoryUsage;
  /** Idle memory reclaims so far (ops/idle-memory.ts); null when off or unavailable. */
  idleReclaim: ReclaimStats | null;
}

const nsToMs = (ns: number) => ns / 1e6;

export function serveBenchMetrics(env: NodeJS.ProcessEnv, reclaim?: IdleReclaim): void {
  if (env.GATEHOUSE_BENCH_METRICS !== '1' || !process.send) return;
  let histogram: IntervalHistogram | undefined;
  process.on('message', (message: { type?: string; reset?: boolean }) => {
    if (message?.type !== 'bench-metrics') return;
    const answer: BenchMetrics = {
      type: 'bench-metrics',
      loopDelay: histogram
        ? { maxMs: nsToMs(histogram.max), p99Ms: nsToMs(histogram.percentile(99)), meanMs: nsToMs(histogram.mean), samples: histogram.count }
        : null,
      memory: process.memoryUsage(),
      idleReclaim: reclaim?.available ? reclaim.stats() : null,
    };
    if (message.reset) {
      histogram ??= monitorEventLoopDelay({ resolution: 1 });
      histogram.enable();
      histogram.reset();
    }
    process.send!(answer);
  });
}
