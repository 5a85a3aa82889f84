/**
 * Low-memory mode (GATEHOUSE_LOW_MEMORY=1, server/cli/launch.ts): `npm start` runs the server
 * with V8's interpreter-only flags and the start-up line says so; everything still works,
 * including Node's `fetch` (WebAssembly stays on), which external sign-in providers use.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PID_FILE } from '../../server/ops/pid-file.js';
import { startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { cleanEnv, ensureBuilt, removeTempDirs, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

const ADMIN = 'low-memory-admin-token-0123456789';

/** The whole start-up line (ServerProcess.line stops after the admin-token part). */
const readyLine = (server: ServerProcess) => server.output().stdout.split('\n').find((l) => l.startsWith('Gatehouse listening on '));

/** The command line of the process serving `dataDir` (its pid file), as argv. */
function servingArgv(dataDir: string): string[] {
  const pid = Number(readFileSync(join(dataDir, PID_FILE), 'utf8').trim());
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

describe('low-memory mode', () => {
  let upstream: OAuthServer;
  beforeAll(async () => {
    ensureBuilt();
    upstream = await startOAuthServer();
  }, 300_000);
  afterAll(async () => {
    await upstream?.stop();
    removeTempDirs();
  });

  it('npm start applies the interpreter-only flags, says so, and signs in through an external OpenID Provider', async () => {
    const data = tempDir();
    const server = await startServer(
      'npm',
      ['start', '--silent'],
      cleanEnv({ GATEHOUSE_DATA_DIR: data, PORT: '0', ADMIN_TOKEN: ADMIN, GATEHOUSE_LOW_MEMORY: '1', OIDC_ISSUER: upstream.url, OIDC_CLIENT_ID: 'downstream', OIDC_CLIENT_SECRET: 'downstream-secret-0123456789' }),
    );
    try {
      expect(readyLine(server)).toMatch(/, admin token from ADMIN_TOKEN, low-memory mode$/);
      const argv = servingArgv(data);
      expect(argv.slice(1, 5)).toEqual(['--max-semi-space-size=1', '--no-opt', '--no-sparkplug', '--optimize-for-size']);

      const created = await fetch(`${server.url}/api/admin/applications`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          id: 'notes', name: 'Notes', audience: 'https://notes.example.com', clientType: 'spa',
          redirectUris: ['http://127.0.0.1:9/callback'], authPolicy: { signup_policy: 'open', allowed_providers: ['email', 'oidc'] },
        }),
      });
      expect(created.status).toBe(201);

      // Starting the external sign-in runs OIDC discovery against the upstream with fetch.
      const start = await fetch(`${server.url}/api/auth/sign-in/oidc?client_id=notes`, { redirect: 'manual' });
      expect(start.status).toBe(302);
      const to = new URL(start.headers.get('location')!);
      expect(`${to.origin}${to.pathname}`).toBe(`${upstream.url}/api/auth/oauth2/authorize`);
      expect(to.searchParams.get('client_id')).toBe('downstream');
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('is off unless asked for', async () => {
    const data = tempDir();
    const server = await startServer('npm', ['start', '--silent'], cleanEnv({ GATEHOUSE_DATA_DIR: data, PORT: '0', ADMIN_TOKEN: ADMIN, GATEHOUSE_LOW_MEMORY: '0' }));
    try {
      expect(readyLine(server)).toMatch(/, admin token from ADMIN_TOKEN$/);
      // The panel's address, for the quick start (README, docs/getting-started.md; issue 25).
      expect(readyLine(server)).toContain(`, control panel ${server.url}/admin/, data `);
      const argv = servingArgv(data);
      expect(argv).toContain('--max-semi-space-size=1');
      expect(argv.filter((arg) => ['--no-opt', '--no-sparkplug', '--optimize-for-size'].includes(arg))).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
