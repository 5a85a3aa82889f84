/**
 * Member listing at scale (issue 4): 100,000 members in one application, then pages of 50 over
 * HTTP — walking the cursors from the start, and filtered by status and by role — answered by
 * keyset pagination over the `(application_id[, status|role], joined_at, id)` indexes.
 * Target: p95 ≤ 10 ms per page.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { BenchResult, Scenario } from './run.js';
import { BENCH_ADMIN_TOKEN as ADMIN, percentile } from './_server.js';
import { start } from '../server/main.js';
import { loadConfig } from '../server/config.js';
import { listMembers } from '../server/members/service.js';

const MEMBERS = 100_000;
const PAGES_PER_WALK = 300;
const TARGET_P95_MS = 10;

async function run(): Promise<BenchResult[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-members-'));
  const server = await start(loadConfig({ ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'warn' }, { dataDir, port: '0', host: '127.0.0.1' }));
  const headers = { authorization: `Bearer ${ADMIN}` };
  try {
    const created = await fetch(`${server.url}/api/admin/applications`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'big', name: 'Big', audience: 'https://big.example.com/api', redirectUris: ['https://big.example.com/cb'] }),
    });
    if (created.status !== 201) throw new Error(`creating the application: HTTP ${created.status}`);

    // Seeding straight through better-sqlite3 in one transaction: the API is not what is measured.
    const sqlite = server.db.$client;
    const insertPerson = sqlite.prepare('INSERT INTO people (id, email, username, email_verified, name, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?, ?)');
    const insertMember = sqlite.prepare(
      "INSERT INTO memberships (id, application_id, person_id, status, role, profile, joined_at, last_active_at, updated_at) VALUES (?, 'big', ?, ?, ?, '{}', ?, ?, ?)",
    );
    const t0 = Date.now() - MEMBERS * 1000;
    const seedStart = performance.now();
    sqlite.transaction(() => {
      for (let i = 0; i < MEMBERS; i++) {
        const at = t0 + i * 1000;
        const suffix = randomBytes(6).toString('hex');
        insertPerson.run(`usr_b${i}_${suffix}`, `person${i}@example.com`, `person${i}`, `Person ${i}`, at, at);
        insertMember.run(`mem_b${i}_${suffix}`, `usr_b${i}_${suffix}`, i % 10 === 0 ? 'suspended' : 'active', i % 50 === 0 ? 'admin' : 'member', at, at, at);
      }
    })();
    sqlite.exec('ANALYZE');
    const seedSeconds = (performance.now() - seedStart) / 1000;

    const timings: Record<string, number[]> = {};
    async function walk(label: string, filter: string) {
      const latencies: number[] = (timings[label] = []);
      let cursor: string | null = null;
      for (let page = 0; page < PAGES_PER_WALK; page++) {
        const url = `${server.url}/api/admin/applications/big/users?limit=50${filter}${cursor ? `&cursor=${cursor}` : ''}`;
        const s = performance.now();
        const res = await fetch(url, { headers });
        const body = (await res.json()) as { users: unknown[]; nextCursor: string | null };
        latencies.push(performance.now() - s);
        if (res.status !== 200 || body.users.length === 0) throw new Error(`${label}: HTTP ${res.status}`);
        cursor = body.nextCursor;
        if (!cursor) break;
      }
    }
    await walk('warm-up', '');
    // CPU of this process, which runs both the server and the HTTP client here (an upper bound).
    const cpu0 = process.cpuUsage();
    await walk('all', '');
    await walk('status=suspended', '&status=suspended');
    await walk('status=active', '&status=active');
    await walk('role=admin', '&role=admin');
    const cpu = process.cpuUsage(cpu0);

    // The same walk in-process (no HTTP), to tell query cost from transport and machine load.
    const inProcess: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < PAGES_PER_WALK; page++) {
      const s = performance.now();
      const result = await listMembers(server.app.ctx, 'big', { cursor }, 50);
      inProcess.push(performance.now() - s);
      cursor = result.nextCursor ?? undefined;
    }
    inProcess.sort((a, b) => a - b);

    const all = Object.entries(timings).filter(([k]) => k !== 'warm-up').flatMap(([, v]) => v).sort((a, b) => a - b);
    const p95 = percentile(all, 95);
    const perWalk = Object.fromEntries(
      Object.entries(timings)
        .filter(([k]) => k !== 'warm-up')
        .map(([k, v]) => [`p95 ${k} ms`, Number(percentile([...v].sort((a, b) => a - b), 95).toFixed(2))]),
    );
    const total = all.reduce((a, b) => a + b, 0) / 1000;
    return [
      {
        scenario: 'members list (100k)',
        throughput: all.length / total,
        p50Ms: percentile(all, 50),
        p99Ms: percentile(all, 99),
        cpuSecondsPer1k: (cpu.user + cpu.system) / 1000 / all.length,
        measured: `p95 ${p95.toFixed(2)} ms`,
        extra: {
          'p95 ms': Number(p95.toFixed(2)),
          'in-process p95 ms': Number(percentile(inProcess, 95).toFixed(2)),
          'in-process p50 ms': Number(percentile(inProcess, 50).toFixed(2)),
          'load avg': Number(loadavg()[0]!.toFixed(1)),
          pages: all.length,
          'seed s': Number(seedSeconds.toFixed(1)),
          ...perWalk,
        },
        target: `p95 ≤ ${TARGET_P95_MS} ms per page of 50`,
        met: p95 <= TARGET_P95_MS,
      },
    ];
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export const scenario: Scenario = {
  name: 'members',
  description: `${MEMBERS.toLocaleString('en')} members in one application; pages of 50 over HTTP (cursor walk, status and role filters)`,
  run,
};
