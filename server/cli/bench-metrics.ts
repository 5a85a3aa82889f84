/**
 * Figures only a process can see of itself, for `npm run bench`: how long the event loop was
 * held up (perf_hooks' event-loop delay histogram, 1 ms resolution) and memory. Off unless
 * GATEHOUSE_BENCH_METRICS=1, and answered over the IPC channel only (no HTTP surface): the
 * benchmark sends `{type: 'bench-metrics', reset?: true}` and gets the figures back.
 *
 * The same switch lets the benchmark profile a window of the run it measures (issue 27: where a
 * grant's CPU goes): `{type: 'bench-profile', action: 'start', intervalUs}` starts V8's sampling
 * profiler on the main thread through node:inspector (loaded only then), `{type: 'bench-profile',
 * action: 'stop', file}` writes the `.cpuprofile` there and answers `{type: 'bench-profile', file}`.
 * `{type: 'bench-heap-snapshot', file}` writes a heap snapshot there (issue 45: what idle memory holds).
 *
 * And it switches the Prometheus counting (metrics/metrics.ts) off and on, so the benchmark
 * measures what counting costs on one server, window by window (bench/refresh.ts):
 * `{type: 'bench-counting', on}` answers `{type: 'bench-counting', on}`. Likewise where signatures
 * run (oauth/signing-algorithms.ts, issue 38): `{type: 'bench-signing', onPool?: ['RS256', …]}`
 * answers `{type: 'bench-signing', onPool}` with the algorithms now signing on libuv's pool.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import { appliedLaunchSettings, type AppliedSettings } from './launch.js';
import type { Session } from 'node:inspector';
import type { IdleReclaim, ReclaimStats } from '../ops/idle-memory.js';
import type { Metrics } from '../plugin-api/metrics.js';
import { isSigningAlg, signOnPool } from '../oauth/signing-algorithms.js';

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
  /** The answering process (one process: the one the launcher started). */
  pid: number;
  /** The launch settings it applied to itself (cli/launch.ts). */
  launch: AppliedSettings;
  /** V8's heap spaces: bytes committed to each (`space_size`), by space name. */
  heapSpaces: Record<string, number>;
  /** glibc's malloc totals (native/idle-memory's mallinfo2), null where unavailable. */
  malloc: { arena: number; inUse: number; free: number; mmapped: number; releasable: number } | null;
}

/** mallinfo2 through the native helper, when it is built and has it. */
function mallocInfo(): BenchMetrics['malloc'] {
  try {
    const helper = createRequire(import.meta.url)('@gatehouse/idle-memory') as { mallocInfo?: () => BenchMetrics['malloc'] | undefined };
    return helper.mallocInfo?.() ?? null;
  } catch {
    return null;
  }
}

const nsToMs = (ns: number) => ns / 1e6;

export function serveBenchMetrics(env: NodeJS.ProcessEnv, reclaim?: IdleReclaim, metrics?: Metrics): void {
  if (env.GATEHOUSE_BENCH_METRICS !== '1' || !process.send) return;
  let histogram: IntervalHistogram | undefined;
  let profiler: Session | undefined;
  process.on('message', (message: { type?: string; reset?: boolean; action?: string; intervalUs?: number; file?: string; on?: boolean; onPool?: unknown[] }) => {
    if (message?.type === 'bench-signing') {
      process.send!({ type: 'bench-signing', onPool: signOnPool(message.onPool?.filter(isSigningAlg)) });
      return;
    }
    if (message?.type === 'bench-counting' && metrics) {
      metrics.counting = message.on !== false;
      process.send!({ type: 'bench-counting', on: metrics.counting });
      return;
    }
    if (message?.type === 'bench-heap-snapshot' && message.file) {
      // Where the heap's bytes are (the memory benchmark's BENCH_HEAP_SNAPSHOT): blocks for as long as it writes.
      process.send!({ type: 'bench-heap-snapshot', file: writeHeapSnapshot(message.file) });
      return;
    }
    if (message?.type === 'bench-profile') {
      void profile(message).then((answer) => process.send!({ type: 'bench-profile', ...answer }));
      return;
    }
    if (message?.type !== 'bench-metrics') return;
    const answer: BenchMetrics = {
      type: 'bench-metrics',
      loopDelay: histogram
        ? { maxMs: nsToMs(histogram.max), p99Ms: nsToMs(histogram.percentile(99)), meanMs: nsToMs(histogram.mean), samples: histogram.count }
        : null,
      memory: process.memoryUsage(),
      idleReclaim: reclaim?.available ? reclaim.stats() : null,
      pid: process.pid,
      launch: appliedLaunchSettings(),
      heapSpaces: Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, space.space_size])),
      malloc: mallocInfo(),
    };
    if (message.reset) {
      histogram ??= monitorEventLoopDelay({ resolution: 1 });
      histogram.enable();
      histogram.reset();
    }
    process.send!(answer);
  });

  /** Starts or stops the CPU profiler; failures are answered, not thrown (the bench says why). */
  async function profile(message: { action?: string; intervalUs?: number; file?: string }): Promise<{ file?: string; error?: string }> {
    try {
      if (message.action === 'start') {
        if (!profiler) {
          const { Session } = await import('node:inspector');
          profiler = new Session();
          profiler.connect();
          await post(profiler, 'Profiler.enable');
        }
        await post(profiler, 'Profiler.setSamplingInterval', { interval: message.intervalUs ?? 500 });
        await post(profiler, 'Profiler.start');
        return {};
      }
      if (!profiler || !message.file) return { error: 'the profiler was not started, or no file was named' };
      const { profile } = await post<{ profile: object }>(profiler, 'Profiler.stop');
      writeFileSync(message.file, JSON.stringify(profile));
      return { file: message.file };
    } catch (error) {
      return { error: (error as Error)?.message ?? String(error) };
    }
  }
}

/** Posts one inspector command and resolves with its result. */
function post<T>(session: Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) =>
    session.post(method, params, (error: Error | null, result: unknown) => (error ? reject(error) : resolve(result as T))),
  );
}
