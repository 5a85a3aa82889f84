/**
 * Gives memory back to the operating system once the server has gone quiet (issue 9: idle memory
 * ≤ 80 MB). A burst of requests grows V8's heap and glibc's arenas; both keep the pages for the
 * next burst, but an appliance spends most of its day idle. V8's own memory reducer returns them
 * only 8–15 s after the last request, or not at all, and Node 20 offers JavaScript no call that
 * does (`gc()` keeps the emptied pages): the native helper native/idle-memory makes the two calls,
 * V8's low-memory collection and glibc's malloc_trim (docs/decisions/0074-idle-memory-reclaim.md).
 *
 * Quiet is judged by the process's CPU time (every thread: requests, webhook deliveries, password
 * hashing, the checkpointer), so nothing on the request path counts requests. A reclaim takes
 * 60–130 ms on the event loop; it runs only after QUIET_TICKS ticks in which the process used
 * almost no CPU, and only when the resident set has grown by GROWTH_BYTES since the last one (or
 * the last one still gave back as much), so a loaded server never pauses for it and a trickle of
 * requests pays it once per few MB of growth.
 */
import { createRequire } from 'node:module';
import type { FastifyBaseLogger } from 'fastify';
import { takeMemoryFreed } from '../util/memory-freed.js';

export interface ReclaimPolicy {
  /** How often the CPU time and resident set are sampled. */
  tickMs: number;
  /** Consecutive quiet ticks before a reclaim (quiet for tickMs × quietTicks). */
  quietTicks: number;
  /**
   * CPU time, all threads, under which a tick counts as quiet. A freshly started server uses
   * ~0.1 ms a tick, but one that has served a day's use keeps 4–6 ms a tick of timers (the
   * outboxes' polls, the reclaim's own sampling) while nobody asks anything; at 5 ms the reclaim
   * then ran only when two ticks happened to fall under the line (bench memory: 0 reclaims in
   * 40 s idle, 154 MB instead of ~100 MB). At 15 ms it happened again: the memory bench's idle
   * server, its LDAP listener and metrics on, used 6–23 ms a tick (mean ~12; /proc schedstat of
   * every thread each 0.5 s, 2026-11-30), and some runs saw no quiet second in 40 s (0486). 30 ms
   * (6 % of a core) is above that spread and still below a tick with a sign-in or a panel page
   * in it; a trickle of cheap requests (token refreshes, forward-auth checks) counts as quiet,
   * which is what the reclaim is for.
   */
  quietCpuMs: number;
  /** Growth of the resident set from its lowest since the last reclaim (0 before the first) that makes one worth it. */
  growthBytes: number;
  /**
   * Collections per reclaim that age bytecode (V8 ages it only in collections it does not count as
   * forced, and the low-memory one is forced): a function not run over five of them, here over
   * three reclaims that growth or freed memory called for (a follow-up makes none: ReclaimDue),
   * has its bytecode, feedback and optimised code dropped, and is compiled again on its next call
   * (docs/decisions/0361-idle-bytecode-aging.md).
   */
  agingCollections: number;
}

export const RECLAIM_POLICY: ReclaimPolicy = { tickMs: 500, quietTicks: 2, quietCpuMs: 30, growthBytes: 4_000_000, agingCollections: 2 };

/** The decision, apart from clocks and the native call so it can be tested on its own. */
export class QuietWatch {
  private quietTicks = 0;
  /**
   * The lowest resident set since the last reclaim (0 before the first): growth is counted from
   * it, since the process also shrinks without one (V8's own memory reducer, an ended worker's
   * pages unmapped after the reclaim that followed it).
   */
  private lowestRss = 0;
  private freed = false;
  /** The last reclaim gave back growthBytes or more: another follows at the next quiet moment. */
  private paid = false;

  constructor(private readonly policy: ReclaimPolicy = RECLAIM_POLICY) {}

