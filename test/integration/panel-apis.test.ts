/**
 * The admin endpoints the control panel's new screens read (issue 25): people across
 * applications, the audit log's date range and names, the daily activity counters, and the
 * operations status (key schedule, backup schedule, LAN TLS). Exact wire answers, and the query
 * plans of the reads that must stay index-backed as the tables grow.
 */
import { describe, expect, it } from 'vitest';
import { count, eq, sql } from 'drizzle-orm';
import { makeApp, makeInstance, type TestApp } from '../helpers/app.js';
import { createApplication, signIn, signUp, sessionCookieOf, PASSWORD } from '../helpers/accounts.js';
import { spaTokens } from '../helpers/oauth-inject.js';
import { addMember } from '../helpers/members.js';
import { sweep } from '../../server/data-lifecycle/sweeper.js';
import { dayOf } from '../../server/activity/record.js';
import { activityDaily, activityPeople, memberships, people, rowCounts } from '../../server/db/schema.js';
import { engineOf, exec, many, one, sqlRows } from '../../server/db/store.js';
import { queryPlan, usesPostgresIndex } from '../helpers/query-plan.js';
import { PG_BACKUPS_BY_OPERATOR } from '../../server/ops/backup-schedule.js';

const DAY = 24 * 3600 * 1000;

/** The query's plan uses the index: SQLite's EXPLAIN QUERY PLAN detail, or PostgreSQL's index (test/helpers/query-plan.ts). */
async function expectIndex(t: TestApp, [query, ...params]: [string, ...unknown[]], sqlite: RegExp, postgresIndex: string): Promise<void> {
  const plan = await queryPlan(t.db, query, ...params);
  if (engineOf(t.db) === 'sqlite') expect(plan).toMatch(sqlite);
  else expect(usesPostgresIndex(plan, postgresIndex), plan).toBe(true);
}

async function apiKey(t: TestApp, app: string, scopes: string[]): Promise<string> {
  const res = await t.admin('POST', `/api/admin/applications/${app}/api-keys`, { name: 'k', scopes });
  expect(res.statusCode).toBe(201);
  return res.json().key;
}

