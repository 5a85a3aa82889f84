/**
 * `gatehouse status` in PostgreSQL mode (issue 26): the engine, the server's version, the pool
 * settings and the migration state, read over one connection without migrating anything.
 * Backups there are the operator's `pg_dump` (db/postgres-options.ts PG_BACKUP_ADVICE).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { pgMigrationsFolder } from '../db/postgres.js';
import type { PostgresOptions } from '../db/postgres-options.js';
import { passkeysFor, passkeysLine, recordedLines, type DataDirStatus } from './status.js';
import type { RecordedStatus } from '../plugin-api/registries.js';

/**
 * The settings every instance in PostgreSQL mode needs besides the database URL (docs/postgresql.md),
 * each as the alternatives that satisfy it; the ones this environment lacks.
 */
const REQUIRED_SETTINGS: string[][] = [
  ['GATEHOUSE_ISSUER'],
  ['ADMIN_TOKEN', 'ADMIN_TOKEN_FILE'],
  ['GATEHOUSE_KEY_SECRET', 'GATEHOUSE_KEY_SECRET_FILE'],
];

export function missingPostgresSettings(env: NodeJS.ProcessEnv): string[] {
  return REQUIRED_SETTINGS.filter((names) => names.every((name) => !env[name])).map((names) => names.join(' or '));
}

export interface PostgresStatus {
  engine: 'postgres';
  /** Where the settings were read (an --env-file, or the environment), and which required ones are missing there. */
  settings: { source: string; missing: string[] };
  /** Whether GATEHOUSE_ISSUER can offer passkeys (null when it is not set). */
  passkeys: DataDirStatus['passkeys'] | null;
  /** The URL without its password. */
  database: string;
  serverVersion: string;
  pool: { max: number; statementTimeoutMs: number };
  migrations: { applied: number; known: number; pending: number };
  /** And, by each plugin status's name, what the last instance to start recorded (null: none has yet): `ldap`, the directory. */
  [recorded: string]: unknown;
}

export function redactedUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

export async function readPostgresStatus(options: PostgresOptions, env: NodeJS.ProcessEnv, source: string, recorded: readonly RecordedStatus[] = []): Promise<PostgresStatus> {
  const sql = postgres(options.url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    const [{ version }] = (await sql<{ version: string }[]>`SELECT current_setting('server_version') AS version`) as unknown as [{ version: string }];
    const [{ present }] = (await sql<{ present: string | null }[]>`SELECT to_regclass('drizzle.__drizzle_migrations')::text AS present`) as unknown as [{ present: string | null }];
    const applied = present ? Number((await sql<{ n: string }[]>`SELECT count(*)::text AS n FROM drizzle.__drizzle_migrations`)[0]!.n) : 0;
    const journal = JSON.parse(readFileSync(join(pgMigrationsFolder(), 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] };
    const known = journal.entries.length;
    const hasMeta = Boolean((await sql<{ present: string | null }[]>`SELECT to_regclass('public.meta')::text AS present`)[0]!.present);
    const states: [string, unknown][] = [];
    for (const r of recorded) {
      const row = hasMeta ? (await sql<{ value: string }[]>`SELECT value FROM meta WHERE key = ${r.metaKey}`)[0] : undefined;
      states.push([r.name, row ? JSON.parse(row.value) : null]);
    }
    return {
      engine: 'postgres',
      settings: { source, missing: missingPostgresSettings(env) },
      passkeys: env.GATEHOUSE_ISSUER ? passkeysFor(env.GATEHOUSE_ISSUER) : null,
      database: redactedUrl(options.url),
      serverVersion: version,
      pool: { max: options.max ?? 10, statementTimeoutMs: options.statementTimeoutMs ?? 5000 },
      migrations: { applied, known, pending: Math.max(0, known - applied) },
      ...Object.fromEntries(states),
    };
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export function formatPostgresStatus(s: PostgresStatus, recorded: readonly RecordedStatus[] = []): string {
  return [
    `Engine           PostgreSQL ${s.serverVersion} (${s.database})`,
    `Pool             at most ${s.pool.max} connections, statement timeout ${s.pool.statementTimeoutMs} ms`,
    `Schema           ${s.migrations.applied} migrations applied, ${s.migrations.pending} pending`,
    `Backups          pg_dump --format=custom (gatehouse backup is for the embedded SQLite store)`,
    `Settings         ${s.settings.missing.length ? `missing ${s.settings.missing.join(', ')} in ${s.settings.source}: every instance needs them` : `complete in ${s.settings.source}`}`,
    ...recordedLines(s, recorded, undefined),
    `Passkeys         ${s.passkeys ? passkeysLine(s.passkeys) : `not judged: GATEHOUSE_ISSUER is not set in ${s.settings.source}`}`,
  ].join('\n');
}
