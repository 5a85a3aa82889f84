/**
 * The Electron supervisor (electron/server-process.ts) under plain Node against the real server
 * entry, the bundle dist/gatehouse.mjs: start → ready, kill -9 → restart with back-off, stop.
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_BUNDLE } from '../../server/cli/launch.js';
import { nodeSpawner, ServerSupervisor, type ReadyMessage } from '../../electron/server-process.js';

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
