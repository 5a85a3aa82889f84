/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit
 * crosses 1,000 WAL pages, on the thread that commits — for the server, the event loop — and
 * copies pages back into the database file with an fsync: 20–45 ms measured here, the largest
 * event-loop stalls under sign-in and token load (issue 9: never blocked > 20 ms). The serving
 * process therefore turns the automatic checkpoint off on its own connection and lets a worker
 * thread with a second connection run a PASSIVE checkpoint every second (PASSIVE never waits
 * for, nor blocks, readers and writers). Durability is unchanged: a commit is in the WAL before
 * it is acknowledged, and the WAL is replayed on open after a crash. Closing the main
 * connection at shutdown checkpoints what is left.
 *
 * The worker starts only once the WAL reaches START_AT_WAL_BYTES (SQLite's own automatic
 * threshold, 1,000 pages of 4 KiB), checked by a stat every tick: a worker thread is a second V8
 * isolate, about 16 MB of RSS, which a quiet installation never needs
 * (docs/decisions/0069-wal-checkpoints.md). Until then the WAL just grows, as it would under
 * SQLite's default. And it ends once nothing has been written for IDLE_MS with every frame
 * checkpointed: a last TRUNCATE checkpoint empties the WAL file, so the stat sees it grow from zero
 * again and the next worker starts only after another 1,000 pages (issue 45: a light day's writes
 * otherwise kept it alive for good; docs/decisions/0341-idle-memory-causes.md).
 */
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { backgroundNice } from '../util/background-nice.js';
import { memoryFreed } from '../util/memory-freed.js';
import type { Db } from './client.js';

export const CHECKPOINT_EVERY_MS = 1_000;
export const START_AT_WAL_BYTES = 1_000 * 4_096;
/** Without a write for this long, with the WAL all checkpointed, the worker truncates the WAL and ends. */
export const IDLE_MS = 10_000;

/**
 * The worker's body: plain CommonJS, so it needs no file of its own beside the build. On Linux it
 * runs at the thread pool's priority (cli/thread-priority.ts), set on itself as it may start
 * after the server lowered the others.
 */
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
if (workerData.nice !== undefined) try { require('node:os').setPriority(workerData.nice); } catch {}
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 1000');
let lastLog = -1;
let quietTicks = 0;
const end = () => { clearInterval(timer); db.close(); parentPort.close(); };
const timer = setInterval(() => {
  try {
    const [{ busy, log, checkpointed }] = db.pragma('wal_checkpoint(PASSIVE)');
    // Quiet: nothing written since the last tick and every frame copied into the database.
    quietTicks = busy === 0 && log === checkpointed && log === lastLog ? quietTicks + 1 : 0;
    lastLog = log;
    if (quietTicks * workerData.everyMs < workerData.idleMs) return;
    // Empty the WAL file (nothing is left to copy: it waits at most for a statement under way).
    const [truncated] = db.pragma('wal_checkpoint(TRUNCATE)');
    if (truncated.busy === 0) end();
  } catch { /* busy: the next tick tries again */ }
}, workerData.everyMs);
parentPort.on('message', end);
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

function walBytes(file: string): number {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0; // no WAL file yet
  }
}

function startWorker(file: string, everyMs: number, idleMs: number) {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const nice = process.platform === 'linux' ? backgroundNice() : undefined; // per thread only on Linux
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, everyMs, idleMs, nice } });
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    exited,
    async stop() {
      worker.ref(); // an unreferenced worker would let the process exit before it has closed
      worker.postMessage('stop');
      await exited;
    },
  };
}

export interface CheckpointerOptions {
  everyMs?: number;
  startAtBytes?: number;
  idleMs?: number;
  /** Hears each worker's start and end (tests). */
  onWorker?: (event: 'started' | 'ended') => void;
}

/**
 * Moves `db`'s WAL checkpoints to a worker thread, started once the WAL reaches `startAtBytes` and
 * ended after `idleMs` without writes (then watched for again); `stop()` before closing `db`.
 */
export function startCheckpointer(db: Db, file: string, options: CheckpointerOptions = {}): Checkpointer {
  const { everyMs = CHECKPOINT_EVERY_MS, startAtBytes = START_AT_WAL_BYTES, idleMs = IDLE_MS, onWorker } = options;
  db.$client.pragma('wal_autocheckpoint = 0');
  let worker: ReturnType<typeof startWorker> | undefined;
  let watch: NodeJS.Timeout | undefined;
  let stopping = false;
  const watchWal = () => {
    watch = setInterval(() => {
      if (walBytes(file) < startAtBytes) return;
      clearInterval(watch);
      const started = startWorker(file, everyMs, idleMs);
      worker = started;
      onWorker?.('started');
      void started.exited.then(() => {
        if (worker === started) worker = undefined;
        if (stopping) return;
        // Ended idle: its isolate's memory goes back at the next quiet moment; watch again.
        memoryFreed();
        onWorker?.('ended');
        watchWal();
      });
    }, everyMs);
    watch.unref();
  };
  watchWal();
  return {
    async stop() {
      stopping = true;
      clearInterval(watch);
      await worker?.stop();
      db.$client.pragma('wal_autocheckpoint = 1000');
    },
  };
}
