/**
 * Upgrading a directory to usernames (decision 0100, spec claims-and-groups.md "People"): a
 * database written by the release before (every migration before `people_usernames_groups`)
 * holds people without usernames; the new migrations and the
 * start-up backfill name everyone by the rule, oldest first, with clashes numbered, in bounded
 * batches; new rows must carry a username. Every later migration runs before the backfill too (an
 * upgrade across several releases: `posix_ids` updates every person not yet named). Runs on SQLite
 * here and on PostgreSQL in unit-postgres.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { drizzle as sqliteDrizzle } from 'drizzle-orm/better-sqlite3';
import { migrate as sqliteMigrate } from 'drizzle-orm/better-sqlite3/migrator';
import { drizzle as pgDrizzle } from 'drizzle-orm/postgres-js';
import { migrate as pgMigrate } from 'drizzle-orm/postgres-js/migrator';
import { asc } from 'drizzle-orm';
import { migrationsFolder, openDatabase, type Db } from '../../server/db/client.js';
import { openPostgres, pgMigrationsFolder } from '../../server/db/postgres.js';
import { closeStore } from '../../server/db/open.js';
import { people } from '../../server/db/schema.js';
import { exec, many } from '../../server/db/store.js';
import { assignMissingUsernames } from '../../server/people/username-backfill.js';
import { makeApp } from '../helpers/app.js';
import { createApplication, signUp } from '../helpers/accounts.js';

/** The migration that brought usernames: the copy ends just before it (what the release before had). */
const USERNAMES = /^\d{4}_people_usernames_groups$/;

