/**
 * Every statement of server/directory-sources/queries.ts is served by an index, on both engines
 * (the module's header names the index of each). The statements are recorded as the functions
 * run them (the driver's own prepare / unsafe calls), so the test reads the SQL the server runs,
 * not a copy of it, and each is then explained with its parameters unbound (query-plan.ts).
 */
import { describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.js';
import { peopleOutgrowingStatistics, planOfSent, queryPlan, statementsSent, usesPostgresIndex } from '../helpers/query-plan.js';
import { engineOf } from '../../server/db/store.js';
import * as q from '../../server/directory-sources/queries.js';
import { statisticsKeeper } from '../../server/directory-sources/pace.js';

describe('directory sources: query plans', () => {
  it('reads every table through an index (sources, entries, people, groups, members, runs)', async () => {
    const t = await makeApp();
    const sqlite = engineOf(t.db) === 'sqlite';
    // [what the statement is, the function call, SQLite's plan line, the index PostgreSQL reads: where a
    // statement names both the key and the source, either index serves it (PostgreSQL's generic
    // plan on empty tables picks the source's)]
    const cases: [string, () => Promise<unknown>, RegExp, string][] = [
      ['a source by id', () => q.findSource(t.db, 'dsrc_x'), /SEARCH directory_sources USING INDEX sqlite_autoindex_directory_sources_1 \(id=\?\)/, 'directory_sources_pkey'],
      ['the sources listed by creation (keyset)', () => q.listSourceRows(t.db, undefined, 50), /directory_sources USING INDEX directory_sources_created_idx/, 'directory_sources_created_idx'],
      ['every source, in sign-in order', () => q.allSources(t.db), /directory_sources USING INDEX directory_sources_created_idx/, 'directory_sources_created_idx'],
      ["a source's people by status", () => q.countSourcePeople(t.db, 'dsrc_x'), /SEARCH people USING COVERING INDEX people_source_idx \(source_id=\?\)/, 'people_source_idx'],
      ["a page of a source's entries", () => q.entryPage(t.db, 'dsrc_x', 'person', 'k', 500), /SEARCH directory_entries USING INDEX sqlite_autoindex_directory_entries_1 \(source_id=\? AND kind=\? AND entry_key>\?\)/, 'directory_entries_source_id_kind_entry_key_pk'],
      ['the entry of a person', () => q.entryOfTarget(t.db, 'person', 'usr_x'), /SEARCH directory_entries USING INDEX directory_entries_target_uq \(kind=\? AND target_id=\?\)/, 'directory_entries_target_uq'],
      ['an entry by key', () => q.entryByKey(t.db, 'dsrc_x', 'person', 'k'), /SEARCH directory_entries USING INDEX sqlite_autoindex_directory_entries_1 \(source_id=\? AND kind=\? AND entry_key=\?\)/, 'directory_entries_source_id_kind_entry_key_pk'],
      ["a page's people by id", () => q.sourcePeopleByIds(t.db, 'dsrc_x', ['usr_a', 'usr_b']), /^SEARCH people USING INDEX sqlite_autoindex_people_1 \(id=\?\)$/, 'people_pkey'],
      ['people holding an e-mail address', () => q.peopleHolding(t.db, ['a@example.com'], []), /SEARCH people USING INDEX people_email_(uq|unique) \(email=\?\)/, 'people_email_(uq|unique|key)'],
      ['people holding a username', () => q.peopleHolding(t.db, [], ['ann']), /SEARCH people USING INDEX people_username_uq \(username=\?\)/, 'people_username_uq'],
      ['groups by id', () => q.groupsHolding(t.db, ['g1', 'g2']), /SEARCH groups USING INDEX sqlite_autoindex_groups_1 \(id=\?\)/, 'groups_pkey'],
      ["a group's members", () => q.groupMemberIds(t.db, 'g1'), /SEARCH group_members USING (COVERING |PRIMARY KEY )?INDEX sqlite_autoindex_group_members_1 \(group_id=\?\)/, 'group_members_group_id_person_id_pk'],
      ['a run of a source', () => q.findRun(t.db, 'dsrc_x', 'run_x'), /SEARCH directory_sync_runs USING INDEX sqlite_autoindex_directory_sync_runs_1 \(id=\?\)/, '(?:directory_sync_runs_pkey|directory_sync_runs_source_idx)'],
      ["a source's newest run", () => q.latestRun(t.db, 'dsrc_x'), /SEARCH directory_sync_runs USING INDEX directory_sync_runs_source_idx \(source_id=\?\)/, 'directory_sync_runs_source_idx'],
      ["a source's runs, newest first (keyset)", () => q.listRunRows(t.db, 'dsrc_x', { t: 1, id: 'run_x' }, 20), /SEARCH directory_sync_runs USING INDEX directory_sync_runs_source_idx \(source_id=\?\)/, 'directory_sync_runs_source_idx'],
    ];
    for (const [what, call, sqliteDetail, postgresIndex] of cases) {
      const statements = await statementsSent(t.db, call);
      expect(statements.length, what).toBeGreaterThan(0);
      for (const sql of statements) {
        const plan = await planOfSent(t.db, sql);
        if (sqlite) {
          expect(plan, `${what}: ${sql}`).toMatch(sqliteDetail);
          // No table read whole (a SCAN without an index), whatever else the plan does.
          expect(plan, `${what}: ${sql}`).not.toMatch(/\bSCAN \w+(?! USING)(\s|$)/);
        } else {
          expect(usesPostgresIndex(plan, postgresIndex), `${what}: ${sql}\n${plan}`).toBe(true);
        }
      }
    }
  });

  it('keeps the people look-ups index searches as a sync outgrows the statistics taken before it (SQLite; a no-op on PostgreSQL)', async () => {
    const t = await makeApp();
    const keep = statisticsKeeper(t.db);
    if (engineOf(t.db) !== 'sqlite') {
      // PostgreSQL's autovacuum analyses grown tables itself: nothing to do, nothing thrown.
      await expect(keep(100_000)).resolves.toBeUndefined();
      return;
    }
    const client = t.db.$client;
    // What the sweeper's PRAGMA optimize leaves a minute after start (statistics of a one-person table), then 3,000 more people.
    const people = peopleOutgrowingStatistics(t.db);
    const emails = Array.from({ length: 20 }, (_, i) => `new${i}@example.com`);
    const usernames = Array.from({ length: 20 }, (_, i) => `new${i}`);
    const plan = async () => {
      const [statement] = await statementsSent(t.db, () => q.peopleHolding(t.db, emails, usernames));
      return queryPlan(t.db, statement!, ...emails, ...usernames);
    };
    // The stale statistics make SQLite read the whole table for each batch (what the keeper is for).
    expect(await plan()).toBe('SCAN people');
    // Fewer rows than twice the statistics' count (and 1,000): left alone.
    await keep(1001);
    expect(await plan()).toBe('SCAN people');
    await keep(people);
    expect(Number.parseInt((client.prepare("SELECT stat FROM sqlite_stat1 WHERE tbl = 'people' LIMIT 1").get() as { stat: string }).stat, 10)).toBe(people);
    expect(await plan()).toMatch(/^MULTI-INDEX OR \| INDEX 1 \| SEARCH people USING INDEX people_email_uq \(email=\?\) \| INDEX 2 \| SEARCH people USING INDEX people_username_uq \(username=\?\)$/);
    // The people of a page of entries stay look-ups by primary key with these (sampled) statistics too.
    const [byIds] = await statementsSent(t.db, () => q.sourcePeopleByIds(t.db, 'dsrc_x', ['usr_1', 'usr_2']));
    expect(await queryPlan(t.db, byIds!, 'usr_1', 'usr_2')).toBe('SEARCH people USING INDEX sqlite_autoindex_people_1 (id=?)');
    // The connection's analysis_limit is as it was.
    expect(client.pragma('analysis_limit', { simple: true })).toBe(0);
  });
});