describe('GET /api/admin/people', () => {
  it('lists everyone by creation with keyset pages, finds by e-mail prefix, and shows one person', async () => {
    const t = await makeApp({ clock: new Date('2026-05-01T09:00:00Z') });
    await createApplication(t, { authPolicy: { signup_policy: 'open' } });
    await createApplication(t, { id: 'wiki', name: 'Wiki', audience: 'https://wiki.example.com/api', authPolicy: { signup_policy: 'open' } });
    const ids: string[] = [];
    for (const [i, email] of ['bea@example.com', 'al@example.com', 'bob@example.org'].entries()) {
      t.clock.advance(1000);
      const res = await signUp(t, { email, name: i === 0 ? 'Bea' : undefined, applicationId: 'notes' });
      expect(res.statusCode).toBe(201);
      ids.push(res.json().user.id);
    }
    t.clock.advance(1000);
    expect((await signIn(t, { email: 'bea@example.com', applicationId: 'notes' })).statusCode).toBe(200);

    const first = await t.admin('GET', '/api/admin/people?limit=2');
    expect(first.statusCode).toBe(200);
    expect(first.json().people).toEqual([
      { id: ids[0], status: 'active', email: 'bea@example.com', username: 'bea', emailVerified: false, name: 'Bea', createdAt: '2026-05-01T09:00:01.000Z', applications: 1 },
      { id: ids[1], status: 'active', email: 'al@example.com', username: 'al', emailVerified: false, name: null, createdAt: '2026-05-01T09:00:02.000Z', applications: 1 },
    ]);
    const second = await t.admin('GET', `/api/admin/people?limit=2&cursor=${first.json().nextCursor}`);
    expect(second.json()).toEqual({
      people: [{ id: ids[2], status: 'active', email: 'bob@example.org', username: 'bob', emailVerified: false, name: null, createdAt: '2026-05-01T09:00:03.000Z', applications: 1 }],
      nextCursor: null,
    });

    // e-mail prefix, case-insensitive, ordered by address, with its own keyset.
    const b = await t.admin('GET', '/api/admin/people?q=B&limit=1');
    expect(b.json().people.map((p: { email: string }) => p.email)).toEqual(['bea@example.com']);
    const b2 = await t.admin('GET', `/api/admin/people?q=B&limit=1&cursor=${b.json().nextCursor}`);
    expect(b2.json()).toMatchObject({ people: [{ email: 'bob@example.org' }], nextCursor: null });
    expect((await t.admin('GET', '/api/admin/people?q=nobody')).json()).toEqual({ people: [], nextCursor: null });

    const bea = await t.admin('GET', `/api/admin/people/${ids[0]}`);
    expect(bea.statusCode).toBe(200);
    expect(bea.json()).toEqual({
      id: ids[0],
      status: 'active',
      email: 'bea@example.com',
      username: 'bea',
      emailVerified: false,
      name: 'Bea',
      givenName: null,
      familyName: null,
      createdAt: '2026-05-01T09:00:01.000Z',
      updatedAt: '2026-05-01T09:00:01.000Z',
      hasPassword: true,
      source: null,
      groups: [],
      secondFactor: { totp: { enabled: false, confirmedAt: null }, passkeys: { count: 0, lastUsedAt: null }, recoveryCodes: { remaining: 0, createdAt: null } },
      memberships: [
        { id: expect.stringMatching(/^mem_/), applicationId: 'notes', applicationName: 'Notes', status: 'active', role: 'member', joinedAt: '2026-05-01T09:00:01.000Z', lastActiveAt: '2026-05-01T09:00:04.000Z' },
      ],
      linkedAccounts: [{ provider: 'credential', email: 'bea@example.com', linkedAt: '2026-05-01T09:00:01.000Z' }],
    });
  });

  it('answers 404 person_not_found, 400 for unknown filters, and 403 to API keys', async () => {
    const t = await makeApp();
    await createApplication(t);
    const missing = await t.admin('GET', '/api/admin/people/usr_nope');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'person_not_found', detail: 'There is no person with id "usr_nope".' });
    const unknown = await t.admin('GET', '/api/admin/people?name=x');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().code).toBe('validation_failed');
    const key = await apiKey(t, 'notes', ['users:read']);
    const byKey = await t.admin('GET', '/api/admin/people', undefined, { authorization: `Bearer ${key}` });
    expect(byKey.statusCode).toBe(403);
    expect(byKey.json().code).toBe('insufficient_scope');
  });

  it('reads through indexes only', async () => {
    const t = await makeApp();
    await expectIndex(t, ['SELECT id FROM people WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT 51', 1, 'x'], /SEARCH people USING (COVERING )?INDEX people_created_idx \(\(created_at,id\)>\(\?,\?\)\)/, 'people_created_idx');
    await expectIndex(t, ['SELECT id FROM people WHERE email >= ? AND email < ? ORDER BY email LIMIT 51', 'a', 'b'], /SEARCH people USING (COVERING )?INDEX people_email_uq \(email>\? AND email<\?\)/, 'people_email_uq');
    await expectIndex(t, ['SELECT count(*) FROM memberships WHERE person_id = ?', 'x'], /SEARCH memberships USING COVERING INDEX memberships_person_idx/, 'memberships_person_idx');
  });
});

