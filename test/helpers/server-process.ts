/**
 * Running the real server and CLI as child processes: the build freshness check, spawning
 * `npm start` / the bundled server (dist/gatehouse.mjs), which applies its launch settings itself
 * (server/cli/launch.ts), waiting for the start-up line, and stopping cleanly.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_BUNDLE } from '../../server/cli/launch.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = join(ROOT, SERVER_BUNDLE);

/** Builds the server when its sources are newer than the build (shared lock; see the script). */
export function ensureBuilt(): void {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-if-stale.mjs')], { cwd: ROOT, stdio: 'pipe', timeout: 300_000 });
}

/** The environment without any Gatehouse setting inherited from the caller. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(GATEHOUSE_|ADMIN_TOKEN$|PORT$|HOST$|SMTP_|VITEST|NODE_OPTIONS$)/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, LOG_LEVEL: 'warn', ...extra };
}

const dirs: string[] = [];
export function tempDir(prefix = 'gatehouse-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}
export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Where the start-up line says the generated admin token is, or undefined when one was given (ADMIN_TOKEN, a file). */
  tokenFile: string | undefined;
  line: string;
  output(): { stdout: string; stderr: string };
  /** Settles when the process has exited, however it was ended (a test's own SIGKILL too). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends SIGTERM (to the whole process group) and resolves with the exit code and signal. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
}

const READY = /^Gatehouse listening on (\S+) — issuer (\S+), control panel \S+\/admin\/, data (.+?), admin token (?:in (\S+?)|from \S+?)(?:,|$)/m;

/** Spawns a server command (own process group) and waits for its start-up line. */
export function startServer(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<ServerProcess> {
  const child = spawn(command, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      kill(child);
      reject(new Error(`server did not start within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    const onData = () => {
      const match = READY.exec(stdout);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve({
        child,
        url: match[1]!,
        tokenFile: match[4],
        line: match[0],
        output: () => ({ stdout, stderr }),
        exited,
        async stop() {
          const started = Date.now();
          if (child.exitCode === null && child.signalCode === null) kill(child, 'SIGTERM');
          const forced = setTimeout(() => kill(child, 'SIGKILL'), 10_000);
          const result = await exited;
          clearTimeout(forced);
          return { ...result, ms: Date.now() - started };
        },
      });
    };
    child.stdout!.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before starting\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

function kill(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL') {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

/** The status a running server answers an admin request with this token (200, or 401). */
export async function adminStatus(url: string, token: string): Promise<number> {
  return (await fetch(`${url}/api/admin/applications`, { headers: { authorization: `Bearer ${token}` } })).status;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/gatehouse.mjs ...args` (a short-lived command) to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gatehouse ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
