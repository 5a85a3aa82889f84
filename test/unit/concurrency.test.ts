/** limitConcurrency: never more than the limit at once, arrival order, a failure frees its slot. */
import { describe, expect, it } from 'vitest';
import { limitConcurrency } from '../../server/util/concurrency.js';

describe('limitConcurrency', () => {
  it('runs at most the limit at a time, in arrival order, and frees the slot of a failed task', async () => {
    const limit = limitConcurrency(2);
    let running = 0;
    let peak = 0;
    const started: number[] = [];
    const releases: (() => void)[] = [];
    const task = async (id: number, fail = false) =>
      limit(async () => {
        started.push(id);
        peak = Math.max(peak, ++running);
        await new Promise<void>((resolve) => releases.push(resolve));
        running--;
        if (fail) throw new Error(`task ${id} failed`);
        return id;
      });
    const results = [task(1, true), task(2), task(3), task(4)].map((p) => p.then((v) => ({ ok: v }), (e: Error) => ({ error: e.message })));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([1, 2]);
    releases.shift()!(); // task 1 fails: task 3 takes its slot
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([1, 2, 3]);
    while (releases.length) {
      releases.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all(results)).toEqual([{ error: 'task 1 failed' }, { ok: 2 }, { ok: 3 }, { ok: 4 }]);
    expect(started).toEqual([1, 2, 3, 4]);
    expect(peak).toBe(2);
  });
});
