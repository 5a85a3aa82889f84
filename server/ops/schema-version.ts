/**
 * Which committed migrations a database has applied, compared with the migrations this build
 * knows (`server/db/migrations/meta/_journal.json`). drizzle records each applied migration in
 * `__drizzle_migrations` with `created_at` = the journal entry's `when`, and applies every journal
 * entry newer than the newest recorded one — so that is what "pending" and "newer" mean here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { migrationsFolder } from '../db/client.js';

export interface JournalEntry {
  idx: number;
  when: number;
  tag: string;
}

export interface SchemaState {
  /** Journal tags of the migrations the database has applied (unknown ones as `unknown:<when>`). */
  applied: string[];
  /** Migrations this build would apply on open. */
  pending: string[];
  /** True when the database recorded a migration later than any this build knows: newer code wrote it. */
  newer: boolean;
  /** Tag of the newest migration this build knows. */
  latest: string;
}

export function readJournal(): JournalEntry[] {
  const raw = JSON.parse(readFileSync(join(migrationsFolder(), 'meta', '_journal.json'), 'utf8')) as { entries: JournalEntry[] };
  return raw.entries;
}

export function schemaState(sqlite: Database.Database): SchemaState {
  const journal = readJournal();
  const table = sqlite
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'")
    .get();
  const rows = table
    ? (sqlite.prepare('SELECT created_at AS createdAt FROM __drizzle_migrations ORDER BY created_at').all() as { createdAt: number | string }[])
    : [];
  const byWhen = new Map(journal.map((e) => [e.when, e.tag]));
  const applied = rows.map((r) => byWhen.get(Number(r.createdAt)) ?? `unknown:${r.createdAt}`);
  const newest = rows.reduce((max, r) => Math.max(max, Number(r.createdAt)), -Infinity);
  const latestKnown = journal.reduce((max, e) => Math.max(max, e.when), -Infinity);
  return {
    applied,
    pending: journal.filter((e) => e.when > newest).map((e) => e.tag),
    // drizzle's own rule: only the newest recorded migration matters (older unknown entries,
    // e.g. from a squashed history, would simply be skipped by the migrator too).
    newer: newest > latestKnown,
    latest: journal.at(-1)?.tag ?? 'none',
  };
}
