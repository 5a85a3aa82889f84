/**
 * The second-factor key travels in encrypted backups (ops/backup-files.ts): a backup of a running
 * server restored into another data directory still accepts the authenticator app enrolled
 * before (its secret is sealed with that key); an unencrypted backup leaves the key out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { loadConfig } from '../../server/config.js';
import { start } from '../../server/main.js';
import { SECOND_FACTOR_KEY_FILE } from '../../server/accounts/second-factor/secret-box.js';
import { PASSWORD, createClient, signUpCookie, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { removeTempDirs, tempDir } from '../helpers/server-process.js';

const PASS = 'backup passphrase for the second factor';
let server: OAuthServer;

beforeAll(async () => {
  ensureBuilt();
  server = await startOAuthServer();
});
afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

describe('backups and the second-factor key', () => {
  it('restores an encrypted backup whose TOTP still signs in; an unencrypted one leaves the key out', async () => {
    await createClient(server, { id: 'notes', name: 'Notes', audience: 'https://notes.example/api', clientType: 'spa', redirectUris: ['http://127.0.0.1:5173/cb'] });
    const cookie = await signUpCookie(server, 'ada@example.com', 'notes');
    const json = { cookie, 'content-type': 'application/json' };
    const { secret } = (await (await fetch(`${server.url}/api/me/totp`, { method: 'POST', headers: json, body: '{}' })).json()) as { secret: string };
    const totp = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
    const confirmed = await fetch(`${server.url}/api/me/totp/confirm`, { method: 'POST', headers: json, body: JSON.stringify({ code: totp.generate({ timestamp: Date.now() - 30_000 }) }) });
    expect(confirmed.status).toBe(200);
    const dataDir = server.running.config.dataDir;
    const key = readFileSync(join(dataDir, SECOND_FACTOR_KEY_FILE), 'utf8');

    const out = join(tempDir(), 'encrypted.gatehouse-backup');
    expect((await runCli(['backup', '--data-dir', dataDir, '--out', out, '--passphrase-env', 'GH_PASS'], { GH_PASS: PASS })).code).toBe(0);
    const plain = join(tempDir(), 'plain.gatehouse-backup');
    expect((await runCli(['backup', '--data-dir', dataDir, '--out', plain, '--unencrypted'])).code).toBe(0);
    const header = (file: string) => JSON.parse(readFileSync(file, 'utf8').split('\n', 1)[0]!) as { contents: string[] };
    expect(header(out).contents).toContain(SECOND_FACTOR_KEY_FILE);
    expect(header(plain).contents).not.toContain(SECOND_FACTOR_KEY_FILE);

    const target = tempDir();
    const restored = await runCli(['restore', out, '--data-dir', target, '--passphrase-env', 'GH_PASS'], { GH_PASS: PASS });
    expect(restored.code, restored.stderr).toBe(0);
    expect(readFileSync(join(target, SECOND_FACTOR_KEY_FILE), 'utf8')).toBe(key);
    expect(statSync(join(target, SECOND_FACTOR_KEY_FILE)).mode & 0o777).toBe(0o600);

    const copy = await start(loadConfig({ LOG_LEVEL: 'silent' }, { dataDir: target, port: '0', host: '127.0.0.1', adminToken: 'restored-admin-token-0123456789' }));
    try {
      const first = await fetch(`${copy.url}/api/auth/sign-in/email`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ada@example.com', password: PASSWORD }),
      });
      expect(await first.json()).toEqual({ secondFactor: { methods: ['totp', 'recovery_code'] } });
      const mfa = first.headers.getSetCookie().find((c) => c.startsWith('gatehouse_mfa='))!.split(';')[0]!;
      const second = await fetch(`${copy.url}/api/auth/second-factor/totp`, {
        method: 'POST', headers: { 'content-type': 'application/json', cookie: mfa }, body: JSON.stringify({ code: totp.generate() }),
      });
      expect(second.status).toBe(200);
    } finally {
      await copy.stop();
    }
  });
});
