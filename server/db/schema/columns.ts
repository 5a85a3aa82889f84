/** The column helpers every table uses: creation time, timestamps in milliseconds, booleans. */
import { sql } from 'drizzle-orm';
import { integer } from 'drizzle-orm/sqlite-core';

export const createdAt = () =>
  integer('created_at', { mode: 'timestamp_ms' })
    .notNull()
    .default(sql`(unixepoch('subsec') * 1000)`);
export const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' });
export const flag = (name: string) => integer(name, { mode: 'boolean' });
