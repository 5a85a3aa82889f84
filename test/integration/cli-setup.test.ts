/**
 * `gatehouse setup` (spec administrators-and-people.md, "First run") as a child process of the
 * built CLI against a real server: the password from standard input (scripts) or typed twice on a
 * terminal (util-linux `script` gives it one), checked by the server's password policy, and the
 * owner made once.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cleanEnv, ensureBuilt, removeTempDirs, startServer, tempDir, type RunResult, type ServerProcess } from '../helpers/server-process.js';

let server: ServerProcess;
let env: NodeJS.ProcessEnv;
let token = '';

beforeAll(async () => {
  ensureBuilt();
  const dataDir = tempDir('gatehouse-cli-setup-');
  server = await startServer(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', dataDir], cleanEnv());
  token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  env = cleanEnv({ GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_URL: server.url });
}, 300_000);

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

/** The CLI with `input` on a pipe as its standard input. */
function piped(args: string[], input: string): RunResult {
  const run = spawnSync(process.execPath, [CLI, ...args], { input, env, encoding: 'utf8', timeout: 60_000 });
  return { code: run.status ?? 1, stdout: run.stdout, stderr: run.stderr };
}

/** The CLI on a terminal (util-linux `script` gives it one), typing each answer once its prompt shows. */
function onTerminal(args: string[], answers: [prompt: string, answer: string][]): Promise<RunResult> {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let next = 0;
    let from = 0;
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`no answer: ${stdout}`))), 60_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const waiting = answers[next];
      const at = waiting ? stdout.indexOf(waiting[0], from) : -1;
      if (waiting && at >= 0) {
        from = at + waiting[0].length;
        next++;
        child.stdin.write(`${waiting[1]}\r`);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: stdout.replaceAll('\r', ''), stderr });
    });
  });
}

describe('gatehouse setup', () => {
  it('refuses a weak password from stdin with the policy\'s reason, and asks for --email and --name', () => {
    const weak = piped(['setup', '--email', 'ann@example.com', '--name', 'Ann Lee'], 'password123\n');
    expect(weak.stderr.trim().split('\n')).toEqual([
      'This password is one of the most common passwords, which attackers try first: choose another. (weak_password)',
      '  password: This password is one of the most common passwords, which attackers try first: choose another.',
    ]);
    expect(weak.code).toBe(1);
    const missing = piped(['setup', '--email', 'ann@example.com'], 'x\n');
    expect(missing.stderr.trim()).toBe('Give the owner\'s --email and --name, e.g. `gatehouse setup --email ann@example.com --name "Ann Lee"`.');
  });

  it('asks twice on a terminal, without echo, and refuses two different passwords', async () => {
    const differ = await onTerminal(['setup', '--email', 'ann@example.com', '--name', 'Ann Lee'], [['Password for the owner: ', 'correct horse battery'], ['The same password again: ', 'something else entirely']]);
    expect(differ.stdout).toContain('Password for the owner: ');
    expect(differ.stdout).not.toContain('correct horse battery');
    expect(differ.stdout).toContain('The two passwords differ; run `gatehouse setup` again.');
  });

  it('creates the owner from a terminal once; a second set-up is refused', async () => {
    const made = await onTerminal(['setup', '--email', 'ann@example.com', '--name', 'Ann Lee'], [['Password for the owner: ', 'correct horse battery'], ['The same password again: ', 'correct horse battery']]);
    expect(made.stdout).not.toContain('correct horse battery');
    expect(made.stdout).toMatch(/Created the owner ann@example\.com \(usr_[A-Za-z0-9_-]+\)\./);
    expect(made.stdout).toContain(`Open ${server.url}/admin/ and choose "Sign in with Gatehouse": the first sign-in sets up a second factor.`);
    const admins = (await (await fetch(`${server.url}/api/admin/administrators`, { headers: { authorization: `Bearer ${token}` } })).json()) as { administrators: { email: string; role: string }[] };
    expect(admins.administrators.map((a) => [a.email, a.role])).toEqual([['ann@example.com', 'owner']]);
    const again = piped(['setup', '--email', 'bob@example.com', '--name', 'Bob'], 'correct horse battery\n');
    expect(again.stderr.trim()).toBe('An owner exists already: sign in with Gatehouse, or have an owner name more administrators. (owner_exists)');
  });
});
