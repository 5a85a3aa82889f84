/**
 * The token the desktop panel gets from `gatehouse:get-config` (electron/admin-token.ts), looked up
 * on every call: ADMIN_TOKEN first, else <data>/admin-token. Checked against the real server: after
 * `gatehouse admin-token --rotate` the lookup yields the token the server now accepts.
 */
import { execFileSync, execSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SERVER_BUNDLE } from '../../server/cli/launch.js';
import { currentAdminToken } from '../../electron/admin-token.js';
import { nodeSpawner, ServerSupervisor } from '../../electron/server-process.js';

const root = new URL('../..', import.meta.url).pathname;
const cliPath = join(root, SERVER_BUNDLE);
let dataDir: string;

beforeAll(() => {
  execSync('node scripts/build-if-stale.mjs', { cwd: root, stdio: 'inherit' });
}, 180_000);
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-panel-token-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

const tokenFile = () => join(dataDir, 'admin-token');

describe('currentAdminToken', () => {
  it('prefers ADMIN_TOKEN and then leaves the data directory alone', () => {
    expect(currentAdminToken(dataDir, { ADMIN_TOKEN: 'env-token-0123456789' })).toBe('env-token-0123456789');
    expect(existsSync(tokenFile())).toBe(false);
  });

  it('reads <data>/admin-token when ADMIN_TOKEN is unset or empty (as the server does), creating it 0600 when missing', () => {
    const created = currentAdminToken(dataDir, {});
    expect(created).toMatch(/^gha_/);
    expect(readFileSync(tokenFile(), 'utf8')).toBe(`${created}\n`);
    expect(statSync(tokenFile()).mode & 0o777).toBe(0o600);
    expect(currentAdminToken(dataDir, { ADMIN_TOKEN: '' })).toBe(created);
  });

  it('reads the file ADMIN_TOKEN_FILE names (as the server does), leaving the data directory alone', () => {
    const file = join(dataDir, 'given-token');
    writeFileSync(file, 'file-token-0123456789\n');
    expect(currentAdminToken(dataDir, { ADMIN_TOKEN_FILE: file })).toBe('file-token-0123456789');
    expect(existsSync(tokenFile())).toBe(false);
    expect(currentAdminToken(dataDir, { ADMIN_TOKEN: 'env-token-0123456789', ADMIN_TOKEN_FILE: file })).toBe('env-token-0123456789');
  });

  it('reads the file again on every call', () => {
    writeFileSync(tokenFile(), 'gha_first\n');
    expect(currentAdminToken(dataDir, {})).toBe('gha_first');
    writeFileSync(tokenFile(), 'gha_second\n');
    expect(currentAdminToken(dataDir, {})).toBe('gha_second');
  });
});

describe('currentAdminToken against the running server', () => {
  const overview = (url: string, token: string) =>
    fetch(`${url}/api/admin/overview`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

  async function run(env: Record<string, string>, body: (url: string) => Promise<void>) {
    const sup = new ServerSupervisor({
      spawn: nodeSpawner({ cliPath, dataDir, args: ['--port', '0'], env: { LOG_LEVEL: 'warn', ...env }, execPath: process.execPath, stdio: 'ignore' }),
    });
    try {
      await body((await sup.start()).url);
    } finally {
      await sup.stop();
    }
  }

  it('after `gatehouse admin-token --rotate`, yields the token the server accepts', async () => {
    await run({ ADMIN_TOKEN: '' }, async (url) => {
      const before = currentAdminToken(dataDir, {});
      expect(await overview(url, before)).toBe(200);
      const env = { ...process.env, ADMIN_TOKEN: '' };
      const printed = execFileSync(process.execPath, [cliPath, 'admin-token', '--rotate', '--data-dir', dataDir], { env, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
      const after = currentAdminToken(dataDir, {});
      expect(after).toBe(printed);
      expect(after).not.toBe(before);
      // The server re-reads the file within a second.
      await expect.poll(() => overview(url, before), { timeout: 5000, interval: 200 }).toBe(401);
      expect(await overview(url, after)).toBe(200);
    });
  });

  it('with ADMIN_TOKEN in the environment (inherited by the server), yields that token', async () => {
    const envToken = 'env-admin-token-0123456789';
    await run({ ADMIN_TOKEN: envToken }, async (url) => {
      expect(await overview(url, currentAdminToken(dataDir, { ADMIN_TOKEN: envToken }))).toBe(200);
    });
  });
});