const work = mkdtempSync(join(tmpdir(), 'gatehouse-username-migration-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A copy of a migrations folder that ends before the usernames migration. */
function migrationsBeforeUsernames(source: string, into: string): string {
  const journal = JSON.parse(readFileSync(join(source, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] };
  const cut = journal.entries.findIndex((e) => USERNAMES.test(e.tag));
  expect(cut).toBeGreaterThan(0);
  const entries = journal.entries.slice(0, cut);
  mkdirSync(join(into, 'meta'), { recursive: true });
  for (const entry of entries) copyFileSync(join(source, `${entry.tag}.sql`), join(into, `${entry.tag}.sql`));
  writeFileSync(join(into, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries }));
  return into;
}

const T0 = Date.parse('2024-01-01T00:00:00Z');
const HOUR = 3_600_000;

/**
 * The directory before the upgrade: [id, e-mail, hours after T0]. Written newest first, so
 * creation order (not row order) must decide who gets the bare name.
 */
const DIRECTORY: Array<[string, string, number]> = [
  ['usr_01', 'Bob@Example.com', 1],
  ['usr_02', 'bob@other.example', 2],
  ['usr_03', 'bob2@third.example', 3],
  ['usr_04', 'bob@fourth.example', 4],
  ['usr_05', "o'brien+news@example.com", 5],
  ['usr_06', '__init__@example.com', 6],
  ['usr_07', '___@example.com', 7],
  ['usr_08', 'Ünïcode@example.com', 8],
  ['usr_09', `${'a'.repeat(70)}@example.com`, 9],
  ['usr_10', `${'a'.repeat(70)}@example.org`, 10],
  // Two at the same instant: the id decides.
  ['usr_12', 'info@b.example', 11],
  ['usr_11', 'info@a.example', 11],
  ['usr_13', 'info@c.example', 12],
  ['usr_14', 'x.y_z-1@example.com', 13],
];

const EXPECTED: Record<string, string> = {
  usr_01: 'bob',
  usr_02: 'bob2',
  usr_03: 'bob22',
  usr_04: 'bob3',
  usr_05: 'o-brien-news',
  usr_06: 'init__',
  usr_07: 'user',
  usr_08: 'n-code',
  usr_09: 'a'.repeat(64),
  usr_10: `${'a'.repeat(63)}2`,
  usr_11: 'info',
  usr_12: 'info2',
  usr_13: 'info3',
  usr_14: 'x.y_z-1',
};

async function usernames(db: Db): Promise<Record<string, string | null>> {
  const rows = await many(db.select({ id: people.id, username: people.username }).from(people).orderBy(asc(people.id)));
  return Object.fromEntries(rows.map((r) => [r.id, r.username]));
}

const rows = [...DIRECTORY].reverse();

/** The database's own words for refusing a write (drizzle wraps PostgreSQL's error in `cause`). */
async function refusal(write: Promise<unknown>): Promise<string> {
  try {
    await write;
  } catch (error) {
    const { message, cause } = error as { message: string; cause?: { message: string } };
    return cause?.message ?? message;
  }
  return 'accepted';
}

async function checkUpgrade(db: Db, other?: Db): Promise<void> {
  expect(Object.values(await usernames(db)).every((u) => u === null)).toBe(true);
  // Batches of 3: clashes span batches (`bob` in the first, `bob3` in the second, `info3` in the fifth).
  const runs = await Promise.all([assignMissingUsernames(db, { batch: 3 }), ...(other ? [assignMissingUsernames(other, { batch: 3 })] : [])]);
  // Two instances started together: one names everyone, the other waits and finds nothing left.
  expect(runs.map((r) => r.assigned).sort((a, b) => b - a)).toEqual(other ? [DIRECTORY.length, 0] : [DIRECTORY.length]);
  expect(runs.find((r) => r.assigned > 0)!.batches).toBe(5);
  expect(await usernames(db)).toEqual(EXPECTED);
  for (const name of Object.values(EXPECTED)) expect(name).toMatch(/^[a-z0-9][a-z0-9._-]{0,63}$/);
  // The next start finds no one to name.
  expect(await assignMissingUsernames(db)).toEqual({ assigned: 0, batches: 0 });
  // From now on a person without a username is refused by the database itself.
  const now = new Date(T0 + 100 * HOUR);
  expect(await refusal(exec(db.insert(people).values({ id: 'usr_99', email: 'new@example.com', username: null as unknown as string, updatedAt: now })))).toMatch(/NOT NULL constraint failed: people\.username|people_username_required/);
  // And the unique index holds.
  expect(await refusal(exec(db.insert(people).values({ id: 'usr_98', email: 'new@example.com', username: 'bob', updatedAt: now })))).toMatch(/UNIQUE constraint failed: people\.username|people_username_uq/);
}

/** SQLite: a data directory's file at the baseline, then opened by this build (its migrations run). */
async function upgradeSqlite(): Promise<void> {
  const file = join(work, 'gatehouse.db');
  const old = new Database(file);
  sqliteMigrate(sqliteDrizzle(old), { migrationsFolder: migrationsBeforeUsernames(migrationsFolder(), join(work, 'sqlite-migrations')) });
  const insert = old.prepare('INSERT INTO people (id, email, email_verified, name, created_at, updated_at) VALUES (?, ?, 1, NULL, ?, ?)');
  for (const [id, email, hours] of rows) insert.run(id, email.toLowerCase(), T0 + hours * HOUR, T0 + hours * HOUR);
  old.close();
  const db = openDatabase(file);
  try {
    await checkUpgrade(db);
  } finally {
    db.$client.close();
  }
}

/** PostgreSQL: a database at the baseline, then two instances of this build started on it together. */
async function upgradePostgres(port: number): Promise<void> {
  const name = `gatehouse_upgrade_${process.pid}`;
  const admin = postgres(`postgres://postgres@127.0.0.1:${port}/postgres`, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = `postgres://postgres@127.0.0.1:${port}/${name}`;
  const old = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await pgMigrate(pgDrizzle(old), { migrationsFolder: migrationsBeforeUsernames(pgMigrationsFolder(), join(work, 'pg-migrations')) });
    for (const [id, email, hours] of rows) {
      const at = new Date(T0 + hours * HOUR).toISOString();
      await old`INSERT INTO people (id, email, email_verified, name, created_at, updated_at) VALUES (${id}, ${email.toLowerCase()}, true, NULL, ${at}, ${at})`;
    }
  } finally {
    await old.end();
  }
  const [a, b] = (await Promise.all([openPostgres({ url, max: 2 }), openPostgres({ url, max: 2 })])) as unknown as [Db, Db];
  try {
    await checkUpgrade(a, b);
  } finally {
    await closeStore(a);
    await closeStore(b);
    await admin.unsafe(`DROP DATABASE ${name}`);
    await admin.end();
  }
}

describe('the username migration', () => {
  it('names every existing person by the rule, oldest first, clashes numbered, in batches; new rows must carry one', async () => {
    const pg = inject('gatehousePostgres');
    if (pg) await upgradePostgres(pg.port);
    else await upgradeSqlite();
  });
});

describe('new people', () => {
  it('get a username by the same rule when they sign up, numbered on a clash', async () => {
    const t = await makeApp();
    await createApplication(t, { authPolicy: { signup_policy: 'open' } });
    for (const email of ['Bob@a.example', 'bob@b.example', 'bob2@c.example']) {
      expect((await signUp(t, { email, applicationId: 'notes' })).statusCode).toBe(201);
    }
    const rows = await many(t.db.select({ email: people.email, username: people.username }).from(people).orderBy(asc(people.createdAt), asc(people.id)));
    expect(rows).toEqual([
      { email: 'bob@a.example', username: 'bob' },
      { email: 'bob@b.example', username: 'bob2' },
      { email: 'bob2@c.example', username: 'bob22' },
    ]);
  });
});
