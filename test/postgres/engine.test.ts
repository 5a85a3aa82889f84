/**
 * PostgreSQL mode's engine (issue 26) on a real PostgreSQL 15 server (test/helpers/postgres-server.ts):
 * migrations once under the advisory lock when instances start together, the same tables as
 * SQLite, store transactions serialisable under real concurrency (retried, never a lost update),
 * statements of a body routed to its connection, the bounded pool and the statement timeout.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { openDatabase } from '../../server/db/client.js';
import { openPostgres, pgMigrationsFolder, postgresOptions, type PgDb } from '../../server/db/postgres.js';
import { activityDaily, refreshTokens, refreshTokenFamilies, applications, people } from '../../server/db/pg-schema.js';
import { exec, many, one, singleton, transaction } from '../../server/db/store.js';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.js';

let server: PostgresServer;
const opened: PgDb[] = [];

beforeAll(async () => {
  server = await startPostgres();
}, 120_000);

afterAll(async () => {
  await Promise.all(opened.map((db) => db.$client.end({ timeout: 1 })));
  server?.stop();
});

async function open(url: string, options: { max?: number; statementTimeoutMs?: number } = {}): Promise<PgDb> {
  const db = await openPostgres({ url, ...options });
  opened.push(db);
  return db;
}

const tableNames = async (db: PgDb) =>
  (await db.$client<{ name: string }[]>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`).map((r) => r.name);

describe('PostgreSQL engine', () => {
  it('two instances started at once on an empty database migrate it once, to the tables SQLite has', async () => {
    const url = await server.createDatabase();
    const [a, b] = await Promise.all([open(url), open(url)]);
    const known = (JSON.parse(readFileSync(join(pgMigrationsFolder(), 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] }).entries.length;
    const applied = await a.$client<{ n: string }[]>`SELECT count(*)::text AS n FROM drizzle.__drizzle_migrations`;
    expect(applied[0]!.n).toBe(String(known));
    // A third start later finds nothing to do.
    await open(url);
    expect((await b.$client<{ n: string }[]>`SELECT count(*)::text AS n FROM drizzle.__drizzle_migrations`)[0]!.n).toBe(String(known));

    const sqlite = openDatabase(':memory:');
    const sqliteTables = (sqlite.$client.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[])
      .map((r) => r.name)
      // SQLite's own bookkeeping and its full-text index (a virtual table and its shadow tables).
      .filter((name) => !name.startsWith('sqlite_') && name !== '__drizzle_migrations' && !name.startsWith('people_search'));
    sqlite.$client.close();
    expect(await tableNames(a)).toEqual([...sqliteTables].sort());
  });

  it('refuses a URL that is not postgres:// and reads the pool settings from the environment', () => {
    expect(postgresOptions({})).toBeUndefined();
    expect(() => postgresOptions({ GATEHOUSE_DATABASE_URL: 'mysql://x' })).toThrow('GATEHOUSE_DATABASE_URL must be a postgres:// URL.');
    expect(() => postgresOptions({ GATEHOUSE_DATABASE_URL: 'postgres://h/db', GATEHOUSE_DATABASE_POOL: '0' })).toThrow('GATEHOUSE_DATABASE_POOL must be a whole number of at least 4.');
    expect(postgresOptions({ GATEHOUSE_DATABASE_URL: 'postgres://h/db', GATEHOUSE_DATABASE_POOL: '4' })).toEqual({ url: 'postgres://h/db', max: 4, statementTimeoutMs: 5000 });
  });

  it('store transactions are serialisable: 20 concurrent read-then-write increments lose none', async () => {
    const db = await open(await server.createDatabase(), { max: 8 });
    await exec(db.insert(activityDaily).values({ applicationId: 'notes', day: 1 }));
    const where = and(eq(activityDaily.applicationId, 'notes'), eq(activityDaily.day, 1));
    await Promise.all(
      Array.from({ length: 20 }, () =>
        transaction(db, async (tx) => {
          const row = await one(tx.select({ n: activityDaily.signIns }).from(activityDaily).where(where));
          // Give the others time to read the same value: without serialisable semantics and a retry, updates are lost.
          await new Promise((resolve) => setTimeout(resolve, 5));
          await exec(tx.update(activityDaily).set({ signIns: row!.n + 1 }).where(where));
        }),
      ),
    );
    expect((await one(db.select({ n: activityDaily.signIns }).from(activityDaily).where(where)))!.n).toBe(20);
  });

  it("routes a body's statements to its connection, whichever handle runs them, and rolls all back on an error", async () => {
    const db = await open(await server.createDatabase());
    const now = new Date();
    await expect(
      transaction(db, async () => {
        await exec(db.insert(people).values({ id: 'usr_a', email: 'a@example.com', username: 'a', emailVerified: true, createdAt: now, updatedAt: now }));
        // The same handle inside the body sees the body's own uncommitted row; another connection does not.
        expect(await many(db.select({ id: people.id }).from(people))).toEqual([{ id: 'usr_a' }]);
        expect(await db.$client`SELECT id FROM people`).toHaveLength(0);
        throw new Error('stop');
      }),
    ).rejects.toThrow('stop');
    expect(await many(db.select().from(people))).toEqual([]);
  });

  it('a conditional update lets exactly one of 20 concurrent rotations of a refresh token win', async () => {
    const db = await open(await server.createDatabase(), { max: 10 });
    const now = new Date();
    await exec(db.insert(people).values({ id: 'usr_a', email: 'a@example.com', username: 'a', emailVerified: true, createdAt: now, updatedAt: now }));
    await exec(
      db.insert(applications).values({
        id: 'notes', name: 'Notes', audience: 'https://notes.example.com', redirectUris: [], clientType: 'spa', authPolicy: {}, updatedAt: now,
      }),
    );
    await exec(
      db.insert(refreshTokenFamilies).values({
        id: 'fam_a', applicationId: 'notes', personId: 'usr_a', scope: 'openid', resource: 'https://notes.example.com',
        authTime: now, expiresAt: new Date(now.getTime() + 60_000), amr: ['pwd'],
      }),
    );
    await exec(db.insert(refreshTokens).values({ tokenHash: 'h0', familyId: 'fam_a', createdAt: now, expiresAt: new Date(now.getTime() + 60_000) }));
    const wins = await Promise.all(
      Array.from({ length: 20 }, () =>
        exec(db.update(refreshTokens).set({ rotatedAt: new Date() }).where(and(eq(refreshTokens.tokenHash, 'h0'), sql`${refreshTokens.rotatedAt} IS NULL`))),
      ),
    );
    expect(wins.filter((n) => n === 1)).toHaveLength(1);
    expect(wins.filter((n) => n === 0)).toHaveLength(19);
  });

  it('keeps to its pool size and stops a statement at the statement timeout', async () => {
    // Asked for fewer than the smallest pool that works, it opens that many (MIN_POOL, 4) and no more.
    const db = await open(await server.createDatabase(), { max: 2, statementTimeoutMs: 300 });
    const pids = await Promise.all(Array.from({ length: 12 }, () => db.$client<{ pid: number }[]>`SELECT pg_backend_pid() AS pid, pg_sleep(0.05)`));
    expect(new Set(pids.map((r) => r[0]!.pid)).size).toBeLessThanOrEqual(4);
    await expect(db.$client`SELECT pg_sleep(2)`).rejects.toMatchObject({ code: '57014' });
  });

  it('runs a singleton job on one instance at a time, and frees it when the instance holding it dies', async () => {
    const url = await server.createDatabase();
    const [a, b] = await Promise.all([open(url), open(url)]);
    const ran: string[] = [];
    const job = (name: string, ms: number) => async () => {
      ran.push(name);
      await new Promise((resolve) => setTimeout(resolve, ms));
      return name;
    };
    const [first, second] = await Promise.all([singleton(a, 'sweeper', job('a', 300)), singleton(b, 'sweeper', job('b', 300))]);
    expect(ran).toHaveLength(1);
    expect([first, second].filter((r) => r.ran)).toEqual([{ ran: true, value: ran[0] }]);
    // Another job name is not held by it; once the first ended, the job is free again.
    expect(await singleton(b, 'key-rotation', job('b', 0))).toEqual({ ran: true, value: 'b' });
    expect(await singleton(b, 'sweeper', job('b', 0))).toEqual({ ran: true, value: 'b' });

    // Instance a holds the job and dies: its connections are cut, as when the process is killed.
    const held = singleton(a, 'sweeper', () => new Promise<string>(() => {}));
    // (Waiting for a to hold it first: b's own tries would otherwise make a's try fail.)
    await expect.poll(async () => (await b.$client`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted`).length).toBe(1);
    expect(await singleton(b, 'sweeper', job('b', 0))).toEqual({ ran: false });
    await a.$client.end({ timeout: 0 });
    await expect(held).rejects.toThrow();
    await expect.poll(async () => (await singleton(b, 'sweeper', job('b', 0))).ran).toBe(true);
  });
});
