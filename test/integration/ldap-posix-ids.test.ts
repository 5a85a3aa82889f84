/**
 * uidNumber and gidNumber (spec ldap.md, "The tree"): the migration `posix_ids` numbers the people
 * and groups a database already holds (people oldest first, then groups, from 10000), and every
 * later insert takes the next number of the one sequence, never one that was used before, not
 * even after the newest row is deleted. On the engine the project runs (SQLite here, PostgreSQL
 * in unit-postgres), upgrading a database with data in it.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { drizzle as sqliteDrizzle } from 'drizzle-orm/better-sqlite3';
import { migrate as sqliteMigrate } from 'drizzle-orm/better-sqlite3/migrator';
import { drizzle as pgDrizzle } from 'drizzle-orm/postgres-js';
import { migrate as pgMigrate } from 'drizzle-orm/postgres-js/migrator';
import { migrationsFolder } from '../../server/db/client.js';
import { pgMigrationsFolder } from '../../server/db/postgres.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A copy of a migrations folder holding only the migrations before `tag`. */
function migrationsBefore(folder: string, tag: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-migrations-'));
  dirs.push(dir);
  cpSync(folder, dir, { recursive: true });
  const journalFile = join(dir, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] };
  const at = journal.entries.findIndex((e) => e.tag.endsWith(tag));
  expect(at).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, at);
  writeFileSync(journalFile, JSON.stringify(journal));
  return dir;
}

/** Rows written before the upgrade: three people (created out of id order), two groups. */
const BEFORE = {
  people: [
    { id: 'usr_c', email: 'c@example.com', username: 'c', created: 1_000 },
    { id: 'usr_a', email: 'a@example.com', username: 'a', created: 3_000 },
    { id: 'usr_b', email: 'b@example.com', username: 'b', created: 2_000 },
  ],
  groups: [
    { id: 'zeta', created: 500 },
    { id: 'alpha', created: 4_000 },
  ],
};
const EXPECTED = { people: { usr_c: 10000, usr_b: 10001, usr_a: 10002 }, groups: { zeta: 10003, alpha: 10004 } };

interface Engine {
  run(sql: string, ...params: unknown[]): Promise<unknown[]>;
}

async function story(engine: Engine, upgrade: () => Promise<void>) {
  for (const p of BEFORE.people) await engine.run('INSERT INTO people (id, email, username, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)', p.id, p.email, p.username, p.created);
  for (const g of BEFORE.groups) await engine.run('INSERT INTO groups (id, name, created_at, updated_at) VALUES ($1, $1, $2, $2)', g.id, g.created);
  await upgrade();
  const numbers = async (table: 'people' | 'groups', column: string) =>
    Object.fromEntries((await engine.run(`SELECT id, ${column} AS n FROM ${table} ORDER BY id`) as { id: string; n: number }[]).map((r) => [r.id, Number(r.n)]));
  expect(await numbers('people', 'uid_number')).toEqual(EXPECTED.people);
  expect(await numbers('groups', 'gid_number')).toEqual(EXPECTED.groups);

  // New rows continue the one sequence; deleting the newest does not free its number.
  await engine.run('INSERT INTO people (id, email, username, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)', 'usr_d', 'd@example.com', 'd', 5_000);
  await engine.run('INSERT INTO groups (id, name, created_at, updated_at) VALUES ($1, $1, $2, $2)', 'beta', 6_000);
  await engine.run('DELETE FROM groups WHERE id = $1', 'beta');
  await engine.run('DELETE FROM people WHERE id = $1', 'usr_d');
  await engine.run('INSERT INTO people (id, email, username, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)', 'usr_e', 'e@example.com', 'e', 7_000);
  await engine.run('INSERT INTO groups (id, name, created_at, updated_at) VALUES ($1, $1, $2, $2)', 'gamma', 8_000);
  expect(await numbers('people', 'uid_number')).toEqual({ ...EXPECTED.people, usr_e: 10007 });
  expect(await numbers('groups', 'gid_number')).toEqual({ ...EXPECTED.groups, gamma: 10008 });
  // The unique indexes hold: a number cannot be given twice.
  await expect(engine.run('UPDATE people SET uid_number = 10000 WHERE id = $1', 'usr_a')).rejects.toThrow();
}

describe('uidNumber and gidNumber', () => {
  it('numbers existing people and groups at the upgrade, then every new one from the same sequence, never reused', async () => {
    const pg = inject('gatehousePostgres');
    if (!pg) {
      const sqlite = new Database(':memory:');
      const db = sqliteDrizzle(sqlite);
      sqliteMigrate(db, { migrationsFolder: migrationsBefore(migrationsFolder(), '_posix_ids') });
      const engine: Engine = {
        run: async (sql, ...params) => {
          // Named parameters: better-sqlite3 binds a repeated ?NNN only by name.
          const statement = sqlite.prepare(sql.replace(/\$(\d+)/g, '@p$1'));
          const named = Object.fromEntries(params.map((p, i) => [`p${i + 1}`, p]));
          return statement.reader ? statement.all(named) : (statement.run(named), []);
        },
      };
      await story(engine, async () => sqliteMigrate(db, { migrationsFolder: migrationsFolder() }));
      sqlite.close();
      return;
    }
    const name = `gatehouse_posix_${process.pid}`;
    const admin = postgres(`postgres://postgres@127.0.0.1:${pg.port}/postgres`, { max: 1, onnotice: () => {} });
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name}`);
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const sql = postgres(`postgres://postgres@127.0.0.1:${pg.port}/${name}`, { max: 1, onnotice: () => {} });
    try {
      const db = pgDrizzle(sql);
      await pgMigrate(db, { migrationsFolder: migrationsBefore(pgMigrationsFolder(), '_posix_ids') });
      const engine: Engine = {
        run: async (text, ...params) =>
          // The timestamps (milliseconds here) as PostgreSQL's timestamptz.
          (await sql.unsafe(text, params.map((p) => (typeof p === 'number' && p < 10_000 ? new Date(p).toISOString() : p)) as never[])) as unknown[],
      };
      await story(engine, async () => pgMigrate(db, { migrationsFolder: pgMigrationsFolder() }));
    } finally {
      await sql.end();
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name}`);
      await admin.end();
    }
  });
});
