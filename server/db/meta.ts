/** JSON values under fixed keys of the `meta` table (schedules, the sweeper's last pass, …). */
import { eq } from 'drizzle-orm';
import type { Db, Tx } from './client.js';
import { meta } from './schema.js';
import { exec, one } from './store.js';

/** The value stored under `key`, parsed; undefined when absent or unreadable. */
export async function readMeta<T>(db: Tx, key: string): Promise<T | undefined> {
  const row = await one(db.select({ value: meta.value }).from(meta).where(eq(meta.key, key)));
  if (!row) return undefined;
  try {
    return JSON.parse(row.value) as T;
  } catch {
    return undefined;
  }
}

export async function writeMeta(db: Tx | Db, key: string, value: unknown, now: Date): Promise<void> {
  const text = JSON.stringify(value);
  await exec(db.insert(meta)
    .values({ key, value: text, updatedAt: now })
    .onConflictDoUpdate({ target: meta.key, set: { value: text, updatedAt: now } }));
}
