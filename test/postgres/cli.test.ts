/**
 * The CLI in PostgreSQL mode (issue 26), on a real PostgreSQL 15 server: `gatehouse status` shows
 * the engine, pool and migration state; backups are pg_dump's (the CLI says so); a bad URL or pool
 * size is one sentence.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, pgMigrationsFolder } from '../../server/db/postgres.js';
import { PG_BACKUP_ADVICE, PG_ROTATE_ADVICE } from '../../server/db/postgres-options.js';
import { ConfigError } from '../../server/config.js';
import { withEnvFile } from '../../server/cli/env-file.js';
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
      settings: { source: "this shell's environment", missing: ['GATEHOUSE_ISSUER', 'ADMIN_TOKEN or ADMIN_TOKEN_FILE', 'GATEHOUSE_KEY_SECRET or GATEHOUSE_KEY_SECRET_FILE'] },
      passkeys: null,
      database: url.replace('postgres@', 'postgres:***@'),
      serverVersion: expect.stringMatching(/^15\./),
      pool: { max: 4, statementTimeoutMs: 5000 },
      migrations: { applied: 0, known, pending: known },
      ldap: null,
      radius: null,
    });
    const db = await openPostgres({ url });
    await db.$client.end();
    const after = await runCli(['status'], env);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toContain(`Engine           PostgreSQL ${shown.serverVersion} (${shown.database})`);
    expect(after.stdout).toContain('Pool             at most 4 connections, statement timeout 5000 ms');
    expect(after.stdout).toContain(`Schema           ${known} migrations applied, 0 pending`);
    expect(after.stdout).not.toContain('secret');
    expect(after.stdout).toContain('LDAP             not recorded yet (no server of this version has run here)\n');
    expect(after.stdout).toContain('RADIUS           not recorded yet (no server of this version has run here)\n');
    expect(after.stdout).toContain(
      "Settings         missing GATEHOUSE_ISSUER, ADMIN_TOKEN or ADMIN_TOKEN_FILE, GATEHOUSE_KEY_SECRET or GATEHOUSE_KEY_SECRET_FILE in this shell's environment: every instance needs them\n",
    );
  });

  it("status --env-file reads the service's environment file; without one it names the settings it lacks", async () => {
    const url = await server.createDatabase();
    const shell = { GATEHOUSE_DATA_DIR: dataDir }; // the operator's shell: none of the service's settings
    const lost = await runCli(['status'], shell);
    expect([lost.code, lost.stderr.trim()]).toEqual([
      1,
      `There is no Gatehouse database in ${dataDir}, and GATEHOUSE_DATABASE_URL is not set in this shell's environment: ` +
        "for a server in PostgreSQL mode give --env-file with the service's environment file (or set GATEHOUSE_DATABASE_URL); for the embedded store give --data-dir (or GATEHOUSE_DATA_DIR).",
    ]);
    // The guide's environment file: comments, quotes, `export`, a token file the operator may not read.
    const file = join(dataDir, 'gatehouse.env');
    writeFileSync(file, [
      '# /etc/gatehouse/gatehouse.env',
      `GATEHOUSE_DATABASE_URL="${url}"`,
      "export GATEHOUSE_ISSUER='https://id.example.com'",
      'ADMIN_TOKEN_FILE=/nonexistent/admin-token',
      'GATEHOUSE_DATABASE_POOL=6 # per instance',
      '',
    ].join('\n'));
    const text = await runCli(['status', '--env-file', file], shell);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Pool             at most 6 connections, statement timeout 5000 ms\n');
    expect(text.stdout).toContain(`Settings         missing GATEHOUSE_KEY_SECRET or GATEHOUSE_KEY_SECRET_FILE in ${file}: every instance needs them\n`);
    expect(text.stdout).toContain('Passkeys         available (RP ID id.example.com)');
    writeFileSync(file, `GATEHOUSE_DATABASE_URL=${url}\nGATEHOUSE_ISSUER=https://id.example.com\nADMIN_TOKEN_FILE=/x\nGATEHOUSE_KEY_SECRET_FILE=/y\n`);
    expect(JSON.parse((await runCli(['status', '--json', '--env-file', file], shell)).stdout).settings).toEqual({ source: file, missing: [] });
    // A file that is not there: Gatehouse's sentence. Node 20 itself looks for `--env-file` anywhere on its
    // command line, so there it stops first, with its own message (Node 22 reads only its own flags).
    const nope = join(dataDir, 'nope.env');
    expect(() => withEnvFile(nope)).toThrow(new ConfigError(`--env-file names ${nope}, which does not exist.`));
    const missing = await runCli(['status', '--env-file', nope], shell);
    expect([missing.code, missing.stderr.trim()]).toEqual(
      process.versions.node.startsWith('20.') ? [9, `${process.execPath}: ${nope}: not found`] : [1, `--env-file names ${nope}, which does not exist.`],
    );
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
