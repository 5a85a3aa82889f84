/** JSON values under fixed keys of the `meta` table (schedules, the sweeper's last pass, …). */
import { eq } from 'drizzle-orm';
import type { Db } from './client.js';
import { meta } from './schema.js';
import type { Tx } from '../audit/record.js';

/** The value stored under `key`, parsed; undefined when absent or unreadable. */
export function readMeta<T>(db: Tx, key: string): T | undefined {
  const row = db.select({ value: meta.value }).from(meta).where(eq(meta.key, key)).get();
  if (!row) return undefined;
  try {
    return JSON.parse(row.value) as T;
  } catch {
    return undefined;
  }
}

export function writeMeta(db: Tx | Db, key: string, value: unknown, now: Date): void {
  const text = JSON.stringify(value);
  db.insert(meta)
    .values({ key, value: text, updatedAt: now })
    .onConflictDoUpdate({ target: meta.key, set: { value: text, updatedAt: now } })
    .run();
}
