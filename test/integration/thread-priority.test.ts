/**
 * `gatehouse serve` gives its event loop priority over its helper threads (server/cli/thread-
 * priority.ts): on Linux every thread but the main one runs at nice +5 once the server is ready.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cleanEnv, ensureBuilt, removeTempDirs, startServer, tempDir } from '../helpers/server-process.js';

/** Field 19 of /proc/<pid>/task/<tid>/stat (after the command name) is the nice value. */
function niceOf(pid: number, tid: string): number {
  return Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
}

describe.runIf(process.platform === 'linux')('thread priority', () => {
  beforeAll(() => ensureBuilt(), 300_000);
  afterAll(() => removeTempDirs());

  it('keeps the main thread at the normal priority and lowers every other thread to nice +5', async () => {
    const server = await startServer(process.execPath, [CLI, 'serve', '--data-dir', tempDir(), '--port', '0'], cleanEnv());
    try {
      const pid = server.child.pid!;
      const tids = readdirSync(`/proc/${pid}/task`);
      expect(tids.length).toBeGreaterThan(4); // libuv's pool alone has four
      const base = niceOf(process.pid, String(process.pid));
      expect(niceOf(pid, String(pid))).toBe(base);
      for (const tid of tids.filter((t) => t !== String(pid))) expect(niceOf(pid, tid)).toBe(Math.min(19, base + 5));
    } finally {
      await server.stop();
    }
  }, 60_000);
});
