import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { webhookDeliveries } from '../../server/db/schema.js';
import { appBody, makeApp, type TestApp } from '../helpers/app.js';
import { addMember, addRefreshFamily, familyRevocation } from '../helpers/members.js';
import { engineOf, one, many } from '../../server/db/store.js';
import { queryPlan, usesPostgresIndex } from '../helpers/query-plan.js';

const USERS = '/api/admin/applications/notes/users';

async function withApp(overrides: Record<string, unknown> = {}): Promise<TestApp> {
  const t = await makeApp();
  const res = await t.admin('POST', '/api/admin/applications', appBody(overrides));
  expect(res.statusCode).toBe(201);
  return t;
}

describe('application users admin API', () => {
  it('lists members in join order with keyset pagination', async () => {
    const t = await withApp();
    for (let i = 0; i < 5; i++) {
      (await addMember(t, 'notes', `p${i}@example.com`, { name: `Person ${i}` }));
      t.clock.advance(1000);
    }
    const first = await t.admin('GET', `${USERS}?limit=2`);
    expect(first.statusCode).toBe(200);
    const page1 = first.json();
    expect(page1.users.map((u: { email: string }) => u.email)).toEqual(['p0@example.com', 'p1@example.com']);
    expect(page1.users[0]).toMatchObject({ name: 'Person 0', status: 'active', role: 'member', profile: {} });
    expect(Object.keys(page1.users[0]).sort()).toEqual(
      ['email', 'hasSecondFactor', 'id', 'joinedAt', 'lastActiveAt', 'name', 'profile', 'role', 'status', 'updatedAt', 'userId'].sort(),
    );
    const seen: string[] = page1.users.map((u: { email: string }) => u.email);
    let cursor = page1.nextCursor;
    while (cursor) {
      const page = (await t.admin('GET', `${USERS}?limit=2&cursor=${cursor}`)).json();
      seen.push(...page.users.map((u: { email: string }) => u.email));
      cursor = page.nextCursor;
    }
    expect(seen).toEqual([0, 1, 2, 3, 4].map((i) => `p${i}@example.com`));
  });

  it('filters by status, role and q (substring of e-mail or name, wildcards literal)', async () => {
    const t = await withApp();
    (await addMember(t, 'notes', 'alice@example.com', { name: 'Alice Liddell' }));
    const bob = (await addMember(t, 'notes', 'bob@corp.test', { name: 'Bob', role: 'admin' }));
    (await addMember(t, 'notes', 'carol_x@example.com', { name: 'Carol' }));
    await t.admin('PATCH', `${USERS}/${bob.membership.id}`, { status: 'suspended' });

    const emails = async (qs: string) => (await t.admin('GET', `${USERS}?${qs}`)).json().users.map((u: { email: string }) => u.email);
    expect(await emails('status=suspended')).toEqual(['bob@corp.test']);
    expect(await emails('status=active')).toEqual(['alice@example.com', 'carol_x@example.com']);
    expect(await emails('role=admin')).toEqual(['bob@corp.test']);
    expect(await emails('q=LIDDELL')).toEqual(['alice@example.com']);
    expect(await emails('q=corp')).toEqual(['bob@corp.test']);
    expect(await emails('q=_x')).toEqual(['carol_x@example.com']);
    expect(await emails('q=%25')).toEqual([]);
    // Three characters or more are answered by the trigram index: case-insensitive, spaces and wildcards literal.
    expect(await emails('q=E%20l')).toEqual(['alice@example.com']);
    expect(await emails('q=l_x')).toEqual(['carol_x@example.com']);
    expect(await emails('q=o%25x')).toEqual([]);
    expect(await emails('q=a%5Cb')).toEqual([]);
    // A NUL (which FTS5 cannot take, nor PostgreSQL's text) finds no one, rather than failing (found by the fuzzer, seed 312485595).
    expect(await emails('q=a%00b')).toEqual([]);
    expect(await emails('q=%00')).toEqual([]);
    expect(await emails('q=a%00')).toEqual([]);
  });

  it('finds the people a q of three characters or more names through a trigram index, not by reading people', async () => {
    const t = await withApp();
    if (engineOf(t.db) === 'sqlite') {
      const plan = await queryPlan(t.db, 'SELECT p.id AS id FROM people_search JOIN people p ON p.rowid = people_search.rowid WHERE people_search MATCH ? LIMIT 2001', '"abc"');
      expect(plan).toMatch(/^SCAN people_search VIRTUAL TABLE INDEX \d+:M/);
      expect(plan).toMatch(/SEARCH p USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    } else {
      // pg_trgm's GIN indexes answer ILIKE (members/search.ts, PostgreSQL migration people_search_and_counts).
      const plan = await queryPlan(t.db, 'SELECT id FROM people WHERE email ILIKE ? OR name ILIKE ? LIMIT 2001', '%abc%', '%abc%');
      expect(usesPostgresIndex(plan, 'people_email_trgm_idx') && usesPostgresIndex(plan, 'people_name_trgm_idx'), plan).toBe(true);
    }
  });

  it('rejects bad queries and unknown applications', async () => {
    const t = await withApp();
    const bad = await t.admin('GET', `${USERS}?status=gone`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('validation_failed');
    const extra = await t.admin('GET', `${USERS}?colour=red`);
    expect(extra.statusCode).toBe(400);
    expect(extra.json().errors).toEqual([{ path: 'querystring.colour', message: 'is not a known field' }]);
    const cursor = await t.admin('GET', `${USERS}?cursor=nonsense`);
    expect(cursor.statusCode).toBe(400);
    expect(cursor.json().code).toBe('invalid_cursor');
    const missing = await t.admin('GET', '/api/admin/applications/nope/users');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('application_not_found');
  });

  it('gets one member; unknown or other-app ids are 404 user_not_found', async () => {
    const t = await withApp();
    await t.admin('POST', '/api/admin/applications', appBody({ id: 'other', audience: 'https://other.example.com' }));
    const { membership, person } = (await addMember(t, 'notes', 'a@example.com'));
    const res = await t.admin('GET', `${USERS}/${membership.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: membership.id, userId: person.id, email: 'a@example.com' });
    const missing = await t.admin('GET', `${USERS}/mem_nope`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('user_not_found');
    const elsewhere = await t.admin('GET', `/api/admin/applications/other/users/${membership.id}`);
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.json().code).toBe('user_not_found');
  });

  it('PATCH changes role and profile (validated against profile_fields), emits and audits', async () => {
    const t = await withApp({
      webhookUrl: 'https://hooks.example.com/in',
      authPolicy: {
        profile_fields: [
          { key: 'team', label: 'Team', type: 'select', options: ['red', 'blue'], required: false, user_editable: true },
          { key: 'seats', label: 'Seats', type: 'integer', min: 1, required: false, user_editable: false },
        ],
      },
    });
    const { membership } = (await addMember(t, 'notes', 'a@example.com'));
    t.clock.advance(5000);
    const res = await t.admin('PATCH', `${USERS}/${membership.id}`, { role: 'admin', profile: { team: 'red', seats: 3 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ role: 'admin', status: 'active', profile: { team: 'red', seats: 3 } });
    expect(res.json().updatedAt).toBe(t.clock.now().toISOString());

    const cleared = await t.admin('PATCH', `${USERS}/${membership.id}`, { profile: { team: null } });
    expect(cleared.json().profile).toEqual({ seats: 3 });

    const invalid = await t.admin('PATCH', `${USERS}/${membership.id}`, { profile: { team: 'green', shoe: 42 } });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().code).toBe('validation_failed');
    expect(invalid.json().errors.map((e: { path: string }) => e.path).sort()).toEqual(['body.profile.shoe', 'body.profile.team']);

    const empty = await t.admin('PATCH', `${USERS}/${membership.id}`, {});
    expect(empty.statusCode).toBe(400);
    const wrongRole = await t.admin('PATCH', `${USERS}/${membership.id}`, { role: 'owner' });
    expect(wrongRole.statusCode).toBe(400);

    // Naming the values it already has changes nothing: no write, no event, no audit entry.
    t.clock.advance(5000);
    const same = await t.admin('PATCH', `${USERS}/${membership.id}`, { role: 'admin', status: 'active', profile: { seats: 3 } });
    expect(same.statusCode).toBe(200);
    expect(same.json().updatedAt).toBe(cleared.json().updatedAt);
    // Only what moves is listed as changed.
    const suspended = await t.admin('PATCH', `${USERS}/${membership.id}`, { role: 'admin', status: 'suspended' });
    expect(suspended.json().status).toBe('suspended');

    const events = await many(t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.type, 'membership.updated')));
    expect(events).toHaveLength(3);
    expect(JSON.parse(events[0]!.payload).data).toMatchObject({ id: membership.id, role: 'admin', changed: ['role', 'profile'] });
    expect(JSON.parse(events[1]!.payload).data.changed).toEqual(['profile']);
    expect(JSON.parse(events[2]!.payload).data.changed).toEqual(['status']);

    const audit = (await t.admin('GET', '/api/admin/audit-log?action=membership.updated')).json();
    expect(audit.entries).toHaveLength(3);
    expect(audit.entries[0].details).toEqual({ userId: expect.any(String), changed: ['status'], status: { from: 'active', to: 'suspended' } });
    audit.entries.shift();
    expect(audit.entries[1]).toMatchObject({ actor: 'admin', applicationId: 'notes', target: membership.id, details: { role: { from: 'member', to: 'admin' } } });
  });

  it('suspending revokes the refresh tokens for that app only, at once', async () => {
    const t = await withApp();
    await t.admin('POST', '/api/admin/applications', appBody({ id: 'other', audience: 'https://other.example.com' }));
    const { membership, person } = (await addMember(t, 'notes', 'a@example.com'));
    (await addMember(t, 'other', 'a@example.com'));
    const here = (await addRefreshFamily(t, 'notes', person.id));
    const there = (await addRefreshFamily(t, 'other', person.id));
    const res = await t.admin('PATCH', `${USERS}/${membership.id}`, { status: 'suspended' });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('suspended');
    expect((await familyRevocation(t, here.id))).toEqual({ revokedAt: t.clock.now(), reason: 'membership_suspended' });
    expect((await familyRevocation(t, there.id)).revokedAt).toBeNull();

    const back = await t.admin('PATCH', `${USERS}/${membership.id}`, { status: 'active' });
    expect(back.json().status).toBe('active');
  });

  it('DELETE removes the member, revokes refresh tokens, emits membership.deleted; then 404', async () => {
    const t = await withApp({ webhookUrl: 'https://hooks.example.com/in' });
    const { membership, person } = (await addMember(t, 'notes', 'a@example.com'));
    const family = (await addRefreshFamily(t, 'notes', person.id));
    const res = await t.admin('DELETE', `${USERS}/${membership.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await familyRevocation(t, family.id)).reason).toBe('membership_deleted');
    const event = await one(t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.type, 'membership.deleted')));
    expect(JSON.parse(event!.payload).data).toMatchObject({ id: membership.id, userId: person.id, email: 'a@example.com' });
    const again = await t.admin('DELETE', `${USERS}/${membership.id}`);
    expect(again.statusCode).toBe(404);
    expect(again.json().code).toBe('user_not_found');
    const audit = (await t.admin('GET', '/api/admin/audit-log?action=membership.deleted')).json();
    expect(audit.entries[0]).toMatchObject({ actor: 'admin', target: membership.id, details: { userId: person.id, refreshFamiliesRevoked: 1 } });
  });
});

