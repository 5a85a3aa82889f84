/**
 * The Electron supervisor (electron/server-process.ts) under plain Node against the real server
 * entry, the bundle dist/gatehouse.mjs: start → ready, kill -9 → restart with back-off, stop;
 * a server that refuses to start (port in use, data directory locked) → give up fast, quoting it.
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SERVER_BUNDLE } from '../../server/cli/launch.js';
import { nodeSpawner, ServerStartError, ServerSupervisor, type ReadyMessage } from '../../electron/server-process.js';

const root = new URL('../..', import.meta.url).pathname;
const cliPath = join(root, SERVER_BUNDLE);
let dataDir: string;

beforeAll(() => {
  execSync('node scripts/build-if-stale.mjs', { cwd: root, stdio: 'inherit' });
  dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-supervisor-'));
}, 180_000);

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const spawn = () =>
  nodeSpawner({ cliPath, dataDir, args: ['--port', '0'], env: { LOG_LEVEL: 'warn' }, execPath: process.execPath, stdio: 'ignore' });

function next<T>(sup: ServerSupervisor, event: string): Promise<T> {
  return new Promise((resolve) => sup.once(event, resolve));
}

describe('server supervisor', () => {
  it('starts the server, restarts it with back-off after kill -9, and stops it', async () => {
    const sup = new ServerSupervisor({ spawn: spawn(), backoffMs: [300, 600], readyTimeoutMs: 20_000 });
    const statuses: string[] = [];
    sup.on('status', (s) => statuses.push(s));
    try {
      const ready = await sup.start();
      expect(ready.type).toBe('ready');
      expect(ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(sup.status).toBe('running');
      const health = await fetch(`${ready.url}/healthz`);
      expect(health.status).toBe(200);

      const firstPid = sup.pid!;
      const scheduled = next<{ delayMs: number; attempt: number }>(sup, 'restart-scheduled');
      const readyAgain = next<ReadyMessage>(sup, 'ready');
      const crashedAt = Date.now();
      process.kill(firstPid, 'SIGKILL');
      expect(await scheduled).toEqual({ delayMs: 300, attempt: 1 });
      const again = await readyAgain;
      expect(Date.now() - crashedAt).toBeGreaterThanOrEqual(300);
      expect(sup.pid).not.toBe(firstPid);
      expect((await fetch(`${again.url}/healthz`)).status).toBe(200);

      // A second crash soon after waits longer (the back-off grows until a stable run).
      const second = next<{ delayMs: number; attempt: number }>(sup, 'restart-scheduled');
      const readyThird = next<ReadyMessage>(sup, 'ready');
      process.kill(sup.pid!, 'SIGKILL');
      expect(await second).toEqual({ delayMs: 600, attempt: 2 });
      await readyThird;

      const lastPid = sup.pid!;
      const lastUrl = sup.url!;
      await sup.stop();
      expect(sup.status).toBe('stopped');
      expect(() => process.kill(lastPid, 0)).toThrow();
      await expect(fetch(`${lastUrl}/healthz`)).rejects.toThrow();
      expect(statuses).toEqual(['starting', 'running', 'restarting', 'running', 'restarting', 'running', 'stopping', 'stopped']);
    } finally {
      await sup.stop();
    }
  });

  it('cancels a pending restart when stopped during the back-off', async () => {
    const sup = new ServerSupervisor({ spawn: spawn(), backoffMs: [60_000] });
    await sup.start();
    const scheduled = next<{ delayMs: number }>(sup, 'restart-scheduled');
    process.kill(sup.pid!, 'SIGKILL');
    expect((await scheduled).delayMs).toBe(60_000);
    expect(sup.status).toBe('restarting');
    const started = Date.now();
    await sup.stop();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(sup.status).toBe('stopped');
    expect(sup.pid).toBeUndefined();
    // And it can be started again afterwards (the tray's "Restart server").
    const again = await sup.start();
    expect((await fetch(`${again.url}/healthz`)).status).toBe(200);
    await sup.stop();
  });

  it('treats a server that never becomes ready as failed, kills it and gives up after the allowed restarts', async () => {
    // Node running a script that never sends the ready message.
    const sup = new ServerSupervisor({
      spawn: nodeSpawner({ cliPath: join(root, 'test/unit/fixtures/never-ready.mjs'), dataDir, execPath: process.execPath, stdio: 'ignore' }),
      readyTimeoutMs: 300,
      backoffMs: [50],
      maxRestarts: 1,
    });
    const timeouts: unknown[] = [];
    sup.on('ready-timeout', (t) => timeouts.push(t));
    await expect(sup.start()).rejects.toThrow(/before it was ready/);
    expect(sup.status).toBe('failed');
    expect(timeouts).toHaveLength(2);
    await sup.stop();
  });
});

describe('server supervisor: refusal to start', () => {
  const exitsEarly = (mode: string, stdio: 'ignore' | 'inherit' = 'ignore') =>
    nodeSpawner({ cliPath: join(root, 'test/unit/fixtures/exits-early.mjs'), dataDir, env: { FIXTURE_MODE: mode }, execPath: process.execPath, stdio });

  /** Starts `sup`, expecting it to give up; returns the error and what happened on the way. */
  async function giveUp(sup: ServerSupervisor) {
    const scheduled: unknown[] = [];
    const exits: (number | null)[] = [];
    sup.on('restart-scheduled', (s) => scheduled.push(s));
    sup.on('exit', ({ code }: { code: number | null }) => exits.push(code));
    const started = Date.now();
    const error = await sup.start().then(
      () => expect.fail('the start should have failed'),
      (e: unknown) => e,
    );
    return { error: error as ServerStartError, scheduled, exits, ms: Date.now() - started };
  }

  it('gives up after three exits with code 1 before ready, with short retries, quoting the port in use', async () => {
    const running = new ServerSupervisor({ spawn: spawn() });
    const otherDir = mkdtempSync(join(tmpdir(), 'gatehouse-supervisor-other-'));
    try {
      const { url } = await running.start();
      const { port } = new URL(url);
      const sup = new ServerSupervisor({
        spawn: nodeSpawner({ cliPath, dataDir: otherDir, args: ['--port', port], env: { LOG_LEVEL: 'warn' }, execPath: process.execPath, stdio: 'ignore' }),
        startupRetryMs: 50,
      });
      const { error, scheduled, exits, ms } = await giveUp(sup);
      expect(error).toBeInstanceOf(ServerStartError);
      expect(error.message).toBe(`The server could not start: Port ${port} on 127.0.0.1 is already in use.`);
      expect(error.reason).toBe(`Port ${port} on 127.0.0.1 is already in use.`);
      expect(error.exitCode).toBe(1);
      expect(scheduled).toEqual([
        { delayMs: 50, attempt: 1 },
        { delayMs: 50, attempt: 2 },
      ]);
      expect(exits).toEqual([1, 1, 1]);
      expect(sup.status).toBe('failed');
      expect(ms).toBeLessThan(15_000);
      // The running server was not disturbed.
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      await sup.stop();
    } finally {
      await running.stop();
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  it('quotes the lock when another server uses the data directory (default retries: 3, 500 ms apart)', async () => {
    const running = new ServerSupervisor({ spawn: spawn() });
    try {
      await running.start();
      const sup = new ServerSupervisor({ spawn: spawn() });
      const { error, scheduled, exits } = await giveUp(sup);
      expect(error.message).toBe(
        `The server could not start: Another Gatehouse server (pid ${running.pid}) is using the data directory ${dataDir}; stop it first.`,
      );
      expect(scheduled).toEqual([
        { delayMs: 500, attempt: 1 },
        { delayMs: 500, attempt: 2 },
      ]);
      expect(exits).toEqual([1, 1, 1]);
    } finally {
      await running.stop();
    }
  });

  it("takes the server's last stderr line without the `gatehouse: ` prefix, and still forwards stderr", async () => {
    const forwarded: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      forwarded.push(String(chunk));
      return true;
    });
    try {
      const sup = new ServerSupervisor({ spawn: exitsEarly('say', 'inherit'), maxStartupFailures: 2, startupRetryMs: 10 });
      const { error, exits } = await giveUp(sup);
      expect(error.message).toBe('The server could not start: The fixture refuses to start.');
      expect(exits).toEqual([1, 1]);
      expect(forwarded.join('')).toBe('a warning first\ngatehouse: The fixture refuses to start.'.repeat(2));
    } finally {
      write.mockRestore();
    }
  });

  it('without a word on stderr, says how it exited', async () => {
    const sup = new ServerSupervisor({ spawn: exitsEarly('silent'), startupRetryMs: 10 });
    const { error, exits } = await giveUp(sup);
    expect(error).toBeInstanceOf(ServerStartError);
    expect(error.reason).toBeUndefined();
    expect(error.message).toBe('The server exited with code 1 before it was ready.');
    expect(exits).toEqual([1, 1, 1]);
  });

  it('keeps the normal back-off for exits with code 1 after ready (crashes, not refusals)', async () => {
    const sup = new ServerSupervisor({ spawn: exitsEarly('crash-after-ready'), backoffMs: [20, 40], maxRestarts: 3, maxStartupFailures: 1 });
    const scheduled: unknown[] = [];
    sup.on('restart-scheduled', (s) => scheduled.push(s));
    const failed = new Promise<Error>((resolve) => sup.once('first-failure', resolve));
    await sup.start();
    const error = await failed;
    expect(error).not.toBeInstanceOf(ServerStartError);
    expect(error.message).toBe('The server exited with code 1 while running.');
    expect(scheduled).toEqual([
      { delayMs: 20, attempt: 1 },
      { delayMs: 40, attempt: 2 },
      { delayMs: 40, attempt: 3 },
    ]);
    expect(sup.status).toBe('failed');
  });
});
