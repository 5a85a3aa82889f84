/**
 * The schema's promises for years of data, read from the schema itself, so a table added later
 * (by any issue) is held to them too: every foreign key has an index that leads with it, every
 * table that hangs off a row deleted without its cascade is in that kind's purge plan, and every
 * retention rule and purge step finds its rows through an index.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { eq, getTableName } from 'drizzle-orm';
import { SQL } from 'drizzle-orm';
import { openDatabase } from '../../server/db/client.js';
import { RETENTION_RULES } from '../../server/data-lifecycle/retention-rules.js';
import { PURGE_PLANS, planSteps } from '../../server/data-lifecycle/purge-plans.js';
import type { BatchStep } from '../../server/data-lifecycle/batch.js';
import { sql } from 'drizzle-orm';

const db = openDatabase(':memory:');
const sqlite = db.$client;
afterAll(() => sqlite.close());

const tables = (sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%' AND sql NOT LIKE 'CREATE VIRTUAL%' AND name NOT LIKE 'people_search_%'").all() as { name: string }[]).map((r) => r.name);

interface ForeignKey {
  table: string;
  column: string;
  parent: string;
  onDelete: string;
}

const foreignKeys: ForeignKey[] = tables.flatMap((table) =>
  (sqlite.prepare(`PRAGMA foreign_key_list("${table}")`).all() as { table: string; from: string; on_delete: string }[]).map((fk) => ({
    table, column: fk.from, parent: fk.table, onDelete: fk.on_delete,
  })),
);

/** Leading columns of every index (and primary key) of a table. */
function leadingColumns(table: string): Set<string> {
  const leading = new Set<string>();
  for (const index of sqlite.prepare(`PRAGMA index_list("${table}")`).all() as { name: string }[]) {
    const first = (sqlite.prepare(`PRAGMA index_info("${index.name}")`).all() as { seqno: number; name: string }[]).find((c) => c.seqno === 0);
    if (first) leading.add(first.name);
  }
  const pk = (sqlite.prepare(`PRAGMA table_info("${table}")`).all() as { name: string; pk: number }[]).find((c) => c.pk === 1);
  if (pk) leading.add(pk.name);
  return leading;
}

/** The query plan of the select that picks a step's rows (what each batch runs). */
function planOf(step: Pick<BatchStep, 'table' | 'key' | 'where'>): string[] {
  const key = step.key instanceof SQL ? step.key : sql`${step.key}`;
  const query = db.select({ key }).from(step.table).where(step.where).limit(500).toSQL();
  return (sqlite.prepare(`EXPLAIN QUERY PLAN ${query.sql}`).all(...(query.params as unknown[])) as { detail: string }[]).map((r) => r.detail);
}

/** `SCAN <table>` (a full read of a table), as opposed to SEARCH through an index. */
function scans(plan: string[], table: string): boolean {
  return plan.some((line) => line === `SCAN ${table}` || line.startsWith(`SCAN ${table} `));
}

describe('indexes for foreign keys', () => {
  it('has an index leading with every foreign-key column, so cascades and set-nulls search instead of scanning', () => {
    expect(foreignKeys.length).toBeGreaterThan(10);
    const missing = foreignKeys.filter((fk) => !leadingColumns(fk.table).has(fk.column)).map((fk) => `${fk.table}.${fk.column} → ${fk.parent}`);
    expect(missing).toEqual([]);
  });
});

describe('purge plans', () => {
  it('name every table that points at a row deleted without its cascade (applications, memberships, people, directory groups)', () => {
    for (const [kind, parent] of [['application', 'applications'], ['membership', 'memberships'], ['person', 'people'], ['group', 'groups']] as const) {
      const covered = new Set(PURGE_PLANS[kind].map((step) => `${getTableName(step.table)}.${step.column.name}`));
      const children = foreignKeys.filter((fk) => fk.parent === parent).map((fk) => `${fk.table}.${fk.column}`);
      expect(children.length).toBeGreaterThan(0);
      expect({ kind, unregistered: children.filter((c) => !covered.has(c)) }).toEqual({ kind, unregistered: [] });
    }
  });

  it('find their rows through an index', () => {
    for (const kind of Object.keys(PURGE_PLANS) as (keyof typeof PURGE_PLANS)[]) {
      for (const step of planSteps({ kind, target: 'x', params: { realm: 'app:x' } })) {
        const plan = planOf(step);
        expect({ kind, step: step.name, plan, scans: scans(plan, getTableName(step.table)) }).toMatchObject({ scans: false });
      }
    }
  });
});

