/**
 * The built server (`gatehouse serve`, dist/gatehouse.mjs) as a process in PostgreSQL mode
 * (issue 26), on a real PostgreSQL 15 server: it refuses to start without an admin token every
 * instance shares; with one, a person signs up and an application gets a code and tokens (and a
 * rotated refresh token) through the real HTTP flow; `/healthz` and `/readyz` answer 503 while
 * PostgreSQL is down and 200 again once it is back; backups are pg_dump's.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PG_ADMIN_TOKEN_REQUIRED } from '../../server/db/postgres-options.js';
import { CLI, cleanEnv, ensureBuilt, removeTempDirs, runCli, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.js';

const ADMIN = 'pg-process-admin-token-0123456789';
const REDIRECT = 'http://127.0.0.1:5173/callback';
const PASSWORD = 'correct horse battery';

let pg: PostgresServer;
const running: ServerProcess[] = [];

beforeAll(async () => {
  ensureBuilt();
  pg = await startPostgres();
}, 300_000);

afterEach(async () => {
  for (const server of running.splice(0)) await server.stop();
  removeTempDirs();
});

afterAll(() => pg?.stop());

async function serve(env: Record<string, string>): Promise<ServerProcess> {
  // PostgreSQL mode also needs the key secret that seals keys and secrets in the database.
  const server = await startServer(process.execPath, [CLI, 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', tempDir()], cleanEnv({ GATEHOUSE_KEY_SECRET: 'server-test-key-secret-0123456789abcdef', ...env }));
  running.push(server);
  return server;
}

const admin = (url: string, method: string, path: string, body?: unknown) =>
  fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

const tokenRequest = (url: string, form: Record<string, string>) =>
  fetch(`${url}/api/auth/oauth2/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });

describe('gatehouse serve in PostgreSQL mode', () => {
  it('refuses to start without ADMIN_TOKEN or ADMIN_TOKEN_FILE, in one sentence, and writes no token file', async () => {
    const dir = tempDir();
    const res = await runCli(['serve', '--port', '0', '--data-dir', dir], cleanEnv({ GATEHOUSE_DATABASE_URL: await pg.createDatabase() }));
    expect([res.code, res.stderr.trim()]).toEqual([1, PG_ADMIN_TOKEN_REQUIRED]);
    expect(existsSync(join(dir, 'admin-token'))).toBe(false);
    expect(PG_ADMIN_TOKEN_REQUIRED).toBe('In PostgreSQL mode every instance must accept the same admin token: set ADMIN_TOKEN or ADMIN_TOKEN_FILE.');
    const token = await runCli(['admin-token', '--data-dir', dir], cleanEnv({ GATEHOUSE_DATABASE_URL: pg.url('postgres') }));
    expect([token.code, token.stderr.trim()]).toEqual([1, PG_ADMIN_TOKEN_REQUIRED]);
  });

  it('signs a person up and issues a code, tokens and a rotated refresh token over HTTP', async () => {
    const server = await serve({ GATEHOUSE_DATABASE_URL: await pg.createDatabase(), GATEHOUSE_DATABASE_POOL: '4', ADMIN_TOKEN: ADMIN });
    const { url } = server;
    expect(server.line).toContain('admin token from ADMIN_TOKEN');

    const created = await admin(url, 'POST', '/api/admin/applications', {
      id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: [REDIRECT], authPolicy: { signup_policy: 'open' },
    });
    expect(created.status, await created.clone().text()).toBe(201);

    const signUp = await fetch(`${url}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD, name: 'Ada Lovelace', applicationId: 'notes' }),
    });
    expect(signUp.status, await signUp.clone().text()).toBe(201);
    // Signed in again with the password, as a returning person is.
    const signIn = await fetch(`${url}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD, applicationId: 'notes' }),
    });
    expect(signIn.status, await signIn.clone().text()).toBe(200);
    const cookie = signIn.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='))!.split(';')[0]!;

    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      response_type: 'code', client_id: 'notes', redirect_uri: REDIRECT, scope: 'openid offline_access', state: 'st-1',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    });
    const authorized = await fetch(`${url}/api/auth/oauth2/authorize?${query}`, { redirect: 'manual', headers: { cookie } });
    expect(authorized.status, await authorized.clone().text()).toBe(302);
    const back = new URL(authorized.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('st-1');
    const code = back.searchParams.get('code')!;
    expect(code).toBeTruthy();

    const issued = await tokenRequest(url, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: 'notes', code_verifier: verifier });
    expect(issued.status, await issued.clone().text()).toBe(200);
    expect(issued.headers.get('cache-control')).toBe('no-store');
    const tokens = (await issued.json()) as { access_token: string; refresh_token: string; id_token: string; token_type: string; scope: string };
    expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'openid offline_access' });
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.id_token.split('.')).toHaveLength(3);
    const rotated = await tokenRequest(url, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'notes' });
    expect(rotated.status, await rotated.clone().text()).toBe(200);
    const next = (await rotated.json()) as { refresh_token: string };
    expect(next.refresh_token).not.toBe(tokens.refresh_token);

    // The access token is accepted where it is checked (introspection by the application's admin view: userinfo).
    const userinfo = await fetch(`${url}/api/auth/oauth2/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(userinfo.status, await userinfo.clone().text()).toBe(200);
    const idClaims = JSON.parse(Buffer.from(tokens.id_token.split('.')[1]!, 'base64url').toString()) as { sub: string };
    expect(await userinfo.json()).toEqual({ sub: idClaims.sub });

    // The code is spent: a replay is refused and revokes what it issued, the rotated token included.
    const again = await tokenRequest(url, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: 'notes', code_verifier: verifier });
    expect([again.status, ((await again.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);
    const afterReplay = await tokenRequest(url, { grant_type: 'refresh_token', refresh_token: next.refresh_token, client_id: 'notes' });
    expect([afterReplay.status, ((await afterReplay.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);

    // Backups are pg_dump's: the admin API says so with its stable code.
    const backup = await admin(url, 'POST', '/api/admin/backups');
    expect([backup.status, ((await backup.json()) as { code: string }).code]).toEqual([409, 'backups_use_pg_dump']);
  });

  it('answers 503 on /healthz and /readyz while PostgreSQL is down, and 200 again once it is back', async () => {
    const { url } = await serve({ GATEHOUSE_DATABASE_URL: await pg.createDatabase(), ADMIN_TOKEN: ADMIN });
    const health = async () => {
      const [h, r] = await Promise.all([fetch(`${url}/healthz`), fetch(`${url}/readyz`)]);
      return { healthz: [h.status, await h.json()], readyz: [r.status, await r.json(), r.headers.get('cache-control')] };
    };
    const up = { healthz: [200, { status: 'ok', database: 'reachable' }], readyz: [200, { status: 'ready' }, null] };
    expect(await health()).toEqual(up);
    pg.halt();
    try {
      const started = Date.now();
      expect(await health()).toEqual({
        healthz: [503, { status: 'unavailable', database: 'unreachable' }],
        readyz: [503, { status: 'not_ready', reason: 'database_unreachable' }, 'no-store'],
      });
      // Promptly: a load balancer's check must not hang on the database.
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      pg.resume();
    }
    let now = await health();
    for (let i = 0; i < 50 && now.healthz[0] !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      now = await health();
    }
    expect(now).toEqual(up);
  });
});
