/**
 * Opens the embedded SQLite store: WAL, foreign keys on, file mode 0600, migrations applied.
 * Opening the same data directory twice is a no-op beyond the open itself.
 */
import { chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import * as schema from './schema.js';
import { installPath } from '../util/install-paths.js';

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

/**
 * The database handle a transaction body works on: the database itself (db/store.ts routes a
 * body's statements to its transaction). The name says "inside the caller's transaction".
 */
export type Tx = Db;

/**
 * SQLite's own page cache per connection, in KiB (decision 0487). better-sqlite3 builds SQLite
 * with 16 MiB (`SQLITE_DEFAULT_CACHE_SIZE=-16000`), which a database of a few years fills and
 * keeps in malloc'd memory for the process's life, beside the kernel's cache of the same file.
 */
export const PAGE_CACHE_KIB = 1024;

/** Where the committed drizzle-kit migrations live (read from server/ by every build). */
export function migrationsFolder(): string {
  const folder = installPath('server', 'db', 'migrations');
  if (!existsSync(join(folder, 'meta', '_journal.json'))) throw new Error(`database migrations not found in ${folder}`);
  return folder;
}

/**
 * Opens (creating if needed) a database file, or `:memory:`, and applies pending migrations; or,
 * given `image` (`serialize()` of a migrated database), an in-memory copy of it as it is (the
 * tests' helper copies one migrated database instead of migrating each: test/helpers/app.ts).
 */
export function openDatabase(file: string, image?: Buffer): Db {
  const sqlite = image ? new Database(image) : new Database(file);
  if (file !== ':memory:' && !image) chmodSync(file, 0o600);
  // A new database hands freed pages back in small steps (the sweeper's incremental vacuum). The
  // mode can only be chosen before the first page is written; older databases keep theirs
  // (changing it needs a full VACUUM, which renumbers rowids: docs/decisions/0057-retention-rules.md).
  if ((sqlite.pragma('page_count', { simple: true }) as number) === 0) sqlite.pragma('auto_vacuum = INCREMENTAL');
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL'); // durable across process crashes in WAL mode
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  const db = drizzle(sqlite, { schema }) as Db;
  if (!image) migrate(db, { migrationsFolder: migrationsFolder() });
  return db;
}