  /**
   * One tick's CPU time (ms, all threads) and the resident set now, and whether something freed a
   * large amount of memory since the last tick (a worker thread ended: util/memory-freed.ts), which
   * makes a reclaim due at the next quiet moment however the resident set moved. Says whether one
   * is due, and which kind (ReclaimDue).
   */
  tick(cpuMs: number, rssBytes: number, freed = false): ReclaimDue {
    this.freed ||= freed;
    this.lowestRss = Math.min(this.lowestRss, rssBytes);
    this.quietTicks = cpuMs <= this.policy.quietCpuMs ? this.quietTicks + 1 : 0;
    if (this.quietTicks < this.policy.quietTicks) return false;
    if (this.freed || rssBytes >= this.lowestRss + this.policy.growthBytes) return 'aging';
    return this.paid ? 'follow-up' : false;
  }

  /**
   * After a reclaim (the resident set before and after it): growth is counted from here, and quiet
   * starts over. One that gave back growthBytes or more is followed by another at the next quiet
   * moment, until one gives back less: the first after a burst often runs while memory is still
   * being let go (a worker thread's isolate, V8's sweeping)
   * (docs/decisions/0486-idle-reclaim-until-it-stops-paying.md).
   */
  reclaimed(beforeBytes: number, afterBytes: number): void {
    this.lowestRss = afterBytes;
    this.quietTicks = 0;
    this.freed = false;
    this.paid = beforeBytes - afterBytes >= this.policy.growthBytes;
  }
}

/**
 * A reclaim the process's growth or freed memory calls for makes the policy's aging collections;
 * one that only follows a reclaim that paid makes none: bytecode unused over five aging
 * collections is flushed (0361), and a chain of follow-ups within seconds would otherwise flush
 * what the last burst ran and make the next requests compile it again (0486).
 */
export type ReclaimDue = false | 'aging' | 'follow-up';

export interface ReclaimStats {
  count: number;
  /** The last reclaim: resident set before and after, its time, and what beforeReclaim forgot. */
  last: { beforeBytes: number; afterBytes: number; ms: number; forgotten: number } | null;
}

export interface IdleReclaim {
  /** False when the native helper is not built (an optional dependency): the server runs without. */
  readonly available: boolean;
  stats(): ReclaimStats;
  stop(): void;
}

type ReclaimCall = (agingCollections?: number) => void;

/** The helper's `reclaim`, or why it cannot be loaded. */
function loadReclaim(): ReclaimCall | Error {
  try {
    return (createRequire(import.meta.url)('@gatehouse/idle-memory') as { reclaim: ReclaimCall }).reclaim;
  } catch (error) {
    return error as Error;
  }
}

const cpuMsOf = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1_000;

/**
 * `beforeReclaim` runs first at each reclaim, to let go of what is kept only to be quick
 * (the server forgets the compiled route schemas no request used since the last reclaim:
 * http/lazy-compile.ts); its figure is logged.
 */
export function startIdleReclaim(log: FastifyBaseLogger, policy: ReclaimPolicy = RECLAIM_POLICY, beforeReclaim: () => number = () => 0): IdleReclaim {
  const stats: ReclaimStats = { count: 0, last: null };
  const reclaim = loadReclaim();
  if (reclaim instanceof Error) {
    log.warn(
      { reason: reclaim.message.split('\n')[0] },
      'Idle memory reclaim is off: the native helper @gatehouse/idle-memory is not built (npm install builds it; a compiler is needed).',
    );
    return { available: false, stats: () => stats, stop: () => {} };
  }
  const watch = new QuietWatch(policy);
  let cpu = process.cpuUsage();
  const timer = setInterval(() => {
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    const before = process.memoryUsage.rss();
    const due = watch.tick(cpuMsOf(used), before, takeMemoryFreed());
    if (!due) return;
    const started = performance.now();
    const forgotten = beforeReclaim();
    reclaim(due === 'aging' ? policy.agingCollections : 0);
    const ms = performance.now() - started;
    const after = process.memoryUsage.rss();
    watch.reclaimed(before, after);
    // The reclaim's own CPU time is not a sign of work: the next tick measures from here.
    cpu = process.cpuUsage();
    stats.count += 1;
    stats.last = { beforeBytes: before, afterBytes: after, ms: Math.round(ms), forgotten };
    log.debug({ rssBefore: before, rssAfter: after, ms: stats.last.ms, forgotten, kind: due }, 'idle memory reclaimed');
  }, policy.tickMs);
  timer.unref();
  return { available: true, stats: () => stats, stop: () => clearInterval(timer) };
}
