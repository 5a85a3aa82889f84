/**
 * The upgrade to usernames (issue 32, decision 0100): `npm run bench -- usernames`. A data
 * directory at the schema before usernames holding PEOPLE people (one in three with a bare first
 * name as local part, so 8 bases clash thousands of times and the numbered names are also others'
 * addresses: a worst case for the clash numbering), then:
 * - in process, `assignMissingUsernames` on a copy: how long naming everyone takes, in how many
 *   batches, and the event loop's delay meanwhile (perf_hooks' histogram: a timer that asks for
 *   the loop every 10 ms, as a request would);
 * - the built `gatehouse serve` on the directory: the first start (pre-migration backup, the
 *   migrations, the backfill) to ready, against a restart of the same directory in the same run.
 * Targets: the first start ≤ 60 s (as `scale`'s upgrade); the loop's longest delay ≤ 250 ms.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { migrationsFolder, openDatabase } from '../server/db/client.js';
import { assignMissingUsernames } from '../server/people/username-backfill.js';
import type { BenchResult, Scenario } from './run.js';
import { cpuSample, loadAverage, spawnServe } from './_server.js';

const PEOPLE = Number(process.env.BENCH_USERNAMES_PEOPLE ?? 100_000);
const UPGRADE_TARGET_S = 60;
const LOOP_TARGET_MS = 250;
const BASES = ['ada', 'grace', 'alan', 'info', 'admin', 'bob', 'j.smith', 'contact'];

const log = (line: string) => console.error(`  usernames: ${line}`);

/** A database file at the last schema without usernames, holding PEOPLE people. */
function directoryBeforeUsernames(dir: string): string {
  const source = migrationsFolder();
  const journal = JSON.parse(readFileSync(join(source, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] };
  const cut = journal.entries.findIndex((e) => /_people_usernames_groups$/.test(e.tag));
  const folder = join(dir, 'migrations');
  mkdirSync(join(folder, 'meta'), { recursive: true });
  for (const e of journal.entries.slice(0, cut)) copyFileSync(join(source, `${e.tag}.sql`), join(folder, `${e.tag}.sql`));
  writeFileSync(join(folder, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: journal.entries.slice(0, cut) }));
  const file = join(dir, 'gatehouse.db');
  const sqlite = new Database(file);
  migrate(drizzle(sqlite), { migrationsFolder: folder });
  const insert = sqlite.prepare('INSERT INTO people (id, email, email_verified, name, created_at, updated_at) VALUES (?, ?, 1, NULL, ?, ?)');
  const t0 = Date.now() - PEOPLE * 1000;
  sqlite.transaction(() => {
    for (let i = 0; i < PEOPLE; i++) {
      const local = `${BASES[i % BASES.length]}${i % 3 === 0 ? '' : i}`;
      insert.run(`usr_${i.toString(36).padStart(8, '0')}bench`, `${local}@d${i}.example`, t0 + i * 1000, t0 + i * 1000);
    }
  })();
  sqlite.close();
  return file;
}

async function inProcess(file: string) {
  const db = openDatabase(file);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  const result = await assignMissingUsernames(db, process.env.BENCH_USERNAMES_BATCH ? { batch: Number(process.env.BENCH_USERNAMES_BATCH) } : {});
  const ms = performance.now() - started;
  delay.disable();
  const again = performance.now();
  await assignMissingUsernames(db);
  const againMs = performance.now() - again;
  db.$client.close();
  return { ...result, ms, againMs, loopMaxMs: delay.max / 1e6, loopP99Ms: delay.percentile(99) / 1e6 };
}

async function startOnce(dataDir: string): Promise<{ readyMs: number; cpuMs: number }> {
  const started = performance.now();
  const { child, exited, ready } = spawnServe(dataDir);
  await ready;
  const readyMs = performance.now() - started;
  const cpuMs = cpuSample(child.pid!)?.totalMs ?? NaN;
  child.kill('SIGTERM');
  await exited;
  return { readyMs, cpuMs };
}

async function run(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-usernames-'));
  try {
    log(`building a directory of ${PEOPLE.toLocaleString('en')} people without usernames …`);
    const file = directoryBeforeUsernames(dir);
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir, { mode: 0o700 });
    copyFileSync(file, join(dataDir, 'gatehouse.db'));
    log('naming them in process …');
    const backfill = await inProcess(file);
    log('the first start of `gatehouse serve` (the upgrade) …');
    const upgrade = await startOnce(dataDir);
    const restart = await startOnce(dataDir);
    const load = loadAverage();
    return [
      {
        scenario: 'usernames: backfill in process',
        throughput: backfill.assigned / (backfill.ms / 1000),
        p50Ms: 0,
        p99Ms: backfill.loopP99Ms,
        measured: `${backfill.assigned.toLocaleString('en')} people in ${(backfill.ms / 1000).toFixed(1)} s, ${backfill.batches} batches; loop delay p99 ${backfill.loopP99Ms.toFixed(1)} ms, max ${backfill.loopMaxMs.toFixed(1)} ms`,
        target: `loop delay max ≤ ${LOOP_TARGET_MS} ms`,
        met: backfill.loopMaxMs <= LOOP_TARGET_MS,
        extra: { 'load avg': load, 'a start with everyone named ms': Number(backfill.againMs.toFixed(2)) },
      },
      {
        scenario: 'usernames: first start after the upgrade',
        throughput: 0,
        p50Ms: upgrade.readyMs,
        p99Ms: upgrade.readyMs,
        measured: `${(upgrade.readyMs / 1000).toFixed(1)} s to ready (server CPU ${(upgrade.cpuMs / 1000).toFixed(1)} s); restart ${(restart.readyMs / 1000).toFixed(2)} s`,
        target: `≤ ${UPGRADE_TARGET_S} s incl. the backup`,
        met: upgrade.readyMs / 1000 <= UPGRADE_TARGET_S,
        extra: { 'load avg': load, people: PEOPLE, 'restart ready ms': Math.round(restart.readyMs), 'restart CPU ms': Math.round(restart.cpuMs) },
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const scenario: Scenario = {
  name: 'usernames',
  description: 'the upgrade to usernames: naming 100,000 existing people (in process and as the first start of gatehouse serve)',
  run,
};
