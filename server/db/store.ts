/**
 * Running queries on either engine: the embedded SQLite store (better-sqlite3, synchronous) or
 * PostgreSQL (postgres.js, asynchronous), both driven through drizzle.
 *
 * Query modules build drizzle queries against the one schema (db/schema.ts) and run them with
 * `many`, `one` and `exec` (raw SQL: `sqlRows`), and group writes with `transaction`; they do not
 * call a builder's `.all()`, `.get()` or `.run()` themselves, except SQLite's synchronous hot paths
 * (below). Every call returns a promise, so the same code can serve both engines; on SQLite the
 * statement itself still runs synchronously, prepared once where it is hot (db/prepared.ts).
 *
 * Transactions on SQLite: one connection serves the process, and a transaction is a state of
 * that connection. A transaction body awaits between its statements, and while it does, another
 * request's statement would run *inside* the open transaction (its write rolled back with it, its
 * read seeing uncommitted rows). So the SQLite gate: while a transaction is open, every statement
 * that does not belong to it waits until it ends. Which statements belong to it is known by
 * AsyncLocalStorage: those issued from the body's own async context. Bodies are short (a few
 * statements, no I/O), so the wait is microseconds; SQLite serialises writers anyway.
 *
 * Transactions on PostgreSQL (db/postgres.ts): a pooled connection, SERIALIZABLE unless the
 * caller asks for less, retried on a serialization failure or deadlock. So every body keeps the
 * meaning it has on SQLite (one writer at a time) under real concurrency, with no read-then-write
 * race to audit per transaction; the hot paths that must not pay for it use conditional updates
 * instead (oauth/token/refresh-queries.ts). The statements of a body are routed to the
 * transaction's connection by the same AsyncLocalStorage scope, so a body may pass `tx` or reach
 * for `ctx.db`: both are the transaction.
 *
 * SQLite's hot paths (issue 27) keep some statements in SQL on better-sqlite3, run synchronously:
 * writes among them go through `sqliteNow` (they must not join another context's open transaction);
 * a few pure reads (the client look-up, the second-factor check) run straight away and may see the
 * rows of a transaction still open elsewhere, which SQLite's one connection allows and which only
 * matters if that transaction then fails.
 *
 * A transaction inside a transaction joins the outer one (no savepoints): an error in it rolls
 * back everything. A body must not await work that itself waits for the database from another
 * async context (it would wait for the body's own end).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { SQL } from 'drizzle-orm';
import type { Db } from './client.js';

export type Engine = 'sqlite' | 'postgres';

type Values = Record<string, unknown>;

/** How a PostgreSQL database runs a transaction (db/postgres.ts registers it). */
export interface PostgresRunner {
  transaction<T>(scope: TxScope, fn: () => Promise<T>, isolation: Isolation): Promise<T>;
  singleton<T>(job: string, fn: () => Promise<T>): Promise<Singleton<T>>;
}

/** Whether a singleton job ran here (and its result) or another instance was running it. */
export type Singleton<T> = { ran: true; value: T } | { ran: false };

export type Isolation = 'serializable' | 'read committed';

/** One open transaction: the async context of its body. */
export interface TxScope {
  readonly db: object;
  /** Set once the transaction ended: work its body left running no longer belongs to it. */
  done: boolean;
  /** The PostgreSQL transaction's connection (postgres.js `TransactionSql`). */
  connection?: unknown;
  /** SQLite: opened with foreign-key enforcement off (`sqliteForeignKeysOff`). */
  foreignKeysOff?: boolean;
  /** What runs once the transaction committed (`afterCommit`); dropped when it rolls back. */
  committed?: (() => void)[];
}

const scopes = new AsyncLocalStorage<TxScope>();
const postgres = new WeakMap<object, PostgresRunner>();

/** Marks `db` as a PostgreSQL database (db/postgres.ts); every other handle is SQLite. */
export function registerPostgres(db: object, runner: PostgresRunner): void {
  postgres.set(db, runner);
}

export function engineOf(db: object): Engine {
  return postgres.has(db) ? 'postgres' : 'sqlite';
}

