/**
 * The admin token never travels on the command line (issue 22, item 6): `ps` shows every user of
 * the machine a process's arguments, while its environment and a 0600 file are the owner's.
 * `serve --admin-token T` is refused with one sentence; `--admin-token-file FILE`,
 * `ADMIN_TOKEN_FILE` and `ADMIN_TOKEN` are the ways in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, adminStatus, cleanEnv, ensureBuilt, removeTempDirs, runCli, startServer, tempDir } from '../helpers/server-process.js';

const TOKEN = 'file-admin-token-0123456789abcdef';

describe('the admin token and the command line', () => {
  beforeAll(() => ensureBuilt(), 300_000);
  afterAll(() => removeTempDirs());

  it('refuses serve --admin-token with one sentence that does not repeat the token', async () => {
    const res = await runCli(['serve', '--data-dir', tempDir(), '--port', '0', '--admin-token', TOKEN], cleanEnv());
    expect(res).toEqual({
      code: 1,
      stdout: '',
      stderr: '--admin-token would show the token to every user of this machine (ps); use --admin-token-file FILE or the ADMIN_TOKEN environment variable.\n',
    });
  }, 60_000);

  it('reads the token from --admin-token-file or ADMIN_TOKEN_FILE (a trailing newline is not part of it)', async () => {
    const dir = tempDir();
    const file = join(dir, 'token');
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    for (const [args, env] of [
      [['--admin-token-file', file], cleanEnv()],
      [[], cleanEnv({ ADMIN_TOKEN_FILE: file })],
    ] as const) {
      const server = await startServer(process.execPath, [CLI, 'serve', '--data-dir', tempDir(), '--port', '0', ...args], env);
      try {
        expect(server.line).toMatch(new RegExp(`, admin token from ${file.replaceAll('/', '\\/')}$`));
        expect(await adminStatus(server.url, TOKEN)).toBe(200);
        expect(await adminStatus(server.url, `${TOKEN}\n`.trim() + 'x')).toBe(401);
      } finally {
        await server.stop();
      }
    }
  }, 120_000);

  it('refuses a missing or short token file, and a file together with ADMIN_TOKEN, with one sentence', async () => {
    const dir = tempDir();
    const short = join(dir, 'short');
    writeFileSync(short, 'short\n', { mode: 0o600 });
    const cases: [string[], NodeJS.ProcessEnv, string][] = [
      [['--admin-token-file', join(dir, 'nope')], cleanEnv(), `--admin-token-file names ${join(dir, 'nope')}, which does not exist.`],
      [[], cleanEnv({ ADMIN_TOKEN_FILE: short }), `The admin token in ${short} must be at least 16 characters long.`],
      [['--admin-token-file', short], cleanEnv({ ADMIN_TOKEN: TOKEN }), 'Set the admin token once: ADMIN_TOKEN or an admin token file, not both.'],
    ];
    for (const [args, env, sentence] of cases) {
      const res = await runCli(['serve', '--data-dir', tempDir(), '--port', '0', ...args], env);
      expect(res).toEqual({ code: 1, stdout: '', stderr: `${sentence}\n` });
    }
  }, 60_000);
});
