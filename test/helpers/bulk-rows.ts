/**
 * Seeds many rows fast, on either engine (issue 45): drizzle's multi-row INSERT costs 45-120 µs a
 * row (building the SQL text; on PostgreSQL also thousands of bound parameters per statement),
 * which made seeding 100,000 rows most of a big-delete test's time. Here SQLite runs one prepared
 * statement per row inside one native transaction, and PostgreSQL takes the rows as one JSON
 * parameter per 10,000 (`jsonb_to_recordset`, typed by the table's PostgreSQL twin). Values are
 * encoded by each column's own driver mapping, as drizzle would (dates, booleans, JSON).
 */
import { getTableColumns, getTableName, sql, type Column } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from '../../server/db/client.js';
import { toPostgres } from '../../server/db/pg-adapter.js';
import { engineOf, sqlRows, sqliteTurn } from '../../server/db/store.js';
import { memberships, people, refreshTokenFamilies, refreshTokens, sessionRealms, sessions } from '../../server/db/schema.js';

/** Rows per PostgreSQL statement (one JSON parameter each). */
const PG_CHUNK = 10_000;

/**
 * Inserts `rows` into `table` in one transaction on SQLite (per chunk on PostgreSQL). Every row
 * names the same columns; a column no row names takes the database's default.
 */
export async function insertRows<T extends SQLiteTable>(db: Db, table: T, rows: T['$inferInsert'][]): Promise<void> {
  if (rows.length === 0) return;
  const columns = getTableColumns(table) as Record<string, Column>;
  const keys = Object.keys(rows[0]!).filter((key) => key in columns);
  for (const row of rows) {
    if (Object.keys(row).length !== keys.length || keys.some((key) => !(key in row))) {
      throw new Error(`insertRows(${getTableName(table)}): every row names the same columns (${keys.join(', ')})`);
    }
  }
  const names = keys.map((key) => columns[key]!.name);
  const quoted = names.map((name) => `"${name}"`).join(', ');
  if (engineOf(db) === 'sqlite') {
    const encode = keys.map((key) => columns[key]!);
    const statement = db.$client.prepare(`INSERT INTO "${getTableName(table)}" (${quoted}) VALUES (${names.map(() => '?').join(', ')})`);
    const insert = db.$client.transaction((all: T['$inferInsert'][]) => {
      for (const row of all) {
        statement.run(...keys.map((key, i) => {
          const value = (row as Record<string, unknown>)[key];
          return value === null || value === undefined ? null : encode[i]!.mapToDriverValue(value);
        }));
      }
    });
    await sqliteTurn(() => insert(rows));
    return;
  }
  const twin = keys.map((key) => toPostgres(columns[key]!));
  const types = twin.map((column, i) => `"${names[i]}" ${column.getSQLType()}`).join(', ');
  // JSON columns take the value itself; the others their driver value (a timestamp's ISO text).
  const isJson = twin.map((column) => /^jsonb?$/.test(column.getSQLType()));
  for (let start = 0; start < rows.length; start += PG_CHUNK) {
    const chunk = rows.slice(start, start + PG_CHUNK).map((row) => {
      const out: Record<string, unknown> = {};
      keys.forEach((key, i) => {
        const value = (row as Record<string, unknown>)[key];
        out[names[i]!] = value === null || value === undefined || isJson[i] ? (value ?? null) : twin[i]!.mapToDriverValue(value);
      });
      return out;
    });
    await sqlRows(db, sql`INSERT INTO ${sql.raw(`"${getTableName(table)}" (${quoted})`)} SELECT ${sql.raw(quoted)} FROM jsonb_to_recordset(${JSON.stringify(chunk)}::jsonb) AS r(${sql.raw(types)})`);
  }
}

/**
 * An application `app` with `n` members, each with a session marked for it and a refresh-token
 * family of `tokens` tokens (the big-delete tests: data-lifecycle*.test.ts and
 * postgres/lifecycle.test.ts). The application row itself is the caller's.
 */
export async function seedApplication(db: Db, app: string, n: number, tokens: number): Promise<void> {
  const EPOCH = new Date(0);
  const far = new Date(Date.now() + 30 * 86_400_000);
  const range = Array.from({ length: n }, (_, i) => i);
  await insertRows(db, people, range.map((i) => ({ id: `usr_${app}_${i}`, email: `${app}${i}@example.com`, username: `${app}${i}`, name: `Person ${i}`, createdAt: EPOCH, updatedAt: EPOCH })));
  await insertRows(db, memberships, range.map((i) => ({ id: `mem_${app}_${i}`, applicationId: app, personId: `usr_${app}_${i}`, joinedAt: EPOCH, lastActiveAt: EPOCH, updatedAt: EPOCH })));
  await insertRows(db, refreshTokenFamilies, range.map((i) => ({
    id: `fam_${app}_${i}`, applicationId: app, personId: `usr_${app}_${i}`, membershipId: `mem_${app}_${i}`, scope: 'openid offline_access', resource: 'r', authTime: EPOCH, createdAt: EPOCH, expiresAt: far,
  })));
  await insertRows(db, refreshTokens, range.flatMap((i) => Array.from({ length: tokens }, (_, j) => ({ tokenHash: `tok_${app}_${i}_${j}`, familyId: `fam_${app}_${i}`, createdAt: EPOCH, expiresAt: far }))));
  await insertRows(db, sessions, range.map((i) => ({ id: `ses_${app}_${i}`, tokenHash: `sh_${app}_${i}`, personId: `usr_${app}_${i}`, createdAt: EPOCH, expiresAt: far, lastSeenAt: EPOCH })));
  await insertRows(db, sessionRealms, range.map((i) => ({ sessionId: `ses_${app}_${i}`, realm: `app:${app}`, authenticatedAt: EPOCH })));
}
