/**
 * `gatehouse serve` gives its event loop priority over background work (server/cli/thread-
 * priority.ts): on Linux the threads of libuv's pool, where argon2 hashes run, are 10 nicer than
 * the main thread once the server is ready; the main thread and V8's helper threads, which the
 * main thread waits for, keep the normal priority.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { threadPoolIds, threadPoolSize } from '../../server/cli/thread-priority.js';
import { CLI, cleanEnv, ensureBuilt, removeTempDirs, startServer, tempDir } from '../helpers/server-process.js';

/** Fields after the command name in /proc/<pid>/task/<tid>/stat: utime, stime (11, 12) and nice (16). */
function statOf(pid: number, tid: string): { cpuTicks: number; nice: number } {
  const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { cpuTicks: Number(fields[11]) + Number(fields[12]), nice: Number(fields[16]) };
}

const ADMIN = 'thread-priority-admin-token-0123456789';

describe.runIf(process.platform === 'linux')('thread priority', () => {
  beforeAll(() => ensureBuilt(), 300_000);
  afterAll(() => removeTempDirs());

  it('reads the pool size as libuv does', () => {
    expect(threadPoolSize(undefined)).toBe(4);
    expect(threadPoolSize('8')).toBe(8);
    expect(threadPoolSize('0')).toBe(1);
    expect(threadPoolSize('many')).toBe(1);
    expect(threadPoolSize('5000')).toBe(1024);
  });

  it('finds the threads of libuv pool by asking them', async () => {
    const pool = await threadPoolIds(4);
    expect(pool.size).toBe(4);
    expect(pool.has(process.pid)).toBe(false);
    const tasks = new Set(readdirSync('/proc/self/task').map(Number));
    for (const tid of pool) expect(tasks.has(tid)).toBe(true);
  });

  it('lowers the pool threads that hash passwords to nice +10 and keeps the main and V8 threads at the normal priority', async () => {
    const env = cleanEnv({ ADMIN_TOKEN: ADMIN, GATEHOUSE_SIGN_UP_RATE_LIMIT: '1000' });
    const server = await startServer(process.execPath, [CLI, 'serve', '--data-dir', tempDir(), '--port', '0'], env);
    try {
      const pid = server.child.pid!;
      const base = statOf(process.pid, String(process.pid)).nice;
      const lowered = Math.min(19, base + 10);
      const threads = () => readdirSync(`/proc/${pid}/task`).filter((tid) => tid !== String(pid));
      expect(statOf(pid, String(pid)).nice).toBe(base);
      const niced = threads().filter((tid) => statOf(pid, tid).nice === lowered);
      expect(niced).toHaveLength(4); // libuv's pool, by default four threads
      for (const tid of threads().filter((t) => !niced.includes(t))) expect(statOf(pid, tid).nice).toBe(base);

      // Password hashing runs on the lowered threads: they do most of the work of eight sign-ups.
      const created = await fetch(`${server.url}/api/admin/applications`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'prio', name: 'Prio', audience: 'https://prio.example.com/api', redirectUris: ['http://127.0.0.1:5173/cb'], authPolicy: { signup_policy: 'open' } }),
      });
      expect(created.status).toBe(201);
      const signUp = (i: number) =>
        fetch(`${server.url}/api/auth/sign-up/email`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: `p${i}@example.com`, password: 'correct horse battery staple', name: `P${i}`, applicationId: 'prio' }),
        });
      // The first sign-up starts the password-strength worker (zxcvbn, its dictionaries loading once);
      // that thread is background work too and sets the lowered priority on itself.
      expect((await signUp(100)).status).toBe(201);
      const strengthWorker = threads().filter((tid) => !niced.includes(tid) && statOf(pid, tid).nice === lowered);
      expect(strengthWorker).toHaveLength(1);
      niced.push(...strengthWorker);
      const before = new Map(threads().map((tid) => [tid, statOf(pid, tid).cpuTicks]));
      const signUps = await Promise.all(Array.from({ length: 8 }, (_, i) => signUp(i)));
      expect(signUps.map((r) => r.status)).toEqual(Array(8).fill(201));
      const grew = (tids: string[]) => tids.reduce((sum, tid) => sum + statOf(pid, tid).cpuTicks - (before.get(tid) ?? 0), 0);
      const others = threads().filter((tid) => !niced.includes(tid) && before.has(tid));
      expect(grew(niced)).toBeGreaterThan(grew(others));
    } finally {
      await server.stop();
    }
  }, 60_000);
});
