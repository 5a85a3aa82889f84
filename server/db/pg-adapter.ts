/**
 * One set of query modules for both engines (issue 26): the query modules build drizzle queries
 * against the SQLite schema (db/schema.ts, the one that types them); on PostgreSQL, the database
 * handle they are given is this adapter around drizzle's PostgreSQL database. Every table and
 * column an argument carries is swapped for its PostgreSQL twin (db/pg-schema.ts, generated from
 * schema.ts with the same export and column names) as the query is built, so the PostgreSQL
 * dialect writes the SQL and PostgreSQL's column types encode the parameters and decode the rows
 * (timestamptz ↔ Date, jsonb ↔ values, boolean ↔ boolean).
 *
 * What is swapped, wherever it sits in an argument (a selection object, a `where` condition, an
 * `on` clause, a `set`, an ORDER BY list): tables, columns, parameters bound to a column (their
 * encoder), and SQL fragments (rebuilt with swapped chunks). Raw SQL text is not translated:
 * engine-specific SQL is written once per engine by its module (`engineOf(db)` in db/store.ts).
 *
 * Why at run time rather than a second copy of each query (docs/decisions/0075-one-data-access-layer.md): the
 * queries stay written, typed and reviewed once; the cost (a proxy per builder call, a copied
 * SQL tree) is paid in PostgreSQL mode only, and is microseconds against a network round trip.
 */
import { Column, getTableColumns, is, Param, SQL, Table } from 'drizzle-orm';
import * as sqliteSchema from './schema.js';
import * as pgSchema from './pg-schema.js';

const tables = new Map<Table, Table>();
const columns = new Map<Column, Column>();

for (const [name, table] of Object.entries(sqliteSchema)) {
  if (!is(table, Table)) continue;
  const twin = (pgSchema as Record<string, unknown>)[name];
  if (!is(twin, Table)) throw new Error(`db/pg-schema.ts has no table ${name}: run scripts/pg-schema.ts`);
  tables.set(table, twin);
  const twinColumns = getTableColumns(twin);
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const pgColumn = twinColumns[key];
    if (!pgColumn) throw new Error(`db/pg-schema.ts has no column ${name}.${key}: run scripts/pg-schema.ts`);
    columns.set(column, pgColumn);
  }
}

/** drizzle's fields that its types keep internal. */
interface Internals {
  decoder: unknown;
  shouldInlineParams: boolean;
  isSelectionField: boolean;
}

/** `value` with every SQLite table, column and column-bound parameter swapped for PostgreSQL's. */
export function toPostgres<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (is(value, Table)) return (tables.get(value) ?? value) as T;
  if (is(value, Column)) return (columns.get(value) ?? value) as T;
  if (is(value, Param)) {
    const encoder = columns.get(value.encoder as Column);
    return (encoder ? new Param(value.value, encoder) : value) as T;
  }
  if (is(value, SQL.Aliased)) {
    const aliased = new SQL.Aliased(toPostgres(value.sql), value.fieldAlias);
    (aliased as unknown as Internals).isSelectionField = (value as unknown as Internals).isSelectionField;
    return aliased as T;
  }
  if (is(value, SQL)) {
    const from = value as unknown as Internals;
    const copy = new SQL(value.queryChunks.map(toPostgres)) as unknown as Internals;
    copy.decoder = columns.get(from.decoder as Column) ?? from.decoder;
    copy.shouldInlineParams = from.shouldInlineParams;
    return copy as T;
  }
  if (Array.isArray(value)) return value.map(toPostgres) as T;
  if (Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(value)) out[key] = toPostgres(entry);
    return out as T;
  }
  return value;
}

/** Methods whose arguments are values (placeholder values, callbacks), not query parts. */
const PASS_THROUGH = new Set<PropertyKey>(['execute', 'then', 'catch', 'finally', 'getSQL', 'toSQL', 'all', 'values', 'mapWith', 'as', '$client']);

function isBuilder(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !(value instanceof Promise) && !is(value, SQL) && !is(value, Table) && !is(value, Column);
}

/**
 * `target` (drizzle's PostgreSQL database, or a builder it returned) whose methods receive
 * PostgreSQL tables and columns, and whose builders are adapted in turn.
 */
export function adaptForPostgres<T extends object>(target: T): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const member = Reflect.get(object, property, receiver) as unknown;
      // Only the builders' methods (on their prototypes): own properties are data (a prepared
      // query's client, itself a function in postgres.js).
      if (typeof member !== 'function' || PASS_THROUGH.has(property) || typeof property === 'symbol' || Object.hasOwn(object, property)) return member;
      return (...args: unknown[]) => {
        const result = (member as (...a: unknown[]) => unknown).apply(object, args.map(toPostgres));
        return isBuilder(result) ? adaptForPostgres(result) : result;
      };
    },
  });
}
