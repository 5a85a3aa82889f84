/**
 * Where passkeys can work (spec second-factor.md, "Factors"): the issuer's host must be a name and
 * the page a secure context (HTTPS, or plain HTTP on localhost). `gatehouse status` says so, and
 * points an issuer that cannot offer passkeys to LAN mode's host names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { passkeySupport } from '../../server/accounts/second-factor/rp.js';
import { openDatabase } from '../../server/db/client.js';
import { loadConfig } from '../../server/config.js';
import { start } from '../../server/main.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { removeTempDirs, tempDir } from '../helpers/server-process.js';

describe('passkeySupport', () => {
  it('takes the RP ID from the issuer host name and refuses IP addresses and plain HTTP off localhost', () => {
    expect(passkeySupport('http://localhost:8787')).toEqual({ available: true, rpId: 'localhost', origin: 'http://localhost:8787' });
    expect(passkeySupport('https://gatehouse.lan:8443')).toEqual({ available: true, rpId: 'gatehouse.lan', origin: 'https://gatehouse.lan:8443' });
    expect(passkeySupport('https://id.example.com')).toEqual({ available: true, rpId: 'id.example.com', origin: 'https://id.example.com' });
    for (const [issuer, reason] of [
      ['http://127.0.0.1:8787', 'ip_address'],
      ['https://192.168.1.5:8443', 'ip_address'],
      ['https://[::1]:8443', 'ip_address'],
      ['http://gatehouse.lan:8787', 'insecure_http'],
    ] as const) {
      const support = passkeySupport(issuer);
      expect(support).toMatchObject({ available: false, reason });
      expect((support as { message: string }).message).toMatch(/GATEHOUSE_TLS=auto/);
    }
  });
});

describe('gatehouse status', () => {
  let dir: string;
  beforeAll(() => {
    ensureBuilt();
    dir = tempDir();
    openDatabase(join(dir, 'gatehouse.db')).$client.close();
  });
  afterAll(removeTempDirs);

  it('says whether the issuer can offer passkeys, and why not', async () => {
    const lan = await runCli(['status', '--data-dir', dir], { GATEHOUSE_ISSUER: 'http://192.168.1.5:8787' });
    expect(lan.code).toBe(0);
    expect(lan.stdout).toMatch(/^Passkeys         not available: Passkeys need a host name, but this server's address \(192\.168\.1\.5:8787\) is an IP address: run Gatehouse in LAN mode \(GATEHOUSE_TLS=auto\) and use its host name as the issuer, e\.g\. GATEHOUSE_ISSUER=https:\/\/\S+\.local:8787\.$/m);
    const json = JSON.parse((await runCli(['status', '--data-dir', dir, '--json'], { GATEHOUSE_ISSUER: 'http://gatehouse.lan:8787' })).stdout);
    expect(json.passkeys).toMatchObject({ issuer: 'http://gatehouse.lan:8787', available: false, reason: 'insecure_http' });
    const ok = await runCli(['status', '--data-dir', dir], { GATEHOUSE_ISSUER: 'https://gatehouse.lan:8443' });
    expect(ok.stdout).toMatch(/^Passkeys         available \(RP ID gatehouse\.lan\)$/m);
  });

  it("judges by the issuer the server last served, not by the default of a shell without the service's settings", async () => {
    const served = tempDir();
    const running = await start(loadConfig({ LOG_LEVEL: 'silent', GATEHOUSE_ISSUER: 'https://id.example.com' }, { dataDir: served, port: '0', adminToken: 'status-admin-token-0123456789' }));
    await running.stop();
    const status = await runCli(['status', '--data-dir', served]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^Passkeys         available \(RP ID id\.example\.com\)$/m);
    expect(JSON.parse((await runCli(['status', '--data-dir', served, '--json'])).stdout).passkeys).toEqual({ issuer: 'https://id.example.com', available: true, reason: null, message: null });
    // A GATEHOUSE_ISSUER given to the command still wins: it is what the operator asks about.
    const asked = await runCli(['status', '--data-dir', served], { GATEHOUSE_ISSUER: 'http://192.168.1.5:8787' });
    expect(asked.stdout).toMatch(/^Passkeys         not available: Passkeys need a host name/m);
  });
});
