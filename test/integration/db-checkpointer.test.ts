/**
 * WAL checkpoints run on a worker thread, not inside a commit on the event loop; the worker starts
 * only once the WAL reaches its threshold, and ends (the WAL emptied) once writes stop.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/db/client.js';
import { startCheckpointer } from '../../server/db/checkpointer.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Writes `mib` MiB (4 MiB: about 1,000 pages of 4 KiB) in committed transactions. */
function writeMegabytes(db: ReturnType<typeof openDatabase>, mib = 4) {
  db.$client.exec('CREATE TABLE IF NOT EXISTS filler (data BLOB)');
  const insert = db.$client.prepare('INSERT INTO filler (data) VALUES (?)');
  for (let i = 0; i < mib * 16; i++) insert.run(Buffer.alloc(64 * 1024, i));
}

/** Waits until the database file holds more than `bytes`, or 5 s. */
async function fileGrowsPast(file: string, bytes: number) {
  const deadline = Date.now() + 5_000;
  while (statSync(file).size <= bytes && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

describe('checkpointer', () => {
  it('keeps commits from checkpointing and copies the WAL into the database file from its worker', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ckpt-'));
    dirs.push(dir);
    const file = join(dir, 'gatehouse.db');
    const db = openDatabase(file);
    const checkpointer = startCheckpointer(db, file, { everyMs: 100 });
    expect(db.$client.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const before = statSync(file).size;

    writeMegabytes(db);
    // No commit checkpointed: the data is only in the WAL.
    expect(statSync(file).size).toBe(before);
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(4 * 1024 * 1024);

    await fileGrowsPast(file, 4 * 1024 * 1024);
    expect(statSync(file).size).toBeGreaterThan(4 * 1024 * 1024);

    await checkpointer.stop();
    expect(db.$client.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect(db.$client.pragma('integrity_check', { simple: true })).toBe('ok');
    db.$client.close();
  });

  it('leaves a WAL below the threshold alone, and checkpoints once it reaches it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ckpt-'));
    dirs.push(dir);
    const file = join(dir, 'gatehouse.db');
    const db = openDatabase(file);
    // The WAL holds about twice what was written (each commit rewrites the table's pages too): 1 MiB
    // of rows makes ~2 MiB of WAL, so the threshold sits well above it, at 4 MiB.
    const checkpointer = startCheckpointer(db, file, { everyMs: 50, startAtBytes: 4 * 1024 * 1024 });
    const before = statSync(file).size;

    writeMegabytes(db, 1);
    expect(statSync(`${file}-wal`).size).toBeLessThan(4 * 1024 * 1024);
    await new Promise((r) => setTimeout(r, 400)); // eight ticks: no worker, no checkpoint
    expect(statSync(file).size).toBe(before);

    writeMegabytes(db, 2);
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(4 * 1024 * 1024);
    await fileGrowsPast(file, 2 * 1024 * 1024);
    expect(statSync(file).size).toBeGreaterThan(2 * 1024 * 1024);

    await checkpointer.stop();
    expect(db.$client.pragma('integrity_check', { simple: true })).toBe('ok');
    db.$client.close();
  });

  it('ends its worker once writes stop, with the WAL emptied, and starts one again only at the threshold', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ckpt-'));
    dirs.push(dir);
    const file = join(dir, 'gatehouse.db');
    const db = openDatabase(file);
    const events: string[] = [];
    const eventually = async (count: number) => {
      const deadline = Date.now() + 10_000;
      while (events.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    };
    const checkpointer = startCheckpointer(db, file, { everyMs: 50, startAtBytes: 4 * 1024 * 1024, idleMs: 300, onWorker: (event) => events.push(event) });

    writeMegabytes(db, 3);
    await eventually(1);
    expect(events).toEqual(['started']);
    await eventually(2);
    expect(events).toEqual(['started', 'ended']);
    // The last checkpoint truncated the WAL: what was written is in the database file.
    expect(statSync(`${file}-wal`).size).toBe(0);
    expect(db.$client.prepare('SELECT count(*) AS n FROM filler').get()).toEqual({ n: 48 });

    // Below the threshold again: no worker.
    writeMegabytes(db, 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(events).toEqual(['started', 'ended']);
    writeMegabytes(db, 4);
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(4 * 1024 * 1024);
    await eventually(3);
    expect(events).toEqual(['started', 'ended', 'started']);

    await checkpointer.stop();
    expect(events).toEqual(['started', 'ended', 'started']);
    expect(db.$client.pragma('integrity_check', { simple: true })).toBe('ok');
    db.$client.close();
  });
});
