/**
 * Data lifecycle (issue 21): the retention sweeper (what it deletes, what it keeps, reuse
 * detection across it, its record and API), big deletes (gone at once, purged in batches), the
 * trigram member search, and the query plan of every statement the admin reads and token grants
 * run, on either engine. The sweeper and a resumed purge in a served SQLite data directory are
 * data-lifecycle-served.test.ts.
 */
import { eq, sql, type SQL } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../server/db/client.js';
import {
  auditLog,
  invitations,
  memberships,
  oneTimeTokens,
  people,
  purgeJobs,
  refreshTokenFamilies,
  refreshTokens,
  sessionRealms,
  sessions,
  ssoGroups,
  webhookDeliveries,
} from '../../server/db/schema.js';
import { sweep } from '../../server/data-lifecycle/sweeper.js';
import { Purger } from '../../server/data-lifecycle/purge.js';
import { MAX_CANDIDATES } from '../../server/members/search.js';
import { WALK_WINDOW } from '../../server/members/service.js';
import { sha256 } from '../../server/util/crypto.js';
import { takeMemoryFreed } from '../../server/util/memory-freed.js';
import { administrator, asBearer, panelSignIn } from '../helpers/admins.js';
import { makeApp, type TestApp } from '../helpers/app.js';
import { setUpClients, spaTokens, token, expectOAuthError } from '../helpers/oauth-inject.js';
import { createApplication } from '../helpers/accounts.js';
import { insertRows, seedApplication } from '../helpers/bulk-rows.js';
import { peopleOutgrowingStatistics } from '../helpers/query-plan.js';
import { engineOf, exec, one, many, sqlRows } from '../../server/db/store.js';

const T0 = new Date('2026-06-01T00:00:00Z');
const DAY = 86_400_000;
const ago = (days: number) => new Date(T0.getTime() - days * DAY);
const ahead = (days: number) => new Date(T0.getTime() + days * DAY);

/** The `n` of a `SELECT count(*) AS n …` (SQL both engines read alike). */
async function count(db: Db, query: SQL): Promise<number> {
  return Number((await sqlRows<{ n: number }>(db, query))[0]!.n);
}

const EPOCH = new Date(0);

/**
 * No row points at a missing parent, and enforcement is back on after a delete that turned it off
 * for its transaction. SQLite only: on PostgreSQL the references a purge removes carry no foreign
 * key (scripts/pg-schema.ts), and the tests count what is left instead.
 */
function expectForeignKeysIntact(db: Db): void {
  if (engineOf(db) !== 'sqlite') return;
  expect(db.$client.pragma('foreign_key_check')).toEqual([]);
  expect(db.$client.pragma('foreign_keys', { simple: true })).toBe(1);
}

let seq = 0;
const id = (prefix: string) => `${prefix}_${(seq++).toString().padStart(6, '0')}`;

async function person(db: Db, email = `${id('p')}@example.com`): Promise<string> {
  const pid = id('usr');
  await exec(db.insert(people).values({ id: pid, email, username: pid, updatedAt: T0, createdAt: T0 }));
  return pid;
}

async function family(db: Db, app: string, personId: string, o: { expiresAt: Date; revokedAt?: Date; sessionId?: string; membershipId?: string; tokens?: number }): Promise<string> {
  const fid = id('fam');
  await exec(db.insert(refreshTokenFamilies)
    .values({ id: fid, applicationId: app, personId, membershipId: o.membershipId ?? null, sessionId: o.sessionId ?? null, scope: 'openid offline_access', resource: 'https://notes.example.com/api', authTime: T0, createdAt: ago(40), expiresAt: o.expiresAt, revokedAt: o.revokedAt ?? null }));
  for (let i = 0; i < (o.tokens ?? 1); i++) await exec(db.insert(refreshTokens).values({ tokenHash: sha256(id('tok')), familyId: fid, createdAt: ago(40), expiresAt: o.expiresAt, rotatedAt: i + 1 < (o.tokens ?? 1) ? ago(39) : null }));
  return fid;
}

async function session(db: Db, personId: string, o: { expiresAt: Date; revokedAt?: Date; realms?: string[] }): Promise<string> {
  const sid = id('ses');
  await exec(db.insert(sessions).values({ id: sid, tokenHash: sha256(sid), personId, createdAt: ago(60), expiresAt: o.expiresAt, lastSeenAt: ago(50), revokedAt: o.revokedAt ?? null }));
  for (const realm of o.realms ?? []) await exec(db.insert(sessionRealms).values({ sessionId: sid, realm, authenticatedAt: ago(50) }));
  return sid;
}