/** The open transaction of the calling async context on `db`, if any. */
export function currentTransaction(db?: object): TxScope | undefined {
  const scope = scopes.getStore();
  if (!scope || scope.done) return undefined;
  return db === undefined || scope.db === db ? scope : undefined;
}

/**
 * Runs `fn` once the transaction open on `db` in this async context has committed (now when none
 * is open), never when it rolls back: for work that must not run before the change is visible,
 * such as forgetting a cache that other requests would otherwise fill again with the old rows.
 * `fn` is synchronous and must not throw.
 */
export function afterCommit(db: object, fn: () => void): void {
  const scope = currentTransaction(db);
  if (!scope) fn();
  else (scope.committed ??= []).push(fn);
}

/** Runs what a committed transaction left for after its commit (db/postgres.ts calls it too). */
export function runCommitted(scope: TxScope): void {
  const queued = scope.committed;
  scope.committed = undefined;
  for (const fn of queued ?? []) fn();
}

// --- The SQLite gate ------------------------------------------------------------------------
//
// One per process: a process serves one SQLite database (tests open many, one at a time in
// practice; a transaction on one only delays statements on another by microseconds).

let holder: TxScope | undefined;
let waiters: Array<() => void> = [];

function gateBlocked(): boolean {
  return holder !== undefined && holder !== scopes.getStore();
}

/**
 * True while another async context has a transaction open: a synchronous read (an early answer's
 * prepared statement) would see its uncommitted rows, so it serves what it cached instead.
 */
export function sqliteGateHeld(): boolean {
  return gateBlocked();
}

function waitForGate(): Promise<void> {
  return new Promise((resolve) => waiters.push(resolve));
}

function releaseGate(): void {
  holder = undefined;
  const woken = waiters;
  waiters = [];
  for (const wake of woken) wake();
}

/**
 * Runs `fn` (synchronous SQLite work: a prepared statement, a native transaction, a PRAGMA) once
 * no transaction of another async context is open. Without an open transaction it runs at once.
 */
export async function sqliteTurn<T>(fn: () => T): Promise<T> {
  while (gateBlocked()) await waitForGate();
  return fn();
}

/**
 * Runs `fn` (synchronous SQLite work) now when no transaction of another async context is open,
 * returning its result as is; otherwise once that transaction ended (a promise). The hot paths'
 * form of `sqliteTurn`: no promise and no microtask when the gate is free, which it nearly always is.
 */
export function sqliteNow<T>(fn: () => T): T | Promise<T> {
  return gateBlocked() ? sqliteTurn(fn) : fn();
}

// --- Statements ---------------------------------------------------------------------------

/** A drizzle SQLite builder or prepared statement; at run time on PostgreSQL, the PG one. */
interface Runs<T> {
  all(values?: Values): T;
}
interface Gets<T> {
  get(values?: Values): T;
}
interface RunsWrite {
  run(values?: Values): unknown;
}
interface PgExecutable {
  execute(values?: Values): Promise<unknown>;
}

const isSqliteQuery = (q: object): boolean => typeof (q as { run?: unknown }).run === 'function';

/** A drizzle PostgreSQL builder or prepared statement (db/postgres.ts). */
interface PgRuns<T> {
  execute(values?: Values): Promise<T>;
}

/** Every row of a query. */
export async function many<T>(q: Runs<T>, values?: Values): Promise<T>;
export async function many<T>(q: PgRuns<T>, values?: Values): Promise<T>;
export async function many<T>(q: Runs<T> | PgRuns<T>, values?: Values): Promise<T> {
  if (isSqliteQuery(q)) {
    while (gateBlocked()) await waitForGate();
    return (q as Runs<T>).all(values);
  }
  return (await (q as unknown as PgExecutable).execute(values)) as T;
}

/** The first row of a query, or undefined. */
export async function one<T>(q: Gets<T>, values?: Values): Promise<T>;
export async function one<T>(q: PgRuns<T[]>, values?: Values): Promise<T | undefined>;
export async function one<T>(q: Gets<T> | PgRuns<T[]>, values?: Values): Promise<T | undefined> {
  if (isSqliteQuery(q)) {
    while (gateBlocked()) await waitForGate();
    return (q as Gets<T>).get(values);
  }
  const result = (await (q as unknown as PgExecutable).execute(values)) as unknown[];
  return result[0] as T;
}

