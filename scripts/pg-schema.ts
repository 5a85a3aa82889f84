/**
 * Writes server/db/pg-schema.ts, PostgreSQL's drizzle schema, from the one source of truth:
 * server/db/schema.ts (SQLite). `--check` fails when the committed file is out of step instead
 * (the unit suite runs it), so a schema change is made once, in schema.ts, then
 * `npx tsx scripts/pg-schema.ts && npx drizzle-kit generate --config drizzle.pg.config.ts`.
 *
 * Why generated rather than written twice (docs/decisions/0075-one-data-access-layer.md): drizzle has no
 * dialect-neutral table, and two hand-kept schemas drift. The SQLite schema stays the one that
 * types the queries; this file only has to give PostgreSQL the same tables, columns, keys and
 * indexes, so it carries no TypeScript `$type`s.
 *
 * Mapping: text → text; text JSON → jsonb; integer timestamp_ms → timestamptz(3); integer boolean →
 * boolean; integer → integer; blob (buffer) → bytea. A SQL default is mapped by the table below; an unknown one stops
 * the generator (it must be mapped by hand, once).
 *
 * One deliberate difference: the foreign keys that the purge plans carry (every reference to an
 * application or a membership, and a directory group's members: data-lifecycle/purge-plans.ts) are left out. Deleting an
 * application or a membership removes the row at once and what hung off it in bounded batches;
 * SQLite turns its enforcement off for that one transaction, but PostgreSQL cascades (and checks
 * a foreign key) whatever a transaction does, so the same delete there would be one unbounded
 * statement. The plan is the integrity rule for those references on PostgreSQL
 * (docs/decisions/0077-postgres-data-lifecycle.md).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { is, SQL } from 'drizzle-orm';
import { getTableConfig, SQLiteTable, type AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import * as schema from '../server/db/schema.js';
import { PURGE_PLANS } from '../server/data-lifecycle/purge-plans.js';

const OUT = fileURLToPath(new URL('../server/db/pg-schema.ts', import.meta.url));

/** A single-quoted TypeScript string (the project's style). */
const q = (text: string) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/** SQLite SQL defaults and their PostgreSQL form (a drizzle column-builder call). */
const SQL_DEFAULTS: Record<string, string> = {
  "(unixepoch('subsec') * 1000)": '.defaultNow()',
  '\'["authorization_code","refresh_token"]\'': `.default(sql\`'["authorization_code","refresh_token"]'::jsonb\`)`,
  '\'{"enabled":false}\'': `.default(sql\`'{"enabled":false}'::jsonb\`)`,
};

function sqlText(value: SQL): string {
  return value.queryChunks.map((chunk) => (typeof chunk === 'object' && chunk && 'value' in chunk ? (chunk.value as string[]).join('') : String(chunk))).join('');
}

function columnCode(column: AnySQLiteColumn): { code: string; builder: string } {
  const name = q(column.name);
  let builder: string;
  let code: string;
  switch (column.columnType) {
    case 'SQLiteText':
      builder = 'text';
      code = `text(${name})`;
      break;
    case 'SQLiteTextJson':
      builder = 'jsonb';
      code = `jsonb(${name})`;
      break;
    case 'SQLiteTimestamp':
      builder = 'timestamp';
      code = `timestamp(${name}, { withTimezone: true, precision: 3, mode: 'date' })`;
      break;
    case 'SQLiteBoolean':
      builder = 'boolean';
      code = `boolean(${name})`;
      break;
    case 'SQLiteInteger':
      builder = 'integer';
      code = `integer(${name})`;
      break;
    case 'SQLiteBlobBuffer':
      // drizzle's pg-core has no bytea builder: a custom type, defined once at the top of the file.
      builder = 'customType';
      code = `bytea(${name})`;
      break;
    default:
      throw new Error(`${column.name}: no PostgreSQL mapping for ${column.columnType}`);
  }
  if (column.primary) code += '.primaryKey()';
  if (column.notNull && !column.primary) code += '.notNull()';
  if (column.hasDefault && column.default !== undefined) {
    if (is(column.default, SQL)) {
      const text = sqlText(column.default);
      const mapped = SQL_DEFAULTS[text];
      if (!mapped) throw new Error(`${column.name}: map the SQL default ${text} in scripts/pg-schema.ts`);
      code += mapped;
    } else {
      code += `.default(${JSON.stringify(column.default)})`;
    }
  }
  return { code, builder };
}