describe('overview counts', () => {
  it('keeps people and memberships counted by triggers: sign-ups at once on two instances, joins and cascading deletes', async () => {
    const t = await makeApp();
    const other = await makeInstance(t);
    await createApplication(t, { authPolicy: { signup_policy: 'open' } });
    await createApplication(t, { id: 'wiki', name: 'Wiki', audience: 'https://wiki.example.com/api', authPolicy: { signup_policy: 'open' } });
    const counts = async () => {
      const res = await t.admin('GET', '/api/admin/overview');
      expect(res.statusCode).toBe(200);
      const { people: p, memberships: m } = res.json().counts;
      return { people: p, memberships: m };
    };
    expect(await counts()).toEqual({ people: 0, memberships: 0 });

    const signedUp = await Promise.all(
      Array.from({ length: 8 }, (_, i) => signUp(i % 2 ? other : t, { email: `p${i}@example.com`, applicationId: i < 4 ? 'notes' : 'wiki' })),
    );
    expect(signedUp.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    expect(await counts()).toEqual({ people: 8, memberships: 8 });
    // Joining a second application adds a membership, not a person.
    await addMember(other, 'wiki', 'p0@example.com');
    expect(await counts()).toEqual({ people: 8, memberships: 9 });
    // A person deleted takes their memberships with them (the person purge, issue 33): both counts follow.
    expect((await t.admin('DELETE', `/api/admin/people/${signedUp[0]!.json().user.id}`)).statusCode).toBe(204);
    expect(await counts()).toEqual({ people: 7, memberships: 7 });
    // What a count over the tables says.
    expect({
      people: (await one(t.db.select({ n: count() }).from(people)))!.n,
      memberships: (await one(t.db.select({ n: count() }).from(memberships)))!.n,
    }).toEqual({ people: 7, memberships: 7 });
    // Read from a handful of rows, whatever the tables hold: one per table on SQLite, a shard per connection on PostgreSQL.
    expect((await many(t.db.select().from(rowCounts))).length).toBeLessThanOrEqual(engineOf(t.db) === 'sqlite' ? 2 : 34);
  });
});

describe('audit log: date range and names', () => {
  it('filters by a time range and names the people, applications, keys and invitations a page mentions', async () => {
    const t = await makeApp({ clock: new Date('2026-03-01T10:00:00Z') });
    await createApplication(t, { authPolicy: { signup_policy: 'open' } });
    t.clock.advance(DAY);
    const person = (await signUp(t, { email: 'dee@example.com', name: 'Dee', applicationId: 'notes' })).json().user.id;
    t.clock.advance(DAY);
    const inv = (await t.admin('POST', '/api/admin/applications/notes/invitations', { emails: ['eve@example.com'] })).json().invitations[0].id;
    const key = (await t.admin('POST', '/api/admin/applications/notes/api-keys', { name: 'Sync', scopes: ['users:read'] })).json();

    const day2 = await t.admin('GET', '/api/admin/audit-log?from=2026-03-02T00:00:00Z&to=2026-03-03T00:00:00Z');
    expect(day2.statusCode).toBe(200);
    expect(day2.json().entries.map((e: { action: string }) => e.action)).toEqual(['person.signed_up']);
    expect(day2.json().references).toEqual({
      [person]: { kind: 'person', label: 'Dee <dee@example.com>', personId: person },
      notes: { kind: 'application', label: 'Notes', applicationId: 'notes' },
    });
    const fromDay3 = await t.admin('GET', '/api/admin/audit-log?from=2026-03-03T10:00:00.000Z');
    expect(fromDay3.json().entries.map((e: { action: string }) => e.action)).toEqual(['api_key.created', 'invitation.created']);
    expect(fromDay3.json().references).toEqual({
      notes: { kind: 'application', label: 'Notes', applicationId: 'notes' },
      [inv]: { kind: 'invitation', label: 'eve@example.com', applicationId: 'notes' },
      [key.id]: { kind: 'api_key', label: 'Sync', applicationId: 'notes' },
    });
    const untilDay1 = await t.admin('GET', '/api/admin/audit-log?to=2026-03-01T10:00:00.001Z&action=application.created');
    expect(untilDay1.json().entries).toHaveLength(1);

    const bad = await t.admin('GET', '/api/admin/audit-log?from=yesterday');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: 'querystring.from', message: 'must match format "date-time"' }] });
  });

  it('walks an index for every filter, with or without a range', async () => {
    const t = await makeApp();
    const select = 'SELECT id FROM audit_log WHERE';
    const tail = 'ORDER BY at DESC, id DESC LIMIT 51';
    await expectIndex(t, [`${select} action = ? AND at >= ? ${tail}`, 'x', 1], /SEARCH audit_log USING (COVERING )?INDEX audit_log_action_idx \(action=\? AND at>\?\)/, 'audit_log_action_idx');
    await expectIndex(t, [`${select} actor = ? ${tail}`, 'admin'], /SEARCH audit_log USING (COVERING )?INDEX audit_log_actor_idx \(actor=\?\)/, 'audit_log_actor_idx');
    await expectIndex(t, [`${select} at >= ? AND at < ? ${tail}`, 1, 2], /SEARCH audit_log USING (COVERING )?INDEX audit_log_at_idx \(at>\? AND at<\?\)/, 'audit_log_at_idx');
    await expectIndex(t, [`${select} application_id = ? AND at < ? ${tail}`, 'x', 2], /SEARCH audit_log USING (COVERING )?INDEX audit_log_app_idx \(application_id=\? AND at<\?\)/, 'audit_log_app_idx');
  });
});

