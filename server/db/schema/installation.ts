/**
 * The installation's own state: shared rate-limit windows, the POSIX id counter, `meta`, and the
 * data lifecycle's big deletes and row counts (server/data-lifecycle/).
 */
import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { timestamp } from './columns.js';

/**
 * Rate-limit windows shared by every instance in PostgreSQL mode (accounts/rate-limits.ts,
 * oauth/failure-limit.ts; issue 26): one row per counter key (`<scope>\n<caller>`), counted by one
 * upsert, the window restarted when it has ended. SQLite mode counts in memory and leaves it empty.
 * Rows are worthless once their window ended (data-lifecycle/retention-rules.ts).
 */
export const rateLimitWindows = sqliteTable(
  'rate_limit_windows',
  {
    key: text('key').primaryKey(),
    count: integer('count').notNull(),
    windowEndsAt: timestamp('window_ends_at').notNull(),
  },
  (t) => [index('rate_limit_windows_ends_idx').on(t.windowEndsAt)],
);

/**
 * The counter behind people's uidNumber and groups' gidNumber on SQLite (spec ldap.md: stable,
 * ≥ 10000, never reused): one row, moved by the insert triggers of migration `posix_ids`, never
 * back. PostgreSQL uses a real sequence (`posix_id_seq`) and leaves this table empty.
 */
export const posixIdSequence = sqliteTable('posix_id_sequence', {
  name: text('name').primaryKey(),
  nextValue: integer('next_value').notNull(),
});

/** Small key/value facts about this installation (e.g. last backup, key-rotation schedule). */
export const meta = sqliteTable('meta', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: timestamp('updated_at').notNull(),
});

/**
 * Big deletes in progress: the thing itself is gone from every read at once, its rows go in
 * bounded batches (data-lifecycle/purge.ts). A row here also keeps the id taken until the purge
 * ends, so nothing new inherits what is left of the old one. Resumed on start after a crash.
 */
export const purgeJobs = sqliteTable(
  'purge_jobs',
  {
    kind: text('kind').$type<'application' | 'sso_group' | 'membership' | 'person' | 'group'>().notNull(),
    target: text('target').notNull(),
    /** What the plan needs besides the id (e.g. the realm name of sessions to forget). */
    params: text('params', { mode: 'json' }).$type<Record<string, string>>().notNull(),
    actor: text('actor').notNull(),
    requestedAt: timestamp('requested_at').notNull(),
    /** Rows removed so far, per step. */
    removed: text('removed', { mode: 'json' }).$type<Record<string, number>>().notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.target] })],
);

/**
 * Row counts of tables that grow, kept by triggers (migration `row_counts`), so the overview and
 * `gatehouse status` never count a table.
 */
export const rowCounts = sqliteTable('row_counts', {
  name: text('name').primaryKey(),
  n: integer('n').notNull(),
});

export type PurgeJob = typeof purgeJobs.$inferSelect;
