/**
 * Data lifecycle (issue 21) in a served SQLite data directory: the sweeper's first pass after
 * start (pages handed back, `gatehouse status`), and a big delete resumed after the server was
 * killed part-way. Both run the server on a SQLite data directory whatever the project, so the
 * unit-postgres project leaves this file out (vitest.config.ts; issue 45): the PostgreSQL run of
 * the same sweeps and purges is data-lifecycle.test.ts.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/db/client.js';
import { applications } from '../../server/db/schema.js';
import { DEFAULT_AUTH_POLICY } from '../../server/applications/rules.js';
import { exec } from '../../server/db/store.js';
import { seedApplication } from '../helpers/bulk-rows.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { CLI, cleanEnv, removeTempDirs, startServer as spawnServer, tempDir } from '../helpers/server-process.js';
import { OPS_ADMIN_TOKEN, startServer, tempDataDir } from '../helpers/data-dir.js';

const DAY = 86_400_000;

afterEach(() => removeTempDirs());
beforeAll(() => ensureBuilt(), 240_000);

describe('retention sweeper', () => {
  it('makes its first pass soon after start, hands freed pages back, and gatehouse status tells', async () => {
    const dir = tempDataDir();
    const seed = openDatabase(join(dir, 'gatehouse.db'));
    const insert = seed.$client.prepare("INSERT INTO audit_log (id, at, actor, action, details) VALUES (?, ?, 'admin', 'seed', ?)");
    seed.$client.transaction(() => {
      for (let i = 0; i < 5000; i++) insert.run(`aud_${i}`, Date.now() - 500 * DAY, JSON.stringify({ pad: 'x'.repeat(400) }));
    })();
    seed.$client.close();
    const running = await startServer(dir, { GATEHOUSE_SWEEP_INTERVAL: '1' });
    const deadline = Date.now() + 20_000;
    let ops: { sweeper: { lastRun: { pruned: Record<string, number>; vacuumedPages: number } | null } };
    do {
      await new Promise((r) => setTimeout(r, 200));
      ops = await (await fetch(`${running.url}/api/admin/operations`, { headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } })).json();
    } while (!ops.sweeper.lastRun && Date.now() < deadline);
    await running.stop();
    expect(ops.sweeper.lastRun!.pruned).toEqual({ 'audit entries': 5000 });
    expect(ops.sweeper.lastRun!.vacuumedPages).toBeGreaterThan(500);
    const check = new Database(join(dir, 'gatehouse.db'), { readonly: true });
    expect(check.pragma('freelist_count', { simple: true })).toBe(0);
    check.close();
    const status = await runCli(['status', '--data-dir', dir]);
    expect(status.stdout).toMatch(/^Sweeper {10}last pass \S+ \(\d+ ms\): 5000 audit entries, \d+ pages handed back; \d+ rows in \d+ passes$/m);
  }, 60_000);
});

describe('big deletes', () => {
  it('resumes a purge after the server was killed part-way, counting every row once', async () => {
    const dir = tempDir();
    const db = openDatabase(join(dir, 'gatehouse.db'));
    await exec(db.insert(applications).values({ id: 'big', name: 'Big', audience: 'https://big.example.com', redirectUris: ['https://big.example.com/cb'], clientType: 'spa', authPolicy: { ...DEFAULT_AUTH_POLICY, signup_policy: 'open' }, updatedAt: new Date() }));
    await seedApplication(db, 'big', 20_000, 4);
    db.$client.close();
    const env = cleanEnv({ ADMIN_TOKEN: OPS_ADMIN_TOKEN });
    const first = await spawnServer(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', dir], env);
    const res = await fetch(`${first.url}/api/admin/applications/big`, { method: 'DELETE', headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } });
    expect(res.status).toBe(204);
    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const mid = new Database(join(dir, 'gatehouse.db'), { readonly: true });
    const job = mid.prepare('SELECT removed FROM purge_jobs').get() as { removed: string } | undefined;
    const left = (mid.prepare("SELECT count(*) AS n FROM refresh_tokens WHERE token_hash LIKE 'tok_big_%'").get() as { n: number }).n;
    expect(mid.prepare("SELECT count(*) AS n FROM applications WHERE id = 'big'").get()).toEqual({ n: 0 });
    mid.close();
    expect(job).toBeDefined(); // killed part-way: the job and rows remain
    expect(left).toBeGreaterThan(0);

    const second = await spawnServer(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', dir], env);
    try {
      const deadline = Date.now() + 60_000;
      let deletions: unknown[] = [{}];
      while (deletions.length && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        deletions = (await (await fetch(`${second.url}/api/admin/operations`, { headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } })).json()).deletions;
      }
      expect(deletions).toEqual([]);
      const purged = await (await fetch(`${second.url}/api/admin/audit-log?action=application.purged`, { headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } })).json();
      expect(purged.entries[0].details.removed).toEqual({
        refreshTokenFamilies: 20_000, 'refreshTokenFamilies.refresh_tokens': 80_000, members: 20_000, sessionRealms: 20_000,
      });
    } finally {
      await second.stop();
    }
    const after = new Database(join(dir, 'gatehouse.db'), { readonly: true });
    for (const table of ['memberships', 'refresh_token_families', 'refresh_tokens', 'session_realms']) {
      expect((after.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n, table).toBe(0);
    }
    expect(after.prepare('SELECT count(*) AS n FROM people').get()).toEqual({ n: 20_000 });
    after.close();
  }, 120_000);
});
