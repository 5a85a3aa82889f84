/**
 * The benchmark's in-process figures (server/cli/bench-metrics.ts): with GATEHOUSE_BENCH_METRICS=1
 * a served process answers `{type: 'bench-metrics'}` over its IPC channel with its event-loop
 * delay and memory; without it, it stays silent. The built server started as a person starts it,
 * `node bin/gatehouse.js serve` with no flags: one process, which applied its launch settings to
 * itself (server/cli/launch.ts, issue 45).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, cleanEnv, ensureBuilt, removeTempDirs, tempDir } from '../helpers/server-process.js';

function serve(env: Record<string, string>): Promise<ChildProcess> {
  const child = fork(join(ROOT, 'bin/gatehouse.js'), ['serve', '--data-dir', tempDir(), '--port', '0'], {
    execArgv: [],
    env: cleanEnv({ ADMIN_TOKEN: 'bench-metrics-admin-token-0123456789', ...env }),
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    child.on('message', (m: { type?: string }) => m.type === 'ready' && resolve(child));
  });
}

/** The first `bench-metrics` answer, or undefined when none comes within `ms`. */
function ask(child: ChildProcess, message: object, ms = 1_500): Promise<Record<string, any> | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    child.on('message', (m: { type?: string }) => {
      if (m.type !== 'bench-metrics') return;
      clearTimeout(timer);
      resolve(m);
    });
    child.send(message);
  });
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

describe('bench metrics over IPC', () => {
  beforeAll(() => ensureBuilt(), 300_000);
  afterAll(() => removeTempDirs());

  it('answers with loop delay and memory only when GATEHOUSE_BENCH_METRICS=1', async () => {
    const [on, off] = await Promise.all([serve({ GATEHOUSE_BENCH_METRICS: '1' }), serve({})]);
    try {
      // Memory at once; the loop-delay histogram only from the first reset on.
      const first = await ask(on, { type: 'bench-metrics', reset: true });
      expect(first).toMatchObject({ type: 'bench-metrics', loopDelay: null, memory: { rss: expect.any(Number) } });
      expect(first!.memory.heapUsed).toBeLessThan(first!.memory.rss);
      await new Promise((resolve) => setTimeout(resolve, 300)); // a few hundred 1 ms samples
      const second = await ask(on, { type: 'bench-metrics', reset: true });
      expect(second!.loopDelay.samples).toBeGreaterThan(50);
      expect(second!.loopDelay.maxMs).toBeGreaterThan(0);
      // After the reset the histogram starts again (fewer samples than before it).
      const third = await ask(on, { type: 'bench-metrics' });
      expect(third!.loopDelay.samples).toBeLessThan(second!.loopDelay.samples);
      expect(await ask(off, { type: 'bench-metrics' })).toBeUndefined();
    } finally {
      await Promise.all([stop(on), stop(off)]);
    }
  }, 60_000);

  it('one process: the one started answers, with its launch settings applied to itself, and stops on SIGINT with 0', async () => {
    const server = await serve({ GATEHOUSE_BENCH_METRICS: '1', GATEHOUSE_LOW_MEMORY: '1' });
    try {
      const answer = (await ask(server, { type: 'bench-metrics' }))!;
      expect(answer.pid).toBe(server.pid);
      // No child process: the bin imported the server instead of starting it again.
      expect(readFileSync(`/proc/${server.pid}/task/${server.pid}/children`, 'utf8').trim()).toBe('');
      expect(answer.launch).toEqual({
        v8Flags: ['--semi-space-growth-factor=1', '--no-opt', '--no-sparkplug', '--optimize-for-size'],
        mmapThreshold: true,
        arenaMax: true,
        lowMemory: true,
      });
      // The young generation kept at V8's initial 1 MiB semi-space (×2), as --max-semi-space-size=1 keeps it.
      expect(answer.heapSpaces.new_space).toBeLessThanOrEqual(2 * 2 ** 20);
      expect(answer.malloc).toMatchObject({ arena: expect.any(Number), mmapped: expect.any(Number) });
    } finally {
      const exited = new Promise<[number | null, string | null]>((resolve) => server.once('exit', (code, signal) => resolve([code, signal])));
      server.kill('SIGINT');
      expect(await exited).toEqual([0, null]);
    }
  }, 60_000);
});
