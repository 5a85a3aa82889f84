/**
 * When the server gives memory back (server/ops/idle-memory.ts): after `quietTicks` ticks in a row
 * that used almost no CPU, and only when the resident set grew by `growthBytes` from its lowest
 * since the last reclaim (or that reclaim gave back as much), so a loaded server never pauses for
 * it and a trickle of requests rarely does.
 */
import { describe, expect, it } from 'vitest';
import { QuietWatch, RECLAIM_POLICY, type ReclaimPolicy } from '../../server/ops/idle-memory.js';

const policy: ReclaimPolicy = { tickMs: 500, quietTicks: 2, quietCpuMs: 5, growthBytes: 4_000_000, agingCollections: 2 };
const MB = 1_000_000;

describe('idle memory reclaim policy', () => {
  it('is due after two quiet ticks in a row, the first time whatever the size', () => {
    const watch = new QuietWatch(policy);
    expect(watch.tick(0.2, 80 * MB)).toBe(false);
    expect(watch.tick(0.2, 80 * MB)).toBe('aging');
  });

  it('starts counting quiet over at a busy tick', () => {
    const watch = new QuietWatch(policy);
    expect(watch.tick(1, 80 * MB)).toBe(false);
    expect(watch.tick(40, 80 * MB)).toBe(false); // a request
    expect(watch.tick(5, 80 * MB)).toBe(false); // at the limit counts as quiet
    expect(watch.tick(5.1, 80 * MB)).toBe(false);
    expect(watch.tick(0, 80 * MB)).toBe(false);
    expect(watch.tick(0, 80 * MB)).toBe('aging');
  });

  it('after a reclaim, waits for the resident set to grow by growthBytes, then for quiet again', () => {
    const watch = new QuietWatch(policy);
    watch.tick(0, 88 * MB);
    expect(watch.tick(0, 88 * MB)).toBe('aging');
    watch.reclaimed(79 * MB, 76 * MB); // gave back 3 MB: not worth another
    expect(watch.tick(0, 76 * MB)).toBe(false);
    expect(watch.tick(0, 79.9 * MB)).toBe(false); // quiet, but grew by less than 4 MB
    expect(watch.tick(30, 80 * MB)).toBe(false); // grown enough, but busy
    expect(watch.tick(0, 80 * MB)).toBe(false);
    expect(watch.tick(0, 80 * MB)).toBe('aging');
  });

  it('after freed memory (a worker thread ended), is due at the next quiet moment though the resident set shrank', () => {
    const watch = new QuietWatch(policy);
    watch.tick(0, 88 * MB);
    expect(watch.tick(0, 88 * MB)).toBe('aging');
    watch.reclaimed(82 * MB, 80 * MB);
    expect(watch.tick(20, 70 * MB, true)).toBe(false); // freed while busy: remembered
    expect(watch.tick(0, 70 * MB)).toBe(false);
    expect(watch.tick(0, 70 * MB)).toBe('aging');
    watch.reclaimed(70 * MB, 66 * MB); // 4 MB back: due again at the next quiet moment
    expect(watch.tick(0, 66 * MB)).toBe(false);
    expect(watch.tick(0, 66 * MB)).toBe('follow-up');
    watch.reclaimed(66 * MB, 65 * MB);
    expect(watch.tick(0, 65 * MB)).toBe(false);
    expect(watch.tick(0, 65 * MB)).toBe(false); // nothing freed, nothing grown: not due again
  });

  it('after a reclaim that gave back growthBytes, is due again at each quiet moment until one gives back less', () => {
    const watch = new QuietWatch(policy);
    watch.tick(0, 194 * MB);
    expect(watch.tick(0, 194 * MB)).toBe('aging');
    watch.reclaimed(194 * MB, 178 * MB); // right after a burst: a worker's memory still going
    expect(watch.tick(30, 150 * MB)).toBe(false); // busy: waits for quiet
    expect(watch.tick(0, 120 * MB)).toBe(false);
    expect(watch.tick(0, 90 * MB)).toBe('follow-up'); // no aging collections: see ReclaimDue
    watch.reclaimed(90 * MB, 80 * MB);
    expect(watch.tick(0, 80 * MB)).toBe(false);
    expect(watch.tick(0, 80 * MB)).toBe('follow-up');
    watch.reclaimed(80 * MB, 78 * MB);
    for (let i = 0; i < 10; i++) expect(watch.tick(0, 79 * MB)).toBe(false);
  });

  it('ages bytecode at a reclaim that growth or freed memory calls for, even when one that paid came just before', () => {
    const watch = new QuietWatch(policy);
    watch.tick(0, 100 * MB);
    expect(watch.tick(0, 100 * MB)).toBe('aging');
    watch.reclaimed(100 * MB, 90 * MB);
    expect(watch.tick(0, 90 * MB, true)).toBe(false); // a worker ended
    expect(watch.tick(0, 90 * MB)).toBe('aging');
    watch.reclaimed(90 * MB, 80 * MB);
    expect(watch.tick(0, 84 * MB)).toBe(false);
    expect(watch.tick(0, 84 * MB)).toBe('aging'); // grew 4 MB from 80
  });

  it('counts growth from the lowest resident set since the last reclaim, not from what the reclaim left', () => {
    const watch = new QuietWatch(policy);
    watch.tick(0, 180 * MB);
    expect(watch.tick(0, 180 * MB)).toBe('aging');
    watch.reclaimed(181 * MB, 178 * MB);
    expect(watch.tick(0, 100 * MB)).toBe(false);
    expect(watch.tick(0, 86 * MB)).toBe(false); // shrank by itself: 4 MB above 178 never comes
    expect(watch.tick(0, 89.9 * MB)).toBe(false);
    expect(watch.tick(0, 90 * MB)).toBe('aging'); // 4 MB above the lowest, 86
  });

  it("the server's policy: a second of quiet (at most 30 ms of CPU a tick), 4 MB of growth", () => {
    expect(RECLAIM_POLICY.tickMs * RECLAIM_POLICY.quietTicks).toBe(1_000);
    expect(RECLAIM_POLICY.quietCpuMs).toBe(30);
    expect(RECLAIM_POLICY.growthBytes).toBe(4_000_000);
  });
});
