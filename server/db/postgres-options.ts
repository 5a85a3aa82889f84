/**
 * Whether this process runs in PostgreSQL mode (issue 26): `GATEHOUSE_DATABASE_URL` and the pool's
 * settings. Kept apart from db/postgres.ts so that the CLI can ask without loading the client.
 */
import { ConfigError } from '../config.js';

export interface PostgresOptions {
  url: string;
  /** Most connections the pool opens. */
  max?: number;
  statementTimeoutMs?: number;
}

/**
 * The smallest pool that works: migrations and singleton jobs hold one connection (their lock's)
 * while their statements run on others, and three singleton jobs (key rotation, the retention
 * sweeper, the background purge) may hold theirs at once on one instance. With fewer, two holders
 * would wait for ever for the connection their own statements need.
 */
export const MIN_POOL = 4;

/** The pool's settings from the environment (GATEHOUSE_DATABASE_URL selects PostgreSQL). */
export function postgresOptions(env: NodeJS.ProcessEnv = process.env): PostgresOptions | undefined {
  const url = env.GATEHOUSE_DATABASE_URL;
  if (!url) return undefined;
  if (!/^postgres(ql)?:\/\//.test(url)) throw new ConfigError('GATEHOUSE_DATABASE_URL must be a postgres:// URL.');
  const number = (name: string, fallback: number, least: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < least) throw new ConfigError(`${name} must be a whole number of at least ${least}.`);
    return n;
  };
  return {
    url,
    max: number('GATEHOUSE_DATABASE_POOL', 10, MIN_POOL),
    statementTimeoutMs: number('GATEHOUSE_DATABASE_STATEMENT_TIMEOUT_MS', 5000, 1),
  };
}

/** What `gatehouse backup` and `restore` say in PostgreSQL mode. */
export const PG_BACKUP_ADVICE =
  'In PostgreSQL mode (GATEHOUSE_DATABASE_URL) the database is backed up and restored with PostgreSQL\'s own tools: pg_dump --format=custom and pg_restore; `gatehouse backup` and `restore` copy an embedded SQLite store only.';

/**
 * Why a server in PostgreSQL mode refuses to start without a configured admin token: a token
 * generated into one instance's data directory would be accepted by that instance only.
 */
export const PG_ADMIN_TOKEN_REQUIRED =
  'In PostgreSQL mode every instance must accept the same admin token: set ADMIN_TOKEN or ADMIN_TOKEN_FILE.';

/** What `gatehouse rotate-keys` (which writes the SQLite file directly) says in PostgreSQL mode. */
export const PG_ROTATE_ADVICE =
  'In PostgreSQL mode (GATEHOUSE_DATABASE_URL) signing keys are rotated by a running instance: `gatehouse key rotate` (its admin API), or the scheduled rotation; `gatehouse rotate-keys` writes an embedded SQLite store only.';
