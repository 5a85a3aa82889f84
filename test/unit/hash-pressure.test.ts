import { describe, expect, it } from 'vitest';
import { afterHashes, hashRunning, hashStarted } from '../../server/util/hash-pressure.js';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('hash pressure (util/hash-pressure.ts)', () => {
  it('calls back at the next turn once the last running hash ends, and at once when none runs', async () => {
    const calls: string[] = [];
    afterHashes(() => calls.push('idle'));
    expect(calls).toEqual([]); // never inside the caller's turn
    await nextTurn();
    expect(calls).toEqual(['idle']);

    const first = hashStarted();
    const second = hashStarted();
    afterHashes(() => calls.push('after both'));
    first();
    first(); // a second end of the same hash counts once
    await nextTurn();
    expect(hashRunning()).toBe(true);
    expect(calls).toEqual(['idle']);
    second();
    expect(hashRunning()).toBe(false);
    expect(calls).toEqual(['idle']);
    await nextTurn();
    expect(calls).toEqual(['idle', 'after both']);
  });
});
