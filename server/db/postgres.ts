/**
 * PostgreSQL mode (issue 26): a bounded postgres.js pool, the drizzle PostgreSQL schema generated
 * from the SQLite one (db/pg-schema.ts), its own migrations applied once under an advisory lock,
 * and the store's transactions (db/store.ts) on pooled connections.
 *
 * - Pool: at most `max` connections (GATEHOUSE_DATABASE_POOL, default 10); every connection has a
 *   statement timeout (GATEHOUSE_DATABASE_STATEMENT_TIMEOUT_MS, default 5 s), so a stuck query
 *   fails its request instead of holding a connection for ever.
 * - Migrations: instances started together all call `openPostgres`; the first takes the advisory
 *   lock and migrates, the others wait for it and then find nothing left to apply.
 * - Singleton jobs (key rotation, the sweeper): `singleton` in db/store.ts, under advisory locks.
 * - Transactions: SERIALIZABLE by default, retried on a serialization failure (40001) or deadlock
 *   (40P01) with a short random back-off, so a body keeps the meaning it has on SQLite (one writer
 *   at a time). Statements run by the body, through `tx` or any handle of this database, go to the
 *   transaction's connection: the drizzle client is a router that asks the store's async scope.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import postgres, { type Sql } from 'postgres';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import * as pgSchema from './pg-schema.js';
import { adaptForPostgres } from './pg-adapter.js';
import { installPath } from '../util/install-paths.js';
import { currentTransaction, inScope, registerPostgres, runCommitted, type Isolation, type Singleton, type TxScope } from './store.js';
import { MIN_POOL, type PostgresOptions } from './postgres-options.js';

export { postgresOptions, type PostgresOptions } from './postgres-options.js';

export type PgDb = PostgresJsDatabase<typeof pgSchema> & { $client: Sql };

/** The key of the advisory lock migrations run under (any fixed 64-bit number; "gatehouse" in ASCII). */
export const MIGRATION_LOCK_KEY = 0x6761746568n;

const RETRYABLE = new Set(['40001', '40P01']);
/** Enough for 20 bodies contending for one row (each round, one of them commits). */
const MAX_ATTEMPTS = 25;

/** PostgreSQL's SQLSTATE of an error, also when drizzle wrapped it (`cause`). */
function sqlState(error: unknown): string | undefined {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (typeof e.code === 'string') return e.code;
  }
  return undefined;
}

/** Where the committed PostgreSQL migrations live (read from server/ at run time, like SQLite's). */
export function pgMigrationsFolder(): string {
  const folder = installPath('server', 'db', 'pg-migrations');
  if (!existsSync(join(folder, 'meta', '_journal.json'))) throw new Error(`PostgreSQL migrations not found in ${folder}`);
  return folder;
}

/** Opens the pool and applies pending migrations (once across instances, under the advisory lock). */
export async function openPostgres(options: PostgresOptions): Promise<PgDb> {
  const pool = postgres(options.url, {
    max: Math.max(MIN_POOL, options.max ?? 10),
    idle_timeout: 60,
    connect_timeout: 10,
    onnotice: () => {},
    connection: { application_name: 'gatehouse', statement_timeout: options.statementTimeoutMs ?? 5000 },
  });
  try {
    await migrateUnderLock(pool);
  } catch (error) {
    await pool.end({ timeout: 1 });
    throw error;
  }
  // Drizzle sends every statement through `unsafe`: inside a store transaction, its connection's.
  const router = new Proxy(pool, {
    get(target, property, receiver) {
      if (property === 'unsafe') {
        return (...args: Parameters<Sql['unsafe']>) => {
          const connection = currentTransaction(db)?.connection as Sql | undefined;
          return (connection ?? target).unsafe(...args);
        };
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  const drizzleDb = drizzle(router, { schema: pgSchema }) as PgDb;
  drizzleDb.$client = pool;
  speakTheQueryModulesValues(pool);
  // The query modules' SQLite tables become PostgreSQL's as queries are built (db/pg-adapter.ts).
  const db = adaptForPostgres(drizzleDb);
  registerPostgres(db, {
    transaction: <T>(scope: TxScope, fn: () => Promise<T>, isolation: Isolation) => runTransaction(pool, scope, fn, isolation),
    singleton: <T>(job: string, fn: () => Promise<T>) => runSingleton(pool, job, fn),
  });
  return db;
}

/** PostgreSQL's type ids (pg_type.oid) of the types handled below. */
const OID = { int8: '20', numeric: '1700', timestamp: '1114', timestamptz: '1184' } as const;

/**
 * Values as the query modules pass and expect them, which is how SQLite has them: a time bound
 * as a raw placeholder is milliseconds since the epoch (`sql.placeholder('nowMs')`), and counts
 * are numbers. postgres.js learns each parameter's type from the server before it binds (it
 * describes the statement first), so a number meant for a timestamptz is written as one; drizzle
 * leaves time values as text otherwise (its columns map them). Counts (`count(*)` is bigint)
 * come back as numbers: no count here nears 2^53.
 */
function speakTheQueryModulesValues(pool: Sql): void {
  const time = (value: unknown) => (typeof value === 'number' ? new Date(value).toISOString() : value instanceof Date ? value.toISOString() : value);
  pool.options.serializers[OID.timestamptz] = time;
  pool.options.serializers[OID.timestamp] = time;
  pool.options.parsers[OID.int8] = Number;
  pool.options.parsers[OID.numeric] = Number;
}

async function migrateUnderLock(pool: Sql): Promise<void> {
  // The lock is held by one reserved connection while the migrator runs on others.
  const holder = await pool.reserve();
  try {
    await holder`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY.toString()}::bigint)`;
    try {
      await migrate(drizzle(pool), { migrationsFolder: pgMigrationsFolder() });
    } finally {
      await holder`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY.toString()}::bigint)`;
    }
  } finally {
    holder.release();
  }
}

async function runTransaction<T>(pool: Sql, scope: TxScope, fn: () => Promise<T>, isolation: Isolation): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    // A fresh scope per attempt: work a failed attempt left running no longer belongs to a transaction.
    const attemptScope: TxScope = { db: scope.db, done: false };
    try {
      const result = (await pool.begin(`ISOLATION LEVEL ${isolation.toUpperCase()}`, async (connection) => {
        attemptScope.connection = connection;
        return inScope(attemptScope, fn);
      })) as T;
      // Only the attempt that committed leaves work for after the commit.
      runCommitted(attemptScope);
      return result;
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS || !RETRYABLE.has(sqlState(error) ?? '')) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2 * attempt, 20)));
    } finally {
      attemptScope.done = true;
    }
  }
}

/**
 * `fn` under the job's advisory lock, taken without waiting: another instance holding it is
 * running the job, so this one skips it. The lock belongs to a transaction left open on one pooled
 * connection for the job's length (the job's own statements run on other connections); should the
 * instance die, PostgreSQL ends that transaction and the lock with it.
 */
async function runSingleton<T>(pool: Sql, job: string, fn: () => Promise<T>): Promise<Singleton<T>> {
  let result: Singleton<T> = { ran: false };
  try {
    await pool.begin(async (holder) => {
      const [row] = await holder<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(hashtext(${`gatehouse:${job}`})::bigint) AS locked`;
      if (row?.locked) result = { ran: true, value: await fn() };
    });
  } catch (error) {
    // The job ran; only the lock's connection was lost meanwhile (and the lock with it).
    if (!result.ran) throw error;
  }
  return result;
}