/** Runs a write; resolves to the number of rows it changed. */
export async function exec(q: RunsWrite | PgExecutable, values?: Values): Promise<number> {
  if (isSqliteQuery(q)) {
    while (gateBlocked()) await waitForGate();
    return ((q as RunsWrite).run(values) as { changes: number }).changes;
  }
  const result = (await (q as unknown as PgExecutable).execute(values)) as { count?: number; length: number };
  return result.count ?? result.length;
}

/** Every row of a raw SQL query (engine-specific SQL: the caller knows which engine it runs on). */
export async function sqlRows<T>(db: Db, query: SQL): Promise<T[]> {
  if (engineOf(db) === 'sqlite') {
    while (gateBlocked()) await waitForGate();
    return db.all<T>(query);
  }
  return (await (db as unknown as { execute(q: SQL): Promise<T[]> }).execute(query)) as T[];
}

// --- Transactions -------------------------------------------------------------------------

export interface TransactionOptions {
  /** PostgreSQL only: `read committed` for bodies whose writes guard themselves (conditional updates). */
  isolation?: Isolation;
  /**
   * SQLite only: foreign-key enforcement, and so its cascades, off for this transaction (a big
   * delete whose rows are purged in batches: data-lifecycle/purge.ts). The pragma cannot change
   * inside a transaction, so it is set while the gate is held, before BEGIN and after the end:
   * no other statement runs meanwhile. A nested call (joining an open transaction) is refused
   * unless that transaction was opened with enforcement off too (a configuration apply that
   * deletes applications: config-as-code/apply.ts).
   */
  sqliteForeignKeysOff?: boolean;
}

/** Runs `fn` in one transaction on `db` (see the module comment); joins an open one. */
export async function transaction<T, D extends object = Db>(db: D, fn: (tx: D) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const open = currentTransaction(db);
  if (open && options.sqliteForeignKeysOff && !open.foreignKeysOff && !postgres.has(db)) {
    throw new Error('foreign keys cannot be turned off inside a transaction');
  }
  if (open) return fn(db);
  const scope: TxScope = { db, done: false, foreignKeysOff: options.sqliteForeignKeysOff === true };
  const runner = postgres.get(db);
  if (runner) {
    try {
      // The runner runs the body in a scope of its own per attempt (db/postgres.ts).
      return await runner.transaction(scope, () => fn(db), options.isolation ?? 'serializable');
    } finally {
      scope.done = true;
    }
  }
  while (holder !== undefined) await waitForGate();
  holder = scope;
  const client = (db as unknown as Db).$client;
  const foreignKeysOff = options.sqliteForeignKeysOff === true;
  try {
    if (foreignKeysOff) client.pragma('foreign_keys = OFF');
    client.exec('BEGIN');
    const result = await scopes.run(scope, () => fn(db));
    client.exec('COMMIT');
    runCommitted(scope);
    return result;
  } catch (error) {
    if (client.inTransaction) client.exec('ROLLBACK');
    throw error;
  } finally {
    if (foreignKeysOff) client.pragma('foreign_keys = ON');
    scope.done = true;
    releaseGate();
  }
}

/**
 * Runs `fn` unless another instance on the same database is running the job named `job` (key
 * rotation, the sweeper): on PostgreSQL under an advisory lock, which the server releases if the
 * instance dies; on SQLite always (one process owns a data directory).
 */
export async function singleton<T>(db: object, job: string, fn: () => Promise<T>): Promise<Singleton<T>> {
  const runner = postgres.get(db);
  return runner ? runner.singleton(job, fn) : { ran: true, value: await fn() };
}

/** Runs `fn` in `scope` (db/postgres.ts: a retried attempt gets a fresh scope object). */
export function inScope<T>(scope: TxScope, fn: () => T): T {
  return scopes.run(scope, fn);
}
