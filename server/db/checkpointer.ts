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
 * SQLite's default.
 */
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { backgroundNice } from '../util/background-nice.js';
import type { Db } from './client.js';

export const CHECKPOINT_EVERY_MS = 1_000;
export const START_AT_WAL_BYTES = 1_000 * 4_096;

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
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy: the next tick tries again */ }
}, workerData.everyMs);
parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
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

function startWorker(file: string, everyMs: number) {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const nice = process.platform === 'linux' ? backgroundNice() : undefined; // per thread only on Linux
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, everyMs, nice } });
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      worker.ref(); // an unreferenced worker would let the process exit before it has closed
      worker.postMessage('stop');
      await exited;
    },
  };
}

/**
 * Moves `db`'s WAL checkpoints to a worker thread, started once the WAL reaches `startAtBytes`;
 * `stop()` before closing `db`.
 */
export function startCheckpointer(db: Db, file: string, everyMs = CHECKPOINT_EVERY_MS, startAtBytes = START_AT_WAL_BYTES): Checkpointer {
  db.$client.pragma('wal_autocheckpoint = 0');
  let worker: ReturnType<typeof startWorker> | undefined;
  const watch = setInterval(() => {
    if (walBytes(file) < startAtBytes) return;
    clearInterval(watch);
    worker = startWorker(file, everyMs);
  }, everyMs);
  watch.unref();
  return {
    async stop() {
      clearInterval(watch);
      await worker?.stop();
      db.$client.pragma('wal_autocheckpoint = 1000');
    },
  };
}
