/**
 * The real server started as a new user would: `npm start` in a temporary data directory, then
 * the admin API over HTTP with the generated token; a second start on the same directory; human-
 * readable logs with `--pretty`; and a clean stop on SIGTERM.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:net';
import Database from 'better-sqlite3';
import { CLI, cleanEnv, ensureBuilt, removeTempDirs, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

const mode = (path: string) => statSync(path).mode & 0o777;

async function admin(server: ServerProcess, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, headers: res.headers, body: res.status === 204 ? null : await res.json() };
}

function portClosed(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('npm start', () => {
  beforeAll(() => ensureBuilt(), 300_000);
  afterAll(() => removeTempDirs());

  it('starts on a fresh data directory, generates a 0600 admin token, serves the admin API, and starts again as a no-op', async () => {
    const data = join(tempDir(), 'data'); // not yet existing: created on start
    const env = cleanEnv({ GATEHOUSE_DATA_DIR: data, PORT: '0' });

    const first = await startServer('npm', ['start', '--silent'], env);
    let firstToken: string;
    try {
      expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(first.url).not.toBe('http://127.0.0.1:0');
      expect(first.tokenFile).toBe(join(data, 'admin-token'));
      expect(first.line).toContain(`issuer ${first.url}`);
      expect(first.line).toContain(`data ${data}`);

      firstToken = readFileSync(first.tokenFile!, 'utf8').trim();
      expect(firstToken).toMatch(/^gha_[A-Za-z0-9_-]{43}$/);
      expect(mode(first.tokenFile!)).toBe(0o600);
      expect(mode(join(data, 'gatehouse.db'))).toBe(0o600);
      expect(mode(data)).toBe(0o700);

      const health = await fetch(`${first.url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok', database: 'reachable' });

      const created = await admin(first, firstToken, 'POST', '/api/admin/applications', {
        id: 'notes',
        name: 'Notes',
        audience: 'https://notes.example.com/api',
        redirectUris: ['https://notes.example.com/cb'],
      });
      expect(created.status).toBe(201);
      expect(created.headers.get('location')).toBe('/api/admin/applications/notes');
      expect(created.body.clientSecret).toMatch(/^ghs_/);
      expect((await admin(first, firstToken, 'GET', '/api/admin/applications')).body.applications).toHaveLength(1);

      const denied = await admin(first, 'not-the-token-0123456789', 'GET', '/api/admin/applications');
      expect(denied.status).toBe(401);
      expect(denied.headers.get('www-authenticate')).toBe('Bearer');
      expect(denied.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    } finally {
      const stopped = await first.stop();
      expect(stopped.code === 0 || stopped.signal === 'SIGTERM', JSON.stringify(stopped)).toBe(true);
    }

    const migrationsAfterFirst = new Database(join(data, 'gatehouse.db'), { readonly: true })
      .prepare('select count(*) as n from __drizzle_migrations')
      .get() as { n: number };

    // Second start on the same directory: same token, data kept, no migration re-applied.
    const second = await startServer('npm', ['start', '--silent'], env);
    try {
      expect(readFileSync(join(data, 'admin-token'), 'utf8').trim()).toBe(firstToken);
      const read = await admin(second, firstToken, 'GET', '/api/admin/applications/notes');
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ id: 'notes', clientType: 'web' });
      expect(JSON.stringify(read.body)).not.toContain('clientSecret');
    } finally {
      await second.stop();
    }
    const db = new Database(join(data, 'gatehouse.db'), { readonly: true });
    const migrations = db.prepare('select count(*) as n from __drizzle_migrations').get() as { n: number };
    db.close();
    expect(migrations.n).toBe(migrationsAfterFirst.n);
    expect(migrations.n).toBeGreaterThan(0);
  }, 600_000);

  it('writes human-readable logs with --pretty (pino-pretty in a worker thread, from the bundle)', async () => {
    const data = tempDir();
    const server = await startServer(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', data, '--pretty'], cleanEnv());
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      // The transport's worker writes on its own thread: wait for its line.
      await expect.poll(() => server.output().stdout, { timeout: 10_000 }).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} [+-]\d{4}\] WARN: scheduled backups are off: /m);
      expect(server.output().stdout).not.toContain('{"level"');
    } finally {
      const stopped = await server.stop();
      expect(stopped).toMatchObject({ code: 0, signal: null });
      expect(server.output().stderr).toBe('');
    }
  }, 120_000);

  it('stops cleanly on SIGTERM: exit code 0, port released, WAL checkpointed', async () => {
    const data = tempDir();
    const server = await startServer(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', data], cleanEnv());
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    expect((await admin(server, token, 'POST', '/api/admin/sso-groups', { id: 'g1', name: 'G' })).status).toBe(201);
    const stopped = await server.stop();
    expect(stopped).toMatchObject({ code: 0, signal: null });
    expect(stopped.ms).toBeLessThan(5000);
    expect(await portClosed(server.url)).toBe(true);
    // A clean close checkpoints the WAL into the database and removes it.
    expect(existsSync(join(data, 'gatehouse.db-wal'))).toBe(false);
    expect(server.output().stderr).toBe('');
    const db = new Database(join(data, 'gatehouse.db'), { readonly: true });
    expect(db.prepare('select id from sso_groups').all()).toEqual([{ id: 'g1' }]);
    db.close();
  }, 120_000);
});