describe('retention rules', () => {
  it('cover every table that grows with use, and find their rows through an index', () => {
    const ruled = new Set(RETENTION_RULES.map((rule) => getTableName(rule.table)));
    // Tables bounded in other ways (retention-rules.ts says how) or of fixed size.
    const bounded = ['people', 'linked_accounts', 'applications', 'sso_groups', 'memberships', 'api_keys', 'signing_keys', 'meta', 'row_counts', 'purge_jobs', 'sign_in_back_off', 'provider_logins', 'session_realms', 'session_clients', 'refresh_tokens',
      // Issue 23: per person at most one row, 20 passkeys and 10 codes, gone with the person.
      'totp_credentials', 'passkeys', 'recovery_codes',
      // Issue 25: one logo per application, gone with it (purge plan).
      'application_logos',
      // Issue 33: one row per administrator (and per managed application), gone with the person or application.
      'administrators', 'administrator_applications',
      // Issue 32: at most 1,000 groups, a person in at most 200; memberships go with either (cascade).
      'groups', 'group_members',
      // Issue 35: at most APP_PASSWORDS_PER_PERSON per person, gone with the person, membership or application.
      'app_passwords',
      // Issue 35: the uid/gid number counter, one row.
      'posix_id_sequence',
      // Issue 34: at most 20 protected hosts per application, gone with it.
      'forward_auth_hosts',
      // Issue 47: at most ten directory sources; one entry per person or group a source keeps, gone with them or the source.
      'directory_sources', 'directory_entries',
      // Issue 42: one SAML signing key per rotation; a persistent NameID per person and SAML application
      // (gone with either); SAML sessions go with their session (its retention rule's children).
      'saml_signing_keys', 'saml_subjects', 'saml_sessions'];
    expect(tables.filter((t) => !ruled.has(t) && !bounded.includes(t))).toEqual([]);
    const now = new Date('2026-06-01T00:00:00Z');
    for (const rule of RETENTION_RULES) {
      const plan = planOf({ ...rule, where: rule.where(new Date(now.getTime() - 86_400_000), now) });
      expect({ rule: rule.name, plan, scans: tables.some((t) => scans(plan, t)) }).toMatchObject({ scans: false });
    }
  });

  it('delete children before parents, bounded, for families with many tokens', () => {
    const families = RETENTION_RULES.filter((rule) => getTableName(rule.table) === 'refresh_token_families');
    expect(families.map((rule) => rule.children?.map((c) => getTableName(c.table)))).toEqual([['refresh_tokens'], ['refresh_tokens']]);
    // The children's own selection is by their foreign key (indexed above).
    const child = families[0]!.children![0]!;
    const plan = planOf({ table: child.table, key: child.key, where: eq(child.column, 'fam_x') });
    expect(scans(plan, 'refresh_tokens')).toBe(false);
  });
});

describe('retention and backup settings', () => {
  it('reads the retention days and sweep interval, each bad value in one sentence', async () => {
    const { loadConfig } = await import('../../server/config.js');
    expect(loadConfig({}).retention).toEqual({ tokens: 7, sessions: 7, webhooks: 30, audit: 400, invitations: 90 });
    expect(loadConfig({}).sweepInterval).toBe(3600);
    expect(loadConfig({ GATEHOUSE_RETENTION_AUDIT_DAYS: '0', GATEHOUSE_SWEEP_INTERVAL: '0' })).toMatchObject({ retention: { audit: 0 }, sweepInterval: 0 });
    expect(() => loadConfig({ GATEHOUSE_RETENTION_AUDIT_DAYS: 'a year' })).toThrow('GATEHOUSE_RETENTION_AUDIT_DAYS must be a whole number, got "a year".');
    expect(() => loadConfig({ GATEHOUSE_RETENTION_TOKENS_DAYS: '99999' })).toThrow('GATEHOUSE_RETENTION_TOKENS_DAYS must be between 0 and 36500, got 99999.');
    expect(() => loadConfig({ GATEHOUSE_SWEEP_INTERVAL: '-1' })).toThrow('GATEHOUSE_SWEEP_INTERVAL must be a whole number, got "-1".');
    expect(() => loadConfig({ GATEHOUSE_BACKUP_KEY_FILE: '/nonexistent/backup.key' })).toThrow('GATEHOUSE_BACKUP_KEY_FILE names /nonexistent/backup.key, which does not exist.');
  });
});