describe('activity counters', () => {
  const series = async (t: TestApp, path: string) => {
    const res = await t.admin('GET', path);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().days as { date: string; signIns: number; failedSignIns: number; activePeople: number }[];
  };

  it('counts sign-ins, failed sign-ins and distinct active people per day, per application and in all', async () => {
    const t = await makeApp({ clock: new Date('2026-06-10T08:00:00Z') });
    await createApplication(t, { id: 'notes', clientType: 'spa', redirectUris: ['http://127.0.0.1:5173/callback'], authPolicy: { signup_policy: 'open' } });
    await createApplication(t, { id: 'wiki', name: 'Wiki', audience: 'https://wiki.example.com/api', authPolicy: { signup_policy: 'open' } });
    const cookie = `gatehouse_session=${sessionCookieOf(await signUp(t, { email: 'ada@example.com', applicationId: 'notes' }))}`;
    await signUp(t, { email: 'bo@example.com', applicationId: 'wiki' });
    expect((await signIn(t, { email: 'ada@example.com', applicationId: 'notes' })).statusCode).toBe(200);
    expect((await signIn(t, { email: 'ada@example.com', applicationId: 'notes' })).statusCode).toBe(200);
    expect((await signIn(t, { email: 'bo@example.com', applicationId: 'wiki' })).statusCode).toBe(200);
    expect((await signIn(t, { email: 'ada@example.com', password: 'wrong', applicationId: 'notes' })).statusCode).toBe(401);
    expect((await signIn(t, { email: 'nobody@example.com', password: PASSWORD })).statusCode).toBe(401);
    expect((await signIn(t, { email: 'ada@example.com' })).statusCode).toBe(200); // the account pages: no application

    const today = { date: '2026-06-10' };
    expect((await series(t, '/api/admin/applications/notes/activity?days=2'))).toEqual([
      { date: '2026-06-09', signIns: 0, failedSignIns: 0, activePeople: 0 },
      { ...today, signIns: 2, failedSignIns: 1, activePeople: 1 },
    ]);
    expect((await series(t, '/api/admin/applications/wiki/activity?days=1'))).toEqual([{ ...today, signIns: 1, failedSignIns: 0, activePeople: 1 }]);
    expect((await series(t, '/api/admin/activity?days=1'))).toEqual([{ ...today, signIns: 4, failedSignIns: 2, activePeople: 2 }]);
    expect(await series(t, '/api/admin/activity')).toHaveLength(30);

    // The next day, a token grant alone (no password) makes Ada active again, once.
    t.clock.advance(DAY);
    await spaTokens(t, cookie);
    await spaTokens(t, cookie);
    expect((await series(t, '/api/admin/applications/notes/activity?days=1'))).toEqual([{ date: '2026-06-11', signIns: 0, failedSignIns: 0, activePeople: 1 }]);
    expect((await series(t, '/api/admin/activity?days=1'))).toEqual([{ date: '2026-06-11', signIns: 0, failedSignIns: 0, activePeople: 1 }]);
  });

  it('answers 404 for an unknown application, 400 for a bad range, and lets a key with application:read see its own', async () => {
    const t = await makeApp();
    await createApplication(t);
    expect((await t.admin('GET', '/api/admin/applications/nope/activity')).json().code).toBe('application_not_found');
    const bad = await t.admin('GET', '/api/admin/activity?days=0');
    expect(bad.statusCode).toBe(400);
    const key = await apiKey(t, 'notes', ['application:read']);
    const auth = { authorization: `Bearer ${key}` };
    expect((await t.admin('GET', '/api/admin/applications/notes/activity?days=1', undefined, auth)).statusCode).toBe(200);
    const all = await t.admin('GET', '/api/admin/activity', undefined, auth);
    expect(all.statusCode).toBe(403);
    expect(all.json().code).toBe('insufficient_scope');
    const other = await apiKey(t, 'notes', ['users:read']);
    expect((await t.admin('GET', '/api/admin/applications/notes/activity', undefined, { authorization: `Bearer ${other}` })).json().code).toBe('insufficient_scope');
  });

  it('reads one primary-key range, and retention keeps 400 days of counts and two days of who-was-counted', async () => {
    const t = await makeApp({ clock: new Date('2026-06-10T08:00:00Z') });
    await expectIndex(t, ['SELECT * FROM activity_daily WHERE application_id = ? AND day BETWEEN ? AND ?', '', 1, 2], /SEARCH activity_daily USING INDEX sqlite_autoindex_activity_daily_1 \(application_id=\? AND day>\? AND day<\?\)/, 'activity_daily_application_id_day_pk');
    await expectIndex(t, ['SELECT application_id, day FROM activity_daily WHERE day < ? LIMIT 500', 1], /SEARCH activity_daily USING (COVERING )?INDEX activity_daily_day_idx \(day<\?\)/, 'activity_daily_day_idx');
    const today = dayOf(t.clock.now());
    for (const day of [today - 401, today - 400, today - 399, today]) await exec(t.db.insert(activityDaily).values({ applicationId: '', day, signIns: 1 }));
    for (let i = 0; i < 1200; i++) await exec(t.db.insert(activityPeople).values({ day: today - 2 - (i % 3), applicationId: '', personId: `usr_${i}` }));
    for (const day of [today - 1, today]) await exec(t.db.insert(activityPeople).values({ day, applicationId: 'notes', personId: 'usr_x' }));
    const run = await sweep(t.db, t.config, t.clock, { between: async () => {} });
    expect(run.error).toBeNull();
    expect({ days: run.pruned['activity days'], people: run.pruned['activity people'] }).toEqual({ days: 1, people: 1200 });
    expect((await many(t.db.select({ day: activityDaily.day }).from(activityDaily))).map((r) => today - r.day)).toEqual([400, 399, 0]);
    expect((await sqlRows(t.db, sql`SELECT day FROM activity_people ORDER BY day`)).map((r) => today - (r as { day: number }).day)).toEqual([1, 0]);
  });
});

