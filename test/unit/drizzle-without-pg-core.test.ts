/**
 * drizzle-orm without its PostgreSQL dialect at start in the bundle (scripts/bundle/dependency-patches.mjs
 * `drizzleWithoutPgCore`, issue 45, decision 0475): drizzle's core (sql.js, relations.js) no
 * longer imports pg-core for `isPgEnum` and `PrimaryKeyBuilder`. A SQLite-only entry bundled
 * with the patch has no pg-core module (one without it has); an entry that uses both through
 * the PostgreSQL dialect (an enum in an SQL template, a composite primary key in a table's extra
 * configuration read by the relational config) prints the same with and without the patch.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { patchedBundles } from '../helpers/patched-bundle.js';
// @ts-expect-error: a plain .mjs script without types
import { drizzleWithoutPgCore } from '../../scripts/bundle/dependency-patches.mjs';

const SQLITE_ONLY = `
import { sql, eq } from 'drizzle-orm';
import { sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { drizzle } from 'drizzle-orm/better-sqlite3';
export const t = sqliteTable('t', { a: text('a') });
export const q = (db) => db.select().from(t).where(eq(t.a, sql\`1\`));
export { drizzle };
`;
const BOTH = `
import { sql, extractTablesRelationalConfig, createTableRelationsHelpers } from 'drizzle-orm';
import { pgTable, pgEnum, text, primaryKey, PgDialect } from 'drizzle-orm/pg-core';
const mood = pgEnum('mood', ['calm', 'busy']);
const t = pgTable('t', { a: text('a'), b: text('b') }, (t) => [primaryKey({ columns: [t.a, t.b] })]);
const config = extractTablesRelationalConfig({ t }, createTableRelationsHelpers);
console.log(JSON.stringify({ query: new PgDialect().sqlToQuery(sql\`select \${mood}, \${'x'}\`), primaryKey: config.tables.t.primaryKey.map((c) => c.name) }));
`;

const bundles = patchedBundles('drizzle-pg-core', SQLITE_ONLY, { format: 'esm', external: ['better-sqlite3'] });
afterAll(() => bundles.remove());

describe('drizzle-orm without pg-core at start in the bundle', () => {
  it('leaves PostgreSQL out of a SQLite-only bundle, and answers the same where PostgreSQL is used', async () => {
    const pgCore = (inputs: string[]) => inputs.filter((path) => path.includes('drizzle-orm/pg-core/'));
    expect(pgCore(await bundles.bundle([], 'sqlite-plain.mjs')).length).toBeGreaterThan(10);
    expect(pgCore(await bundles.bundle([drizzleWithoutPgCore], 'sqlite-patched.mjs'))).toEqual([]);

    await bundles.bundle([], 'both-plain.mjs', BOTH);
    await bundles.bundle([drizzleWithoutPgCore], 'both-patched.mjs', BOTH);
    const expected = { query: { sql: 'select "mood", $1', params: ['x'], typings: ['none'] }, primaryKey: ['a', 'b'] };
    expect(bundles.run('both-plain.mjs')).toEqual(expected);
    expect(bundles.run('both-patched.mjs')).toEqual(expected);
  });
});