/** Waits for the background purge to empty its job list (up to 30 s: a loaded host, or PostgreSQL's round trips). */
async function purgeDone(t: TestApp): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && (await many(t.db.select().from(purgeJobs))).length) await new Promise((r) => setTimeout(r, 10));
}

describe('retention sweeper', () => {
  it('deletes what has been kept long enough, keeps the rest, and reuse detection works across it', async () => {
    const t = await makeApp({ clock: T0 });
    const { cookie } = await setUpClients(t);
    const db = t.db;

    // Through the real flows: a live family with a rotated token, and one revoked for reuse just now.
    const live = await spaTokens(t, cookie);
    const liveNext = (await token(t, { grant_type: 'refresh_token', refresh_token: live.refresh_token, client_id: 'notes' })).json().refresh_token as string;
    const reused = await spaTokens(t, cookie);
    const reusedNext = (await token(t, { grant_type: 'refresh_token', refresh_token: reused.refresh_token, client_id: 'notes' })).json().refresh_token as string;
    expectOAuthError(await token(t, { grant_type: 'refresh_token', refresh_token: reused.refresh_token, client_id: 'notes' }), 400, 'invalid_grant');

    const p = (await person(db));
    const kept: Record<string, string[]> = {};
    const keep = (what: string, rowId: string) => (kept[what] ??= []).push(rowId);
    // Refresh-token families: expired or revoked beyond the 7-day grace go, with their tokens.
    (await family(db, 'notes', p, { expiresAt: ago(10), tokens: 3 }));
    (await family(db, 'notes', p, { expiresAt: ahead(20), revokedAt: ago(8), tokens: 2 }));
    keep('families', (await family(db, 'notes', p, { expiresAt: ago(3), tokens: 2 })));
    keep('families', (await family(db, 'notes', p, { expiresAt: ahead(20), revokedAt: ago(2) })));
    // Sessions: ended more than 7 days ago go (with their realm marks); a live family born of one goes on without its sid.
    (await session(db, p, { expiresAt: ahead(1), revokedAt: ago(8), realms: ['app:notes', 'app:billing'] }));
    (await session(db, p, { expiresAt: ago(9), realms: ['app:notes'] }));
    keep('sessions', (await session(db, p, { expiresAt: ahead(1), revokedAt: ago(2) })));
    const ended = (await session(db, p, { expiresAt: ago(9) }));
    const outliving = (await family(db, 'notes', p, { expiresAt: ahead(5), sessionId: ended }));
    keep('families', outliving);
    // One-time links, webhook deliveries, audit entries, invitations.
    await exec(db.insert(oneTimeTokens).values({ tokenHash: sha256('old-link'), personId: p, purpose: 'password_reset', createdAt: ago(9), expiresAt: ago(8) }));
    await exec(db.insert(oneTimeTokens).values({ tokenHash: sha256('new-link'), personId: p, purpose: 'password_reset', createdAt: ago(2), expiresAt: ago(1), usedAt: ago(1) }));
    const delivery = async (status: 'pending' | 'succeeded' | 'failed', createdAt: Date) => {
      const did = id('msg');
      await exec(db.insert(webhookDeliveries).values({ id: did, applicationId: 'notes', type: 'webhook.test', payload: '{}', status, nextAttemptAt: createdAt, createdAt }));
      return did;
    };
    (await delivery('succeeded', ago(31)));
    (await delivery('failed', ago(45)));
    keep('deliveries', (await delivery('pending', ago(31))));
    keep('deliveries', (await delivery('failed', ago(10))));
    await exec(db.insert(auditLog).values({ id: 'aud_old', at: ago(401), actor: 'admin', action: 'application.updated' }));
    await exec(db.insert(auditLog).values({ id: 'aud_kept', at: ago(399), actor: 'admin', action: 'application.updated' }));
    const invitation = async (state: 'pending' | 'accepted' | 'revoked', expiresAt: Date) => {
      const iid = id('inv');
      await exec(db.insert(invitations).values({ id: iid, applicationId: 'notes', email: `${iid}@example.com`, role: 'member', tokenHash: sha256(iid), state, invitedBy: 'admin', createdAt: expiresAt, expiresAt }));
      return iid;
    };
    (await invitation('accepted', ago(91)));
    (await invitation('pending', ago(100)));
    keep('invitations', (await invitation('revoked', ago(80))));

    const before = {
      families: await count(db, sql`SELECT count(*) AS n FROM refresh_token_families`),
      tokens: await count(db, sql`SELECT count(*) AS n FROM refresh_tokens`),
      audit: await count(db, sql`SELECT count(*) AS n FROM audit_log`),
    };
    const run = await sweep(db, t.config, t.clock, { between: async () => {} });
    expect(run).toEqual({
      startedAt: T0.toISOString(),
      finishedAt: T0.toISOString(),
      durationMs: expect.any(Number),
      pruned: {
        'refresh token families (expired)': 1,
        'refresh token families (expired).refresh_tokens': 3,
        'refresh token families (revoked)': 1,
        'refresh token families (revoked).refresh_tokens': 2,
        'one-time links': 1,
        'sessions (signed out)': 1,
        'sessions (signed out).session_realms': 2,
        'sessions (expired)': 2,
        'sessions (expired).session_realms': 1,
        'webhook deliveries': 2,
        invitations: 2,
        'audit entries': 1,
      },
      total: 19,
      vacuumedPages: 0, // an in-memory database has no pages to hand back
      error: null,
    });
    expect(await count(db, sql`SELECT count(*) AS n FROM refresh_token_families`)).toBe(before.families - 2);
    expect(await count(db, sql`SELECT count(*) AS n FROM refresh_tokens`)).toBe(before.tokens - 5);
    expect(await count(db, sql`SELECT count(*) AS n FROM audit_log`)).toBe(before.audit - 1);
    for (const fid of kept.families!) expect(await one(db.select().from(refreshTokenFamilies).where(eq(refreshTokenFamilies.id, fid))), fid).toBeDefined();
    for (const sid of kept.sessions!) expect(await one(db.select().from(sessions).where(eq(sessions.id, sid))), sid).toBeDefined();
    for (const did of kept.deliveries!) expect(await one(db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, did))), did).toBeDefined();
    expect(await many(db.select({ id: invitations.id }).from(invitations))).toEqual([{ id: kept.invitations![0] }]);
    expect(await one(db.select({ id: auditLog.id }).from(auditLog).where(eq(auditLog.id, 'aud_kept')))).toEqual({ id: 'aud_kept' });
    expect((await many(db.select().from(oneTimeTokens))).map((r) => r.tokenHash)).toEqual([sha256('new-link')]);
    expect(await one(db.select({ sessionId: refreshTokenFamilies.sessionId }).from(refreshTokenFamilies).where(eq(refreshTokenFamilies.id, outliving)))).toEqual({ sessionId: null });

    // Reuse detection across the sweep: the revoked family is kept through its grace and still answers as revoked…
    const revoked = await token(t, { grant_type: 'refresh_token', refresh_token: reusedNext, client_id: 'notes' });
    expectOAuthError(revoked, 400, 'invalid_grant');
    expect(revoked.json().error_description).toBe('The refresh token has been revoked.');
    // …and a rotated token of the live family presented again still revokes it.
    const replay = await token(t, { grant_type: 'refresh_token', refresh_token: live.refresh_token, client_id: 'notes' });
    expect(replay.json().error_description).toBe('The refresh token has already been used; its whole family is now revoked.');
    expectOAuthError(await token(t, { grant_type: 'refresh_token', refresh_token: liveNext, client_id: 'notes' }), 400, 'invalid_grant');

    // Eight days on, both flow families are past their grace: gone, tokens and all.
    t.clock.advance(8 * DAY);
    const later = await sweep(db, t.config, t.clock, { between: async () => {} });
    // The reused family, the one revoked by the replay, and the one revoked two days before T0.
    expect(later.pruned['refresh token families (revoked)']).toBe(3);
    const gone = await token(t, { grant_type: 'refresh_token', refresh_token: reusedNext, client_id: 'notes' });
    expect(gone.json().error_description).toBe('The refresh token is not valid.');

    // The record, through the admin API.
    const ops = (await t.admin('GET', '/api/admin/operations')).json();
    expect(ops.sweeper).toEqual({
      intervalSeconds: 3600, running: false, nextRunAt: null, lastRun: later, runs: 2, prunedTotal: 19 + later.total,
      retentionDays: { tokens: 7, sessions: 7, webhooks: 30, audit: 400, invitations: 90 },
    });
  });

  it('keeps for ever what a setting of 0 says, and runs on demand through the admin API', async () => {
    const t = await makeApp({ clock: T0, config: { retention: { tokens: 7, sessions: 7, webhooks: 30, audit: 0, invitations: 90 } } });
    await exec(t.db.insert(auditLog).values({ id: 'aud_ancient', at: ago(5000), actor: 'admin', action: 'application.updated' }));
    takeMemoryFreed();
    const started = await t.admin('POST', '/api/admin/operations/sweep');
    expect(started.statusCode).toBe(202);
    expect(started.headers.location).toBe('/api/admin/operations');
    expect(started.json()).toMatchObject({ running: true, retentionDays: { audit: 0 } });
    let ops = (await t.admin('GET', '/api/admin/operations')).json();
    // Until the run has ended: its record is written before the run lets go of its lock (on
    // PostgreSQL an advisory lock, one more round trip), and `running` says so meanwhile.
    for (let i = 0; i < 100 && (ops.sweeper.lastRun === null || ops.sweeper.running); i++) {
      await new Promise((r) => setTimeout(r, 20));
      ops = (await t.admin('GET', '/api/admin/operations')).json();
    }
    expect(ops.sweeper).toMatchObject({ running: false, runs: 1, lastRun: { pruned: {}, total: 0, error: null } });
    // The ended pass asks the idle reclaim to run at the next quiet moment (decision 0486).
    expect(takeMemoryFreed()).toBe(true);
    expect(await one(t.db.select().from(auditLog).where(eq(auditLog.id, 'aud_ancient')))).toBeDefined();
    expect((await t.admin('POST', '/api/admin/operations/sweep?x=1')).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: '/api/admin/operations' })).statusCode).toBe(401);

    // The panel's operations screens are described in the OpenAPI document.
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const view = doc.paths['/api/admin/operations'].get;
    expect(view.security).toEqual([{ adminToken: [] }]);
    const schema = view.responses['200'].content['application/json'].schema;
    expect(Object.keys(schema.properties)).toEqual(['sweeper', 'deletions']);
    expect(Object.keys(schema.properties.sweeper.properties)).toEqual(['intervalSeconds', 'running', 'nextRunAt', 'lastRun', 'runs', 'prunedTotal', 'retentionDays']);
    const backups = doc.paths['/api/admin/backups/status'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(backups.properties)).toEqual(expect.arrayContaining(['scheduled', 'blockedReason', 'passphraseSet', 'encryption']));
    expect(Object.keys(doc.paths['/api/admin/operations/sweep'].post.responses)).toEqual(expect.arrayContaining(['202', '401']));
  });
});