describe('operations status for the panel', () => {
  it('tells the key rotation schedule, the backup schedule and that TLS is off', async () => {
    const t = await makeApp({ clock: new Date('2026-07-01T12:00:00Z'), deps: { startWorkers: true } });
    await t.admin('GET', '/api/admin/keys'); // makes the first key
    const schedule = await t.admin('GET', '/api/admin/keys/schedule');
    expect(schedule.statusCode).toBe(200);
    const activeKid = (await t.admin('GET', '/api/admin/keys')).json().keys[0].kid;
    expect(schedule.json()).toEqual({
      rotationDays: 90,
      activeKid,
      activeSince: '2026-07-01T12:00:00.000Z',
      nextRotationAt: '2026-09-29T12:00:00.000Z',
    });
    const backups = await t.admin('GET', '/api/admin/backups/status');
    expect(backups.json()).toEqual({
      scheduled: false, // no data directory to keep them in (PostgreSQL mode: pg_dump's)
      blockedReason: engineOf(t.db) === 'postgres' ? PG_BACKUPS_BY_OPERATOR : 'This server has no data directory to keep backups in.',
      intervalSeconds: 86400,
      keep: 7,
      passphraseSet: false,
      encryption: null,
      lastBackupAt: null,
      lastRun: null,
      nextRunAt: null,
    });
    expect((await t.admin('GET', '/api/admin/tls')).json()).toEqual({
      mode: 'off', ca: null, certificate: null, renewsAt: null, caUrl: null, plainHttpCaUrl: null, caNameConstraints: null, caRenewalDue: false, uncovered: [], trust: null, acme: null,
    });
    await createApplication(t);
    const key = await apiKey(t, 'notes', ['application:read']);
    expect((await t.admin('GET', '/api/admin/tls', undefined, { authorization: `Bearer ${key}` })).statusCode).toBe(403);
  });

  it('says no schedule runs where workers do not', async () => {
    const t = await makeApp();
    await t.admin('GET', '/api/admin/keys');
    expect((await t.admin('GET', '/api/admin/keys/schedule')).json().nextRotationAt).toBeNull();
  });
});
