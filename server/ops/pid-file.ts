/**
 * `<data>/gatehouse.pid`: claimed by `start()` before it opens the database and removed on stop,
 * so a second server and offline operations (`gatehouse restore`) can tell that a process holds
 * the data directory. SQLite locks cannot say this in WAL mode (readers and the writer coexist),
 * so a pid file whose process is alive is the test. The claim is atomic (the file is created with
 * O_EXCL), so of two servers started at the same moment exactly one gets it.
 */
import { existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config.js';

export const PID_FILE = 'gatehouse.pid';

function parsePid(text: string): number | undefined {
  const pid = Number(text.trim());
  return text.trim() !== '' && Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function readPid(path: string): number | undefined {
  try {
    return parsePid(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Moves a stale pid file out of the way. It is renamed aside first and checked there: if a racing
 * process replaced it with its own live claim between our read and the rename, that claim is put
 * back (never over a newer one), so a stale file can be taken over by only one process.
 */
function removeStale(path: string, seen: string): void {
  const aside = `${path}.${process.pid}.stale`;
  try {
    renameSync(path, aside);
  } catch {
    return; // already gone: someone else took it over
  }
  let moved: string | undefined;
  try {
    moved = readFileSync(aside, 'utf8');
  } catch {
    moved = undefined;
  }
  if (moved !== undefined && moved !== seen) {
    try {
      writeFileSync(path, moved, { mode: 0o600, flag: 'wx' });
    } catch {
      // a newer claim is already in place
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // best effort
  }
}

/**
 * Claims `<dataDir>/gatehouse.pid` for this process. Returns undefined when claimed, or the pid
 * of the live process that holds it. A file left by a crash (its process is gone, or it is
 * unreadable) is taken over. `ownPid: 'ours'` treats a file naming this process as already
 * claimed (tests restart servers in-process); `'held'` treats it as held by someone else.
 */
export function claimPidFile(dataDir: string, ownPid: 'ours' | 'held' = 'ours'): number | undefined {
  const path = join(dataDir, PID_FILE);
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { mode: 0o600, flag: 'wx' });
      return undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let seen: string;
    try {
      seen = readFileSync(path, 'utf8');
    } catch {
      continue; // removed in between: try again
    }
    const pid = parsePid(seen);
    // O_EXCL creates the file before its pid is written: an empty file may be a claim in progress.
    if (seen === '' && attempt < 5) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      continue;
    }
    if (pid === process.pid) return ownPid === 'ours' ? undefined : pid;
    if (pid !== undefined && alive(pid)) return pid;
    removeStale(path, seen);
  }
  throw new ConfigError(`The pid file ${path} keeps changing; another Gatehouse process is starting or stopping there.`);
}

/** Removes the pid file if it names this process. */
export function removePidFile(dataDir: string): void {
  const path = join(dataDir, PID_FILE);
  try {
    if (existsSync(path) && readPid(path) === process.pid) unlinkSync(path);
  } catch {
    // best effort at shutdown
  }
}

/** The pid of a live server using `dataDir`, or undefined (a stale file from a crash is ignored). */
export function runningServerPid(dataDir: string): number | undefined {
  const pid = readPid(join(dataDir, PID_FILE));
  return pid !== undefined && alive(pid) ? pid : undefined;
}

/**
 * One server per data directory: two processes on one store would race each other's
 * read-then-write transactions (SQLite refuses the second writer's stale snapshot: a 500), and
 * run the webhook, backup and key-rotation workers twice. Claims the pid file or throws the one
 * sentence `gatehouse serve` prints. A pid file left by a crash is taken over, so a restart after
 * a kill works; one naming this process is too (tests restart in-process).
 */
export function claimServerPidFile(dataDir: string): void {
  const pid = claimPidFile(dataDir, 'ours');
  if (pid !== undefined) {
    throw new ConfigError(`Another Gatehouse server (pid ${pid}) is using the data directory ${dataDir}; stop it first.`);
  }
}
