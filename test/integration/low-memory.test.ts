/**
 * Low-memory mode (GATEHOUSE_LOW_MEMORY=1, server/cli/launch.ts): `npm start` runs the server
 * with V8's interpreter-only flags, set by the server on itself (one process: `node
 * bin/gatehouse.js serve` is the server), and the start-up line says so; everything still works,
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

const servingPid = (dataDir: string) => Number(readFileSync(join(dataDir, PID_FILE), 'utf8').trim());

/** The command line of the process serving `dataDir` (its pid file), as argv. */
function servingArgv(dataDir: string): string[] {
  return readFileSync(`/proc/${servingPid(dataDir)}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

/** The child processes of the process serving `dataDir` (none: it is the server, not a launcher). */
const childrenOf = (dataDir: string) => readFileSync(`/proc/${servingPid(dataDir)}/task/${servingPid(dataDir)}/children`, 'utf8').trim();

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
      // The process npm started serves: no flags on its command line, no second process.
      expect(servingArgv(data).slice(1)).toEqual(['bin/gatehouse.js', 'serve']);
      expect(childrenOf(data)).toBe('');

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
      expect(servingArgv(data).slice(1)).toEqual(['bin/gatehouse.js', 'serve']);
      expect(childrenOf(data)).toBe('');
    } finally {
      await server.stop();
    }
  }, 120_000);
});
