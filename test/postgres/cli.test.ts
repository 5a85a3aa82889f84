/**
 * The CLI in PostgreSQL mode (issue 26), on a real PostgreSQL 15 server: `gatehouse status` shows
 * the engine, pool and migration state; backups are pg_dump's (the CLI says so); a bad URL or pool
 * size is one sentence.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, pgMigrationsFolder } from '../../server/db/postgres.js';
import { PG_BACKUP_ADVICE, PG_ROTATE_ADVICE } from '../../server/db/postgres-options.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.js';

let server: PostgresServer;
let dataDir: string;
/** The PostgreSQL migrations this version ships. */
const known = (JSON.parse(readFileSync(join(pgMigrationsFolder(), 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] }).entries.length;

beforeAll(async () => {
  ensureBuilt();
  server = await startPostgres();
  dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-pg-cli-'));
}, 180_000);

afterAll(() => {
  server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('gatehouse CLI in PostgreSQL mode', () => {
  it('status shows the engine, the pool and the migrations pending, then applied', async () => {
    const url = await server.createDatabase();
    const env = { GATEHOUSE_DATABASE_URL: url.replace('postgres@', 'postgres:secret@'), GATEHOUSE_DATABASE_POOL: '4', GATEHOUSE_DATA_DIR: dataDir };
    const before = await runCli(['status', '--json'], env);
    expect(before.code, before.stderr).toBe(0);
    const shown = JSON.parse(before.stdout);
    expect(shown).toEqual({
      engine: 'postgres',
      database: url.replace('postgres@', 'postgres:***@'),
      serverVersion: expect.stringMatching(/^15\./),
      pool: { max: 4, statementTimeoutMs: 5000 },
      migrations: { applied: 0, known, pending: known },
    });
    const db = await openPostgres({ url });
    await db.$client.end();
    const after = await runCli(['status'], env);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toContain(`Engine           PostgreSQL ${shown.serverVersion} (${shown.database})`);
    expect(after.stdout).toContain('Pool             at most 4 connections, statement timeout 5000 ms');
    expect(after.stdout).toContain(`Schema           ${known} migrations applied, 0 pending`);
    expect(after.stdout).not.toContain('secret');
  });

  it('backup and restore say to use pg_dump, rotate-keys to use a running instance; a bad URL or pool size is one sentence', async () => {
    const env = { GATEHOUSE_DATABASE_URL: server.url('postgres'), GATEHOUSE_DATA_DIR: dataDir };
    for (const args of [['backup'], ['restore', 'x.gatehouse-backup']]) {
      const res = await runCli(args, env);
      expect([res.code, res.stderr.trim()]).toEqual([1, PG_BACKUP_ADVICE]);
    }
    const rotate = await runCli(['rotate-keys'], env);
    expect([rotate.code, rotate.stderr.trim()]).toEqual([1, PG_ROTATE_ADVICE]);
    const bad = await runCli(['status'], { ...env, GATEHOUSE_DATABASE_URL: 'mysql://h/db' });
    expect([bad.code, bad.stderr.trim()]).toEqual([1, 'GATEHOUSE_DATABASE_URL must be a postgres:// URL.']);
    const pool = await runCli(['status'], { ...env, GATEHOUSE_DATABASE_POOL: 'many' });
    expect([pool.code, pool.stderr.trim()]).toEqual([1, 'GATEHOUSE_DATABASE_POOL must be a whole number of at least 4.']);
  });
});
