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
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Db } from './client.js';

export const CHECKPOINT_EVERY_MS = 1_000;

/** The worker's body: plain CommonJS, so it needs no file of its own beside the build. */
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
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

/** Moves `db`'s WAL checkpoints to a worker thread; `stop()` before closing `db`. */
export function startCheckpointer(db: Db, file: string, everyMs = CHECKPOINT_EVERY_MS): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, everyMs } });
  worker.unref();
  db.$client.pragma('wal_autocheckpoint = 0');
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      worker.ref(); // an unreferenced worker would let the process exit before it has closed
      worker.postMessage('stop');
      await exited;
      db.$client.pragma('wal_autocheckpoint = 1000');
    },
  };
}