describe('OpenAPI document', () => {
  it('describes the members, invitations, API-key and audit-log endpoints', async () => {
    const t = await makeApp();
    const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    const paths = Object.keys(res.json().paths);
    for (const path of [
      '/api/admin/applications/{id}/users',
      '/api/admin/applications/{id}/users/{uid}',
      '/api/admin/applications/{id}/invitations',
      '/api/admin/applications/{id}/invitations/{iid}',
      '/api/admin/applications/{id}/invitations/{iid}/resend',
      '/api/admin/applications/{id}/api-keys',
      '/api/admin/applications/{id}/api-keys/{kid}',
      '/api/admin/audit-log',
    ]) expect(paths).toContain(path);
  });
});

describe('unknown query parameters', () => {
  it('are rejected on routes that take no query', async () => {
    const t = await withApp();
    const { membership } = (await addMember(t, 'notes', 'a@example.com'));
    for (const [method, url] of [
      ['GET', `${USERS}/${membership.id}?x=1`],
      ['DELETE', `${USERS}/${membership.id}?x=1`],
      ['DELETE', '/api/admin/applications/notes/invitations/inv_x?x=1'],
      ['POST', '/api/admin/applications/notes/invitations/inv_x/resend?x=1'],
      ['DELETE', '/api/admin/applications/notes/api-keys/key_x?x=1'],
    ] as const) {
      const res = await t.admin(method, url);
      expect(res.statusCode, `${method} ${url}`).toBe(400);
      expect(res.json().errors).toEqual([{ path: 'querystring.x', message: 'is not a known field' }]);
    }
  });
});
