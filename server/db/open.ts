/**
 * Opening and closing the store the server runs on: the embedded SQLite file in the data
 * directory, or PostgreSQL when GATEHOUSE_DATABASE_URL is set (issue 26). Either way the handle
 * is typed as the SQLite one the query modules are written against (db/pg-adapter.ts).
 */
import type { Db } from './client.js';
import { openDatabase } from './client.js';
import { engineOf } from './store.js';
import type { PostgresOptions } from './postgres-options.js';

export async function openStore(options: { sqliteFile: string; postgres: PostgresOptions | undefined }): Promise<Db> {
  if (!options.postgres) return openDatabase(options.sqliteFile);
  // Loaded only in PostgreSQL mode: the SQLite default never pays for the client.
  const { openPostgres } = await import('./postgres.js');
  return (await openPostgres(options.postgres)) as unknown as Db;
}

export async function closeStore(db: Db): Promise<void> {
  if (engineOf(db) === 'postgres') await (db.$client as unknown as { end(options: { timeout: number }): Promise<void> }).end({ timeout: 5 });
  else db.$client.close();
}
