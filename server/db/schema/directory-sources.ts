/**
 * Directory sources (spec directory-sources.md; server/directory-sources/): an LDAP directory or
 * Active Directory whose people and groups Gatehouse mirrors, and whose passwords it checks by
 * binding as the person.
 */
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, timestamp, flag } from './columns.js';

export type DirectorySourceKind = 'ldap' | 'active_directory';

/** Which source attribute fills which field (spec directory-sources.md, "attributes"). */
export interface DirectoryAttributes {
  id: string;
  username: string;
  email: string;
  name: string;
  givenName: string;
  familyName: string;
  groupName: string;
  /** Group attributes naming members: DNs (`member`, `uniqueMember`) or usernames (`memberUid`). */
  members: string[];
  /** Active Directory: a group's people through the in-chain rule (1.2.840.113556.1.4.1941), nesting included. */
  nestedMembers: boolean;
}

export type DirectorySourceStatus = 'ok' | 'unreachable';

export type DirectoryRunState = 'running' | 'succeeded' | 'failed';

export interface DirectoryRunCounts {
  created: number;
  updated: number;
  disabled: number;
  enabled: number;
  skipped: number;
  conflicts: number;
}

export interface DirectoryConflict {
  dn: string;
  email: string | null;
  username: string | null;
}

export interface DirectorySkipped {
  dn: string;
  reason: string;
}

export const directorySources = sqliteTable(
  'directory_sources',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    kind: text('kind').$type<DirectorySourceKind>().notNull(),
    url: text('url').notNull(),
    startTls: flag('start_tls').notNull(),
    allowPlain: flag('allow_plain').notNull(),
    caCertificate: text('ca_certificate'),
    bindDn: text('bind_dn'),
    /** Sealed with the data directory's secret box (accounts/second-factor/secret-box.ts); never answered. */
    bindPasswordSealed: text('bind_password_sealed'),
    peopleBase: text('people_base').notNull(),
    peopleFilter: text('people_filter').notNull(),
    groupsBase: text('groups_base'),
    groupsFilter: text('groups_filter').notNull(),
    attributes: text('attributes', { mode: 'json' }).$type<DirectoryAttributes>().notNull(),
    disabledFilter: text('disabled_filter'),
    /** 5–1440 minutes between scheduled runs; null: manual only. */
    syncIntervalMinutes: integer('sync_interval_minutes'),
    applications: text('applications', { mode: 'json' }).$type<string[]>().notNull(),
    status: text('status').$type<DirectorySourceStatus>().notNull(),
    lastError: text('last_error'),
    lastSyncAt: timestamp('last_sync_at'),
    /** The last full run's end: scheduled runs read only changes in between, and a full run daily. */
    lastFullSyncAt: timestamp('last_full_sync_at'),
    /** The highest change mark the last run saw: `modifyTimestamp` (LDAP) or `uSNChanged` (Active Directory). */
    changeMark: text('change_mark'),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [index('directory_sources_created_idx').on(t.createdAt, t.id)],
);

/**
 * Which source entry is which person or group here: keyed by the entry's stable id (entryUUID,
 * objectGUID), with a digest of what was mapped from it, so an unchanged entry writes nothing.
 */
export const directoryEntries = sqliteTable(
  'directory_entries',
  {
    sourceId: text('source_id')
      .notNull()
      .references(() => directorySources.id, { onDelete: 'cascade' }),
    kind: text('kind').$type<'person' | 'group'>().notNull(),
    entryKey: text('entry_key').notNull(),
    /** The person's or group's id. */
    targetId: text('target_id').notNull(),
    digest: text('digest').notNull(),
    /** Disabled by the source (AD's userAccountControl bit 2, the disabled filter) or gone from it. */
    disabled: flag('disabled').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.sourceId, t.kind, t.entryKey] }), uniqueIndex('directory_entries_target_uq').on(t.kind, t.targetId)],
);

/** One sync run and what it did (kept 90 days: data-lifecycle/retention-rules.ts). */
export const directorySyncRuns = sqliteTable(
  'directory_sync_runs',
  {
    id: text('id').primaryKey(),
    sourceId: text('source_id')
      .notNull()
      .references(() => directorySources.id, { onDelete: 'cascade' }),
    state: text('state').$type<DirectoryRunState>().notNull(),
    /** Full (every entry read) or changes only. */
    full: flag('full').notNull(),
    trigger: text('trigger').$type<'manual' | 'scheduled'>().notNull(),
    counts: text('counts', { mode: 'json' }).$type<DirectoryRunCounts>().notNull(),
    /** The first 1,000 of each; the counts are complete. */
    conflicts: text('conflicts', { mode: 'json' }).$type<DirectoryConflict[]>().notNull(),
    skipped: text('skipped', { mode: 'json' }).$type<DirectorySkipped[]>().notNull(),
    error: text('error'),
    startedAt: timestamp('started_at').notNull(),
    finishedAt: timestamp('finished_at'),
    /** Renewed while the run is alive; a `running` run whose heartbeat stopped (a crash) is failed. */
    heartbeatAt: timestamp('heartbeat_at').notNull(),
  },
  (t) => [index('directory_sync_runs_source_idx').on(t.sourceId, t.startedAt), index('directory_sync_runs_started_idx').on(t.startedAt)],
);

export type DirectorySource = typeof directorySources.$inferSelect;
export type DirectorySyncRun = typeof directorySyncRuns.$inferSelect;
