/**
 * The `gatehouse` CLI as a child process (DESIGN §3): help, the admin token and its rotation
 * against a running server, and bad configuration exiting 1 with one sentence and no stack trace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, adminStatus, cleanEnv, ensureBuilt, removeTempDirs, runCli, startServer, tempDir, type RunResult } from '../helpers/server-process.js';
import { ensureLocalTls, tlsPaths } from '../../server/ops/tls.js';

/** Exit 1, exactly one line on stderr, no stack trace, nothing announced on stdout. */
function expectOneSentence(result: RunResult, message: string | RegExp) {
  expect(result.code, JSON.stringify(result)).toBe(1);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(message);
  expect(lines[0]).toMatch(/\.$/);
  expect(result.stderr).not.toMatch(/\n\s+at |Error:|node:internal/);
  expect(result.stdout).not.toContain('Gatehouse listening');
}

describe('gatehouse CLI', () => {
  beforeAll(() => ensureBuilt(), 300_000);
  afterAll(() => removeTempDirs());

  it('prints help for the CLI and each command', async () => {
    const env = cleanEnv();
    const [top, none, serve, token, unknown, badFlag, restoreFlag, missingValue] = await Promise.all([
      runCli(['--help'], env),
      runCli([], env),
      runCli(['serve', '--help'], env),
      runCli(['admin-token', '-h'], env),
      runCli(['frobnicate'], env),
      runCli(['serve', '--colour', 'red'], env),
      runCli(['restore', '--bogus'], env),
      runCli(['serve', '--port'], env),
    ]);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/^Usage: gatehouse <command> \[flags\]/);
    expect(top.stdout).toMatch(/^ {2}serve {11}run the identity server$/m);
    expect(top.stdout).toMatch(/^ {2}admin-token /m);

    expect(none.code).toBe(1);
    expect(none.stdout).toContain('Usage: gatehouse <command>');

    expect(serve.code).toBe(0);
    for (const flag of ['--data-dir DIR', '--port N', '--host ADDR', '--issuer URL', '--admin-token-file FILE', '--access-token-ttl S', '--help']) {
      expect(serve.stdout).toContain(flag);
    }
    expect(token.code).toBe(0);
    expect(token.stdout).toMatch(/^Usage: gatehouse admin-token \[flags\]/);
    expect(token.stdout).toContain('--rotate');

    expectOneSentence(unknown, /^Unknown command "frobnicate"\. Run `gatehouse --help` for the list\.$/);
    // Two sentences: node:util's message gets its full stop (and loses its hint about `--`).
    expect(badFlag).toEqual({ code: 1, stdout: '', stderr: "Unknown option '--colour'. Run `gatehouse serve --help` for its flags.\n" });
    expect(restoreFlag).toEqual({ code: 1, stdout: '', stderr: "Unknown option '--bogus'. Run `gatehouse restore --help` for its flags.\n" });
    expect(missingValue).toEqual({
      code: 1,
      stdout: '',
      stderr: "Option '--port <value>' argument missing. Run `gatehouse serve --help` for its flags.\n",
    });
  }, 120_000);

  it('admin-token prints the generated token (0600), the same each time; --rotate replaces it', async () => {
    const data = join(tempDir(), 'fresh');
    const env = cleanEnv({ GATEHOUSE_DATA_DIR: data });
    const first = await runCli(['admin-token'], env);
    expect(first.code).toBe(0);
    const token = first.stdout.trim();
    expect(token).toMatch(/^gha_[A-Za-z0-9_-]{43}$/);
    expect(readFileSync(join(data, 'admin-token'), 'utf8').trim()).toBe(token);
    expect(statSync(join(data, 'admin-token')).mode & 0o777).toBe(0o600);
    expect((await runCli(['admin-token', '--data-dir', data], cleanEnv())).stdout.trim()).toBe(token);

    const rotated = await runCli(['admin-token', '--rotate'], env);
    expect(rotated.code).toBe(0);
    const next = rotated.stdout.trim();
    expect(next).toMatch(/^gha_/);
    expect(next).not.toBe(token);
    expect(rotated.stderr.trim()).toBe(`New admin token written to ${join(data, 'admin-token')}.`);
    expect(readFileSync(join(data, 'admin-token'), 'utf8').trim()).toBe(next);
    expect(statSync(join(data, 'admin-token')).mode & 0o777).toBe(0o600);

    expectOneSentence(await runCli(['admin-token'], cleanEnv({ GATEHOUSE_DATA_DIR: data, ADMIN_TOKEN: 'x'.repeat(32) })), /^ADMIN_TOKEN is set in the environment/);
    // ADMIN_TOKEN_FILE (the PostgreSQL guide's way) is not "ADMIN_TOKEN is set": it names the file.
    const tokenFile = join(data, 'operator-token');
    writeFileSync(tokenFile, `${'y'.repeat(32)}\n`);
    expectOneSentence(
      await runCli(['admin-token'], cleanEnv({ GATEHOUSE_DATA_DIR: data, ADMIN_TOKEN_FILE: tokenFile })),
      `ADMIN_TOKEN_FILE names ${tokenFile}; the admin token is that file's content, and it is rotated by writing a new one there and restarting the server.`,
    );
  }, 120_000);

  it('admin-token --rotate: a running server rejects the old token and accepts the new one within ~1.5 s', async () => {
    const data = tempDir();
    const server = await startServer(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', data], cleanEnv());
    try {
      const old = readFileSync(join(data, 'admin-token'), 'utf8').trim();
      expect(await adminStatus(server.url, old)).toBe(200);
      const rotated = await runCli(['admin-token', '--rotate', '--data-dir', data], cleanEnv());
      const rotatedAt = Date.now();
      const next = rotated.stdout.trim();
      expect(rotated.code).toBe(0);

      let switchedAfter: number | undefined;
      while (Date.now() - rotatedAt < 5000) {
        if ((await adminStatus(server.url, old)) === 401) {
          switchedAfter = Date.now() - rotatedAt;
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(switchedAfter, 'the server never switched tokens').toBeDefined();
      expect(switchedAfter!).toBeLessThan(1500);
      expect(await adminStatus(server.url, next)).toBe(200);
      const denied = await fetch(`${server.url}/api/admin/applications`, { headers: { authorization: `Bearer ${old}` } });
      expect(denied.headers.get('www-authenticate')).toBe('Bearer');
    } finally {
      await server.stop();
    }
  }, 120_000);

  describe('one server per data directory', () => {
    it('of two servers started at the same moment, one serves and the other exits 1 with one sentence', async () => {
      for (let round = 0; round < 3; round++) {
        const data = tempDir();
        const args = [CLI, 'serve', '--port', '0', '--data-dir', data];
        const outcomes = await Promise.allSettled([startServer(process.execPath, args, cleanEnv()), startServer(process.execPath, args, cleanEnv())]);
        const up = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
        try {
          expect(up, `round ${round}: both servers started`).toHaveLength(1);
          const winner = up[0]!;
          const loser = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
          expect((loser.reason as Error).message).toBe(
            `server exited (1) before starting\nstdout: \nstderr: Another Gatehouse server (pid ${winner.child.pid}) is using the data directory ${data}; stop it first.\n`,
          );
          expect(readFileSync(join(data, 'gatehouse.pid'), 'utf8')).toBe(`${winner.child.pid}\n`);
          expect((await fetch(`${winner.url}/healthz`)).status).toBe(200);
        } finally {
          for (const server of up) expect((await server.stop()).code).toBe(0);
        }
        expect(existsSync(join(data, 'gatehouse.pid'))).toBe(false);
      }
    }, 240_000);

    it('takes over a pid file left by a crash; restore is refused while the server runs', async () => {
      const data = tempDir();
      const gone = spawnSync(process.execPath, ['-e', '']).pid!; // a process that has exited
      for (const stale of [`${gone}\n`, '', 'not a pid\n']) {
        writeFileSync(join(data, 'gatehouse.pid'), stale);
        const server = await startServer(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', data], cleanEnv());
        try {
          expect(readFileSync(join(data, 'gatehouse.pid'), 'utf8')).toBe(`${server.child.pid}\n`);
          const backup = join(tempDir(), 'live.gatehouse-backup');
          expect((await runCli(['backup', '--data-dir', data, '--out', backup, '--unencrypted'], cleanEnv())).code).toBe(0);
          expect(await runCli(['restore', backup, '--data-dir', data], cleanEnv())).toEqual({
            code: 1,
            stdout: '',
            stderr: `A Gatehouse server (pid ${server.child.pid}) is using ${data}; stop it before restoring.\n`,
          });
          expect(readFileSync(join(data, 'gatehouse.pid'), 'utf8')).toBe(`${server.child.pid}\n`);
        } finally {
          expect((await server.stop()).code).toBe(0);
        }
        expect(existsSync(join(data, 'gatehouse.pid'))).toBe(false);
      }
    }, 240_000);
  });

  describe('bad configuration exits 1 with one sentence', () => {
    let blocker: Server;
    let busyPort: number;
    beforeAll(async () => {
      blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      busyPort = (blocker.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => blocker.close(() => resolve())));

    it('port in use', async () => {
      const data = tempDir();
      const result = await runCli(['serve', '--data-dir', data, '--port', String(busyPort)], cleanEnv());
      expectOneSentence(result, new RegExp(`^Port ${busyPort} on 127\\.0\\.0\\.1 is already in use\\.$`));
      // Through the environment too.
      expectOneSentence(await runCli(['serve'], cleanEnv({ GATEHOUSE_DATA_DIR: data, PORT: String(busyPort) })), /already in use/);
      // The data directory is not left claimed by the server that gave up.
      expect(existsSync(join(data, 'gatehouse.pid'))).toBe(false);
    }, 60_000);

    it('unwritable data directory', async () => {
      const file = join(tempDir(), 'plain-file');
      writeFileSync(file, 'not a directory');
      const data = join(file, 'data');
      const result = await runCli(['serve', '--port', '0'], cleanEnv({ GATEHOUSE_DATA_DIR: data }));
      expectOneSentence(result, `The data directory ${data} cannot be created or is not writable.`);
      expectOneSentence(await runCli(['admin-token', '--data-dir', data], cleanEnv()), /cannot be created or is not writable|not a directory/i);
      expect(existsSync(data)).toBe(false);
    }, 60_000);

    it('an unusable own certificate or key names the variable and the file', async () => {
      const dir = tempDir();
      const junk = join(dir, 'hostname');
      writeFileSync(junk, 'vm\n');
      const tls = ensureLocalTls(join(dir, 'own'), [], new Date());
      const { cert, key, caKey } = tlsPaths(join(dir, 'own'));
      expect(tls.issued).toBe(true);
      const cases: [Record<string, string>, string][] = [
        [{ GATEHOUSE_TLS_CERT: junk, GATEHOUSE_TLS_KEY: junk }, `GATEHOUSE_TLS_CERT names ${junk}, which is not a PEM certificate.`],
        [{ GATEHOUSE_TLS_CERT: cert, GATEHOUSE_TLS_KEY: junk }, `GATEHOUSE_TLS_KEY names ${junk}, which is not an unencrypted PEM private key.`],
        [{ GATEHOUSE_TLS_CERT: cert, GATEHOUSE_TLS_KEY: cert }, `GATEHOUSE_TLS_KEY names ${cert}, which is not an unencrypted PEM private key.`],
        [
          { GATEHOUSE_TLS_CERT: cert, GATEHOUSE_TLS_KEY: caKey },
          `GATEHOUSE_TLS_KEY (${caKey}) is not the private key of the certificate in GATEHOUSE_TLS_CERT (${cert}).`,
        ],
        [{ GATEHOUSE_TLS_CERT: dir, GATEHOUSE_TLS_KEY: key }, `GATEHOUSE_TLS_CERT names ${dir}, which is a directory.`],
      ];
      // Side by side, each on its own data directory (a start claims its directory before loading TLS).
      const dirs = cases.map(() => tempDir());
      const results = await Promise.all(cases.map(([extra], i) => runCli(['serve', '--port', '0', '--data-dir', dirs[i]!], cleanEnv(extra))));
      results.forEach((result, i) => expect(result).toEqual({ code: 1, stdout: '', stderr: `${cases[i]![1]}\n` }));
      for (const dir of dirs) expect(existsSync(join(dir, 'gatehouse.pid'))).toBe(false);
      const data = dirs[0]!;

      // The matching pair serves HTTPS.
      const server = await startServer(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', data], cleanEnv({ GATEHOUSE_TLS_CERT: cert, GATEHOUSE_TLS_KEY: key }));
      try {
        expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
        expect(server.output().stdout).toContain(`, certificate SHA-256 ${new X509Certificate(tls.cert).fingerprint256}\n`);
      } finally {
        await server.stop();
      }
    }, 120_000);

    it('malformed issuer, port and other values', async () => {
      const data = tempDir();
      const cases: [Record<string, string>, RegExp][] = [
        [{ GATEHOUSE_ISSUER: 'not a url' }, /^GATEHOUSE_ISSUER must be an absolute http\(s\) URL, got "not a url"\.$/],
        [{ GATEHOUSE_ISSUER: 'ftp://id.example.com' }, /^GATEHOUSE_ISSUER must use http or https/],
        [{ GATEHOUSE_ISSUER: 'https://id.example.com/' }, /^GATEHOUSE_ISSUER must not end with a slash/],
        [{ GATEHOUSE_ISSUER: 'https://id.example.com?x=1' }, /^GATEHOUSE_ISSUER must not have a query or fragment/],
        [{ PORT: 'eighty' }, /^PORT must be a whole number, got "eighty"\.$/],
        [{ PORT: '70000' }, /^PORT must be between 0 and 65535, got 70000\.$/],
        [{ ADMIN_TOKEN: 'short' }, /^ADMIN_TOKEN must be at least 16 characters long\.$/],
        [{ GATEHOUSE_ACCESS_TOKEN_TTL: '5' }, /^GATEHOUSE_ACCESS_TOKEN_TTL must be between/],
        [{ LOG_LEVEL: 'bogus' }, /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "bogus"\.$/],
        [{ GATEHOUSE_HEADERS_TIMEOUT_MS: 'abc' }, /^GATEHOUSE_HEADERS_TIMEOUT_MS must be a whole number, got "abc"\.$/],
        [{ GATEHOUSE_SIGN_IN_RATE_LIMIT: '0' }, /^GATEHOUSE_SIGN_IN_RATE_LIMIT must be between 1 and 2147483647, got 0\.$/],
        [{ GATEHOUSE_TOKEN_FAILURE_LIMIT: '-5' }, /^GATEHOUSE_TOKEN_FAILURE_LIMIT must be a whole number, got "-5"\.$/],
        [{ GATEHOUSE_LOW_MEMORY: 'yes' }, /^GATEHOUSE_LOW_MEMORY must be 1 or 0 \(true or false\), got "yes"\.$/],
        [{ GATEHOUSE_IDLE_RECLAIM: 'on' }, /^GATEHOUSE_IDLE_RECLAIM must be 1 or 0 \(true or false\), got "on"\.$/],
      ];
      // Independent processes: run them side by side.
      const results = await Promise.all(cases.map(([extra]) => runCli(['serve'], cleanEnv({ GATEHOUSE_DATA_DIR: data, PORT: '0', ...extra }))));
      results.forEach((result, i) => expectOneSentence(result, cases[i]![1]));
      expectOneSentence(await runCli(['serve', '--data-dir', data, '--issuer', 'id.example.com'], cleanEnv({ PORT: '0' })), /^GATEHOUSE_ISSUER must/);
    }, 120_000);
  });
});