/** Columns whose reference to an application, a membership, a person or a directory group the purge plans keep instead of a foreign key. */
const PURGED_REFERENCES = new Set<unknown>(
  [...PURGE_PLANS.application, ...PURGE_PLANS.membership, ...PURGE_PLANS.person, ...PURGE_PLANS.group].map((step) => step.column),
);
const PURGED_PARENTS = new Set<unknown>([schema.applications, schema.memberships, schema.people, schema.groups]);

export function generate(): string {
  // By export name: a module namespace is ordered so under Node, not necessarily under vitest.
  const tables = (Object.entries(schema).filter(([, value]) => is(value, SQLiteTable)) as Array<[string, SQLiteTable]>).sort(([a], [b]) => (a < b ? -1 : 1));
  const builders = new Set<string>(['pgTable']);
  const varOf = new Map<SQLiteTable, string>(tables.map(([name, table]) => [table, name]));
  const bodies: string[] = [];
  for (const [exportName, table] of tables) {
    const config = getTableConfig(table);
    const fieldOf = new Map<string, string>();
    for (const [field, column] of Object.entries(table) as Array<[string, unknown]>) {
      if (column && typeof column === 'object' && 'columnType' in column) fieldOf.set((column as AnySQLiteColumn).name, field);
    }
    const columns = config.columns.map((column) => {
      const { code, builder } = columnCode(column);
      builders.add(builder);
      return `    ${fieldOf.get(column.name)}: ${code},`;
    });
    const extras: string[] = [];
    for (const pk of config.primaryKeys) {
      builders.add('primaryKey');
      extras.push(`primaryKey({ columns: [${pk.columns.map((c) => `t.${fieldOf.get(c.name)}`).join(', ')}] })`);
    }
    for (const fk of config.foreignKeys) {
      const ref = fk.reference();
      const parent = ref.foreignTable as SQLiteTable;
      if (PURGED_PARENTS.has(parent) && ref.columns.length === 1 && PURGED_REFERENCES.has(ref.columns[0])) continue;
      builders.add('foreignKey');
      const target = varOf.get(ref.foreignTable as SQLiteTable);
      const targetFields = ref.foreignColumns.map((c) => {
        const targetTable = ref.foreignTable as unknown as Record<string, AnySQLiteColumn>;
        const field = Object.keys(targetTable).find((k) => targetTable[k] === c);
        return `${target}.${field}`;
      });
      let code = `foreignKey({ name: ${q(fk.getName())}, columns: [${ref.columns.map((c) => `t.${fieldOf.get(c.name)}`).join(', ')}], foreignColumns: [${targetFields.join(', ')}] })`;
      if (fk.onDelete && fk.onDelete !== 'no action') code += `.onDelete(${q(fk.onDelete)})`;
      extras.push(code);
    }
    for (const index of config.indexes) {
      const c = index.config;
      const kind = c.unique ? 'uniqueIndex' : 'index';
      builders.add(kind);
      const on = c.columns.map((col) => {
        if (is(col, SQL)) throw new Error(`${c.name}: expression indexes need a mapping in scripts/pg-schema.ts`);
        return `t.${fieldOf.get((col as AnySQLiteColumn).name)}`;
      });
      if (c.where) throw new Error(`${c.name}: partial indexes need a mapping in scripts/pg-schema.ts`);
      extras.push(`${kind}(${q(c.name)}).on(${on.join(', ')})`);
    }
    const tail = extras.length ? `,\n  (t) => [\n    ${extras.join(',\n    ')},\n  ]` : '';
    bodies.push(`export const ${exportName} = pgTable(\n  ${q(config.name)},\n  {\n${columns.join('\n')}\n  }${tail},\n);`);
  }
  const needsSql = bodies.some((b) => b.includes('sql`'));
  const preamble = builders.has('customType')
    ? ["", "const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });"]
    : [];
  return [
    '// Generated by scripts/pg-schema.ts from server/db/schema.ts (the one source of truth): do not edit.',
    '// PostgreSQL mode (issue 26): the same tables, columns, keys and indexes as SQLite.',
    ...(needsSql ? ["import { sql } from 'drizzle-orm';"] : []),
    `import { ${[...builders].sort().join(', ')} } from 'drizzle-orm/pg-core';`,
    ...preamble,
    '',
    bodies.join('\n\n'),
    '',
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = generate();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(OUT, 'utf8');
    } catch {
      // missing: out of step
    }
    if (current !== text) {
      console.error('server/db/pg-schema.ts is out of step with server/db/schema.ts: run `npx tsx scripts/pg-schema.ts`.');
      process.exit(1);
    }
  } else {
    writeFileSync(OUT, text);
  }
}