describe('big deletes', () => {
  it('takes the application out of every read and token decision at once, keeps its id until the purge ends', async () => {
    const t = await makeApp({ clock: T0 });
    const { cookie } = await setUpClients(t);
    const tokens = await spaTokens(t, cookie);
    await seedApplication(t.db, 'notes', 3000, 3);
    await exec(t.db.insert(invitations).values({ id: 'inv_x', applicationId: 'notes', email: 'x@example.com', role: 'member', tokenHash: sha256('inv_x'), invitedBy: 'admin', expiresAt: ahead(7) }));
    const rows = (table: string) => count(t.db, sql`SELECT count(*) AS n FROM ${sql.identifier(table)} WHERE application_id = 'notes'`);
    const expected = {
      refreshTokenFamilies: await rows('refresh_token_families'),
      'refreshTokenFamilies.refresh_tokens': await count(t.db, sql`SELECT count(*) AS n FROM refresh_tokens WHERE family_id IN (SELECT id FROM refresh_token_families WHERE application_id = 'notes')`),
      members: await rows('memberships'),
      invitations: 1,
      sessionRealms: await count(t.db, sql`SELECT count(*) AS n FROM session_realms WHERE realm = 'app:notes'`),
      sessionClients: await rows('session_clients'),
    };

    const deleted = await t.admin('DELETE', '/api/admin/applications/notes');
    expect(deleted.statusCode).toBe(204);
    // Far too much for the inline batches: the purge is under way, and nothing can see the application.
    expect(await many(t.db.select().from(purgeJobs))).toMatchObject([{ kind: 'application', target: 'notes', actor: 'admin' }]);
    expect(await rows('memberships')).toBeGreaterThan(0);
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().code).toBe('application_not_found');
    expect((await t.admin('GET', '/api/admin/applications/notes/users')).json().code).toBe('application_not_found');
    expect((await t.admin('GET', '/api/admin/applications')).json().applications.map((a: { id: string }) => a.id)).toEqual(['billing']);
    expectOAuthError(await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'notes' }), 401, 'invalid_client');
    const me = await t.app.inject({ method: 'GET', url: '/api/me/memberships', headers: { cookie } });
    expect(me.json().memberships).toEqual([]);
    const ops = (await t.admin('GET', '/api/admin/operations')).json();
    expect(ops.deletions).toEqual([{ kind: 'application', target: 'notes', requestedAt: T0.toISOString(), requestedBy: 'admin', removed: expect.any(Object) }]);
    const again = await t.admin('POST', '/api/admin/applications', { id: 'notes', name: 'Notes', audience: 'https://other.example.com', redirectUris: ['https://notes.example.com/cb'] });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'deletion_in_progress', detail: 'The application "notes" is still being deleted; its id is free again once that has finished.' });
    // Its audience is free at once.
    const sameAudience = await createApplication(t, { id: 'notes-2', audience: 'https://notes.example.com/api' });
    expect(sameAudience.audience).toBe('https://notes.example.com/api');

    // The background purge finishes it, in batches.
    const purger = new Purger(t.app.ctx, t.app.log);
    await purger.start();
    await purgeDone(t);
    await purger.stop();
    expect(await many(t.db.select().from(purgeJobs))).toEqual([]);
    for (const table of ['memberships', 'invitations', 'refresh_token_families', 'webhook_deliveries', 'api_keys']) expect(await rows(table), table).toBe(0);
    expect(await count(t.db, sql`SELECT count(*) AS n FROM session_realms WHERE realm = 'app:notes'`)).toBe(0);
    expect(await count(t.db, sql`SELECT count(*) AS n FROM refresh_tokens WHERE family_id NOT IN (SELECT id FROM refresh_token_families)`)).toBe(0);
    expectForeignKeysIntact(t.db);
    const purged = (await t.admin('GET', '/api/admin/audit-log?action=application.purged')).json().entries;
    expect(purged).toEqual([expect.objectContaining({ actor: 'system', applicationId: 'notes', target: 'notes', details: { removed: expected, requestedBy: 'admin', requestedAt: T0.toISOString() } })]);
    expect((await createApplication(t, { id: 'notes', audience: 'https://notes-3.example.com' })).id).toBe('notes');
  });

  it('removes a member with many refresh-token families at once; the families are detached in the background', async () => {
    const t = await makeApp({ clock: T0 });
    const { cookie } = await setUpClients(t);
    const tokens = await spaTokens(t, cookie);
    const membership = (await one(t.db.select().from(memberships).where(eq(memberships.applicationId, 'notes'))))!;
    const pid = membership.personId;
    // Far more than the inline batches get through: the rest is the background's.
    await insertRows(t.db, refreshTokenFamilies, Array.from({ length: 40_000 }, (_, i) => ({
      id: `fam_m_${i}`, applicationId: 'notes', personId: pid, membershipId: membership.id, scope: 'openid', resource: 'r', authTime: EPOCH, createdAt: EPOCH, expiresAt: ahead(20), revokedAt: ago(1),
    })));
    const res = await t.admin('DELETE', `/api/admin/applications/notes/users/${membership.id}`);
    expect(res.statusCode).toBe(204);
    expect((await t.admin('GET', `/api/admin/applications/notes/users/${membership.id}`)).json().code).toBe('user_not_found');
    expectOAuthError(await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'notes' }), 400, 'invalid_grant');
    const audit = (await t.admin('GET', '/api/admin/audit-log?action=membership.deleted')).json().entries[0];
    expect(audit.details).toMatchObject({ userId: pid, refreshFamiliesRevoked: 1 });
    expect(await many(t.db.select().from(purgeJobs))).toMatchObject([{ kind: 'membership', target: membership.id }]);

    const purger = new Purger(t.app.ctx, t.app.log);
    await purger.start();
    await purgeDone(t);
    await purger.stop();
    expect(await many(t.db.select().from(purgeJobs))).toEqual([]);
    expect(await count(t.db, sql`SELECT count(*) AS n FROM refresh_token_families WHERE membership_id = ${membership.id}`)).toBe(0);
    expect(await count(t.db, sql`SELECT count(*) AS n FROM refresh_token_families WHERE person_id = ${pid}`)).toBe(40_001);
    expectForeignKeysIntact(t.db);
    // Memberships are an internal detail of the audit: no purged entry.
    expect((await t.admin('GET', '/api/admin/audit-log?action=membership.purged')).json().entries).toEqual([]);
  });

  it('deletes an SSO group at once; its realm marks go in the background, and its id waits for them', async () => {
    const t = await makeApp({ clock: T0 });
    await createApplication(t, { id: 'notes' });
    expect((await t.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: 'Suite' })).statusCode).toBe(201);
    await t.admin('POST', '/api/admin/sso-groups/suite/apps', { appId: 'notes' });
    const p = (await person(t.db));
    const many60k = Array.from({ length: 60_000 }, (_, i) => i);
    await insertRows(t.db, sessions, many60k.map((i) => ({ id: `ses_g_${i}`, tokenHash: `sh_g_${i}`, personId: p, createdAt: EPOCH, expiresAt: ahead(10), lastSeenAt: EPOCH })));
    await insertRows(t.db, sessionRealms, many60k.map((i) => ({ sessionId: `ses_g_${i}`, realm: 'group:suite', authenticatedAt: EPOCH })));
    expect((await t.admin('DELETE', '/api/admin/sso-groups/suite')).statusCode).toBe(204);
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().ssoGroupId).toBeNull();
    expect((await t.admin('GET', '/api/admin/sso-groups/suite')).json().code).toBe('sso_group_not_found');
    const blocked = await t.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: 'Suite again' });
    expect(blocked.json()).toMatchObject({ status: 409, code: 'deletion_in_progress' });
    const purger = new Purger(t.app.ctx, t.app.log);
    await purger.start();
    await purgeDone(t);
    await purger.stop();
    expect(await count(t.db, sql`SELECT count(*) AS n FROM session_realms WHERE realm = 'group:suite'`)).toBe(0);
    expect((await t.admin('GET', '/api/admin/audit-log?action=sso_group.purged')).json().entries[0].details.removed).toEqual({ sessionRealms: 60_000 });
    expect((await t.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: 'Suite again' })).statusCode).toBe(201);
    expect(await many(t.db.select().from(ssoGroups))).toHaveLength(1);
  });
});

