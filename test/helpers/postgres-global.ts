/**
 * Global set-up of the `unit-postgres` project (issue 26): one PostgreSQL 15 server for the run,
 * with a template database migrated once; `makeApp` (test/helpers/app.ts) then gives each app a
 * database of its own, copied from the template (CREATE DATABASE … TEMPLATE: milliseconds,
 * where migrating a fresh one takes a second).
 */
import type { TestProject } from 'vitest/node';
import { openPostgres } from '../../server/db/postgres.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

export const TEMPLATE_DATABASE = 'gatehouse_template';

let server: PostgresServer | undefined;

export default async function setup(project: TestProject): Promise<() => void> {
  server = await startPostgres();
  const url = await server.createDatabase(TEMPLATE_DATABASE);
  const db = await openPostgres({ url, max: 1 });
  await db.$client.end();
  project.provide('gatehousePostgres', { port: server.port });
  return () => server?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    gatehousePostgres: { port: number } | undefined;
  }
}
