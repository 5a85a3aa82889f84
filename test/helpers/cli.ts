/**
 * Runs the built `gatehouse` CLI (`node dist/gatehouse.mjs`) as a child process, building the
 * server first when its sources are newer than the build (as `npm test`'s pretest does).
 */
import { execFile } from 'node:child_process';
import { CLI, ROOT as root, ensureBuilt } from './server-process.js';

export { CLI, ensureBuilt };

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, cwd: root }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