describe('member search', () => {
  it('finds members by any part of their e-mail or name, through the index or, for short or broad queries, by walking', async () => {
    const t = await makeApp({ clock: T0 });
    await createApplication(t, { id: 'notes' });
    await createApplication(t, { id: 'other', audience: 'https://other.example.com' });
    const names = ['Ada Lovelace', 'ADA BYRON', 'Grace Hopper', 'Ærøskøbing Ærlig', 'Zoë 100%_sure', 'O\'Brien "Quote"', null];
    const everyone: { email: string; name: string | null; app: string }[] = [];
    const personRows: (typeof people.$inferInsert)[] = [];
    const memberRows: (typeof memberships.$inferInsert)[] = [];
    for (let i = 0; i < 2 * MAX_CANDIDATES + 300; i++) {
      // Most people are @bulk.example.org in the other application: a broad query in "notes" finds few.
      const bulk = i >= 300;
      const email = bulk ? `user${i}@bulk.example.org` : `${['ada', 'grace', 'zoe', 'obrien'][i % 4]}.${i}@${i % 3 ? 'example.com' : 'mail.test'}`;
      const name = bulk ? `Bulk ${i}` : names[i % names.length]!;
      personRows.push({ id: `usr_${i}`, email, username: `u${i}`, name, createdAt: EPOCH, updatedAt: EPOCH });
      const app = bulk && i % 50 !== 0 ? 'other' : 'notes';
      memberRows.push({ id: `mem_${i}`, applicationId: app, personId: `usr_${i}`, joinedAt: new Date(i), lastActiveAt: EPOCH, updatedAt: EPOCH });
      everyone.push({ email, name, app });
    }
    await insertRows(t.db, people, personRows);
    await insertRows(t.db, memberships, memberRows);
    // A rename reaches the index (trigger).
    await exec(t.db.update(people).set({ name: 'Renamed Person' }).where(eq(people.id, 'usr_7')));
    everyone[7]!.name = 'Renamed Person';

    const search = async (q: string) => {
      const found: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await t.admin('GET', `/api/admin/applications/notes/users?limit=200&q=${encodeURIComponent(q)}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.statusCode, res.body).toBe(200);
        found.push(...res.json().users.map((u: { email: string }) => u.email));
        cursor = res.json().nextCursor;
      } while (cursor);
      return found;
    };
    const expected = (q: string) =>
      everyone.filter((p) => p.app === 'notes' && (p.email.includes(q.toLowerCase()) || (p.name ?? '').toLowerCase().includes(q.toLowerCase()))).map((p) => p.email);
    for (const q of ['ada', 'ADA', 'lovelace', 'ce hop', 'æRØ', '100%_', '%_s', '"quote"', "o'br", 'mail.test', 'renamed', 'nobody-here', 'bulk.example.org', 'ad', 'z', '@']) {
      expect({ q, found: await search(q) }).toEqual({ q, found: expected(q) });
    }

    // A walking search reads at most WALK_WINDOW members per request: in the 3,920-member
    // application a two-letter query that matches nobody answers two short pages.
    const members = everyone.filter((p) => p.app === 'other').length;
    expect(members).toBeGreaterThan(WALK_WINDOW);
    expect(members).toBeLessThan(2 * WALK_WINDOW);
    const pages: { users: number; more: boolean }[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.admin('GET', `/api/admin/applications/other/users?limit=50&q=zq${cursor ? `&cursor=${cursor}` : ''}`);
      pages.push({ users: res.json().users.length, more: res.json().nextCursor !== null });
      cursor = res.json().nextCursor;
    } while (cursor);
    expect(pages).toEqual([{ users: 0, more: true }, { users: 0, more: false }]);
  });
});

describe('query plans', () => {
  it('every statement of the admin reads, deletes and token grants searches an index on tables that grow', async () => {
    const db = openDatabase(':memory:');
    const statements = new Set<string>();
    const prepare = db.$client.prepare.bind(db.$client);
    db.$client.prepare = ((source: string) => {
      statements.add(source);
      return prepare(source);
    }) as typeof db.$client.prepare;
    try {
      const t = await makeApp({ clock: T0, deps: { db } });
      const { cookie } = await setUpClients(t);
      const tokens = await spaTokens(t, cookie);
      await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'notes' });
      const users = (await t.admin('GET', '/api/admin/applications/notes/users')).json().users;
      for (const url of [
        '/api/admin/applications/notes/users?limit=50',
        '/api/admin/applications/notes/users?status=active&role=member',
        '/api/admin/applications/notes/users?q=lovelace',
        '/api/admin/applications/notes/users?q=ad',
        `/api/admin/applications/notes/users/${users[0].id}`,
        '/api/admin/audit-log?action=nothing.matches',
        '/api/admin/audit-log?actor=admin',
        '/api/admin/audit-log?applicationId=notes',
        '/api/admin/applications/notes/invitations?status=pending',
        '/api/admin/overview',
        '/api/admin/operations',
      ]) {
        expect((await t.admin('GET', url)).statusCode, url).toBe(200);
      }
      for (const url of ['/api/me/sessions', '/api/me/memberships']) expect((await t.app.inject({ method: 'GET', url, headers: { cookie } })).statusCode).toBe(200);
      // Issue 33: administrators, a panel token's admin call, people search and management.
      const owner = await administrator(t, 'olive@example.com', 'owner');
      const panel = await panelSignIn(t, owner);
      expect((await asBearer(t, panel.access_token, 'GET', '/api/admin/people?q=lov')).statusCode).toBe(200);
      const personId = users[0].userId as string;
      for (const url of ['/api/admin/people?q=ad', '/api/admin/people?q=olive', '/api/admin/administrators', `/api/admin/people/${personId}/sessions`, '/api/admin/settings/password-policy']) {
        expect((await t.admin('GET', url)).statusCode, url).toBe(200);
      }
      expect((await t.admin('PATCH', `/api/admin/people/${personId}`, { status: 'disabled' })).statusCode).toBe(200);
      expect((await t.admin('PATCH', `/api/admin/people/${personId}`, { status: 'active' })).statusCode).toBe(200);
      expect((await t.admin('POST', `/api/admin/people/${personId}/sign-out`)).statusCode).toBe(200);
      const extra = await t.admin('POST', '/api/admin/people', { email: 'gone@example.com', password: 'correct horse battery' });
      expect((await t.admin('DELETE', `/api/admin/people/${extra.json().id}`)).statusCode).toBe(204);
      expect((await t.admin('DELETE', `/api/admin/applications/notes/users/${users[0].id}`)).statusCode).toBe(204);
      expect((await t.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: 'Suite' })).statusCode).toBe(201);
      expect((await t.admin('POST', '/api/admin/sso-groups/suite/apps', { appId: 'billing' })).statusCode).toBe(200);
      expect((await t.admin('DELETE', '/api/admin/sso-groups/suite')).statusCode).toBe(204);
      expect((await t.admin('DELETE', '/api/admin/applications/billing')).statusCode).toBe(204);
      await sweep(db, t.config, t.clock, { between: async () => {} });

      // Explained on a fresh database of the same schema: the sweep's `PRAGMA optimize` just recorded
      // statistics of these few-row tables, under which SQLite rightly prefers reading them whole.
      const fresh = openDatabase(':memory:').$client;
      const explain = (source: string) => fresh.prepare(source);
      const growing = ['people', 'memberships', 'sessions', 'session_realms', 'refresh_token_families', 'refresh_tokens', 'audit_log', 'webhook_deliveries', 'invitations', 'one_time_tokens', 'linked_accounts', 'api_keys'];
      const scanning: { sql: string; plan: string[] }[] = [];
      for (const source of statements) {
        if (!/^\s*(select|update|delete|insert|with)/i.test(source)) continue;
        // Parameters do not change SQLite's choice of index here (no stat4 ranges on these); nulls explain as well as values.
        // Positional `?` (drizzle) and named `@name` (the hand-written hot statements) alike.
        const params: unknown[] = (source.match(/\?/g) ?? []).map(() => null);
        const names = [...source.matchAll(/[@:$]([A-Za-z_]\w*)/g)].map((m) => m[1]!);
        if (names.length > 0) params.unshift(Object.fromEntries(names.map((name) => [name, null])));
        const plan = (explain(`EXPLAIN QUERY PLAN ${source}`).all(...params) as { detail: string }[]).map((r) => r.detail);
        if (plan.some((line) => growing.some((table) => line === `SCAN ${table}` || line.startsWith(`SCAN ${table} `)))) scanning.push({ sql: source, plan });
      }
      fresh.close();
      expect(statements.size).toBeGreaterThan(40);
      expect(scanning).toEqual([]);
    } finally {
      db.$client.close();
    }
  });
  it("re-analyses a table that outgrew its statistics at the sweep (SQLite's PRAGMA optimize over every table, not only those this connection used)", async () => {
    const t = await makeApp();
    if (engineOf(t.db) !== 'sqlite') {
      // PostgreSQL's autovacuum analyses grown tables itself; the sweep runs without it.
      expect((await sweep(t.db, t.config, t.clock, { between: async () => {} })).error).toBeNull();
      return;
    }
    const client = t.db.$client;
    // The statistics a first sweep a minute after start leaves (a one-person table), then 3,000 more people.
    const people = peopleOutgrowingStatistics(t.db);
    const emails = Array.from({ length: 20 }, (_, i) => `new${i}@example.com`);
    const lookUp = `SELECT id FROM people WHERE email IN (${emails.map(() => '?').join(', ')})`;
    const plan = () => (client.prepare(`EXPLAIN QUERY PLAN ${lookUp}`).all(...emails) as { detail: string }[]).map((r) => r.detail).join(' | ');
    // Under the stale statistics SQLite reads all 3,001 people for each look-up.
    expect(people).toBe(3001);
    expect(plan()).toBe('SCAN people');
    expect((await sweep(t.db, t.config, t.clock, { between: async () => {} })).error).toBeNull();
    expect(plan()).toMatch(/^SEARCH people USING (COVERING )?INDEX people_email_\w+ \(email=\?\)$/);
    // The analysis stays bounded (the sweep's analysis_limit), and the connection keeps it.
    expect(client.pragma('analysis_limit', { simple: true })).toBe(400);
  });
});
