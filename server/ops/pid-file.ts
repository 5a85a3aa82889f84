/**
 * `<data>/gatehouse.pid`: written by `start()` and removed on stop, so offline operations
 * (`gatehouse restore`) can tell that a server holds the database. SQLite locks cannot say this
 * in WAL mode (readers and the writer coexist), so a pid file whose process is alive is the test.
 */
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config.js';

export const PID_FILE = 'gatehouse.pid';

export function writePidFile(dataDir: string): void {
  writeFileSync(join(dataDir, PID_FILE), `${process.pid}\n`, { mode: 0o600 });
}

export function removePidFile(dataDir: string): void {
  const path = join(dataDir, PID_FILE);
  try {
    if (existsSync(path) && readFileSync(path, 'utf8').trim() === String(process.pid)) unlinkSync(path);
  } catch {
    // best effort at shutdown
  }
}

/** The pid of a live server using `dataDir`, or undefined (a stale file from a crash is ignored). */
export function runningServerPid(dataDir: string): number | undefined {
  const path = join(dataDir, PID_FILE);
  if (!existsSync(path)) return undefined;
  const pid = Number(readFileSync(path, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined;
  }
}

/**
 * One server per data directory: two processes on one store would race each other's
 * read-then-write transactions (SQLite refuses the second writer's stale snapshot: a 500), and
 * run the webhook, backup and key-rotation workers twice. A pid file left by a crash is ignored,
 * so a restart after a kill works; this process's own pid is too (tests restart in-process).
 */
export function refuseSecondServer(dataDir: string): void {
  const pid = runningServerPid(dataDir);
  if (pid !== undefined && pid !== process.pid) {
    throw new ConfigError(`Another Gatehouse server (pid ${pid}) is using the data directory ${dataDir}; stop it first.`);
  }
}
