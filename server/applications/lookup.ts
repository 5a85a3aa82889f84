/**
 * The application with an id, through a statement prepared once per database handle
 * (db/prepared.ts): every sign-in, authorize and token request looks its application up.
 */
import { eq, sql } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import type { Db } from '../db/client.js';
import { notFound } from '../http/problem.js';
import { applications, type Application } from '../db/schema.js';
import { preparedPerDb } from '../db/prepared.js';
import { one } from '../db/store.js';

const byId = preparedPerDb((db) => db.select().from(applications).where(eq(applications.id, sql.placeholder('id'))).prepare());

/** Also inside a transaction opened on `db`: a prepared statement runs on the same connection. */
export async function findApplication(db: Db, id: string): Promise<Application | undefined> {
  return await one(byId(db), { id });
}

/** The application with an id, or 404 `application_not_found`. */
export async function getApplication(ctx: AppContext, id: string): Promise<Application> {
  const app = await findApplication(ctx.db, id);
  if (!app) throw notFound('application_not_found', `There is no application with id "${id}".`);
  return app;
}
