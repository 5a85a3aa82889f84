/**
 * Directory groups (spec claims-and-groups.md, "Groups"; decision 0101): the admin API with its
 * exact answers and errors, the limits, audit entries, webhook events and who receives them,
 * a deleted group's members purged, the `group_in_use` refusal, invitations that add to groups,
 * and the query plans of every statement. Runs on SQLite and, in unit-postgres, on PostgreSQL.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { and, asc, eq, gte, isNotNull, lt, sql } from 'drizzle-orm';
import { makeApp, appBody, type TestApp } from '../helpers/app.js';
import { expectProblem, expectValidation } from '../helpers/problem.js';
import { addMember as addAppMember, addPerson } from '../helpers/members.js';
import { createApplication, insertInvitation, signUp } from '../helpers/accounts.js';
import { insertApiKey } from '../helpers/webhook-fixtures.js';
import { eventually, startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { startSmtp } from '../helpers/smtp.js';
import { queryPlan, usesPostgresIndex } from '../helpers/query-plan.js';
import { auditLog, groupMembers, groups, people, webhookDeliveries } from '../../server/db/schema.js';
import { engineOf, exec, many } from '../../server/db/store.js';
import { GROUP_REFERENCES, groupReferences } from '../../server/groups/references.js';
import { applications } from '../../server/db/schema.js';

const T0 = new Date('2026-03-01T10:00:00.000Z');
const G = '/api/admin/groups';

const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  while (closers.length) await closers.pop()!();
});

async function create(t: TestApp, body: Record<string, unknown>) {
  const res = await t.admin('POST', G, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function auditOf(t: TestApp, target: string) {
  return (await many(t.db.select({ actor: auditLog.actor, action: auditLog.action, details: auditLog.details }).from(auditLog).where(eq(auditLog.target, target)).orderBy(asc(auditLog.at), asc(auditLog.id))));
}

/** The webhook events queued (not yet delivered), as `applicationId type data` for compact comparison. */
async function events(t: TestApp, type?: string) {
  const rows = await many(t.db.select({ applicationId: webhookDeliveries.applicationId, type: webhookDeliveries.type, payload: webhookDeliveries.payload }).from(webhookDeliveries).orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id)));
  return rows.filter((r) => r.type !== 'membership.created' && (type === undefined || r.type === type)).map((r) => ({ app: r.applicationId, type: r.type, data: (JSON.parse(r.payload) as { data: unknown }).data }));
}

describe('groups: create, read, list, change', () => {
  it('creates a group (201 with its location), reads, renames and describes it, audited', async () => {
    const t = await makeApp({ clock: T0 });
    const res = await t.admin('POST', G, { id: 'media-users', name: '  Media users ', description: 'Jellyfin and Immich' });
    expect(res.statusCode).toBe(201);
    expect(res.headers.location).toBe('/api/admin/groups/media-users');
    const created = { id: 'media-users', name: 'Media users', description: 'Jellyfin and Immich', source: null, createdAt: T0.toISOString(), updatedAt: T0.toISOString() };
    expect(res.json()).toEqual(created);
    expect((await t.admin('GET', `${G}/media-users`)).json()).toEqual(created);

    t.clock.advance(60_000);
    const renamed = await t.admin('PATCH', `${G}/media-users`, { name: 'Media', description: null });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toEqual({ ...created, name: 'Media', description: null, updatedAt: '2026-03-01T10:01:00.000Z' });
    // Nothing moves: nothing written.
    expect((await t.admin('PATCH', `${G}/media-users`, { name: 'Media', description: '  ' })).json()).toEqual({ ...created, name: 'Media', description: null, updatedAt: '2026-03-01T10:01:00.000Z' });
    expect(await auditOf(t, 'media-users')).toEqual([
      { actor: 'admin', action: 'group.created', details: { name: 'Media users' } },
      { actor: 'admin', action: 'group.updated', details: { changed: ['name', 'description'], name: { from: 'Media users', to: 'Media' } } },
    ]);
  });

  it('answers 409 group_exists, 404 group_not_found, and 400 naming the field for a bad id, name or body', async () => {
    const t = await makeApp({ clock: T0 });
    await create(t, { id: 'family', name: 'Family' });
    const again = expectProblem(await t.admin('POST', G, { id: 'family', name: 'Other' }), 409, 'group_exists');
    expect(again.detail).toBe('A group with id "family" already exists.');
    for (const url of [`${G}/nope`, `${G}/nope/members`]) {
      expect(expectProblem(await t.admin('GET', url), 404, 'group_not_found').detail).toBe('There is no group with id "nope".');
    }
    expectProblem(await t.admin('PATCH', `${G}/nope`, { name: 'x' }), 404, 'group_not_found');
    expectProblem(await t.admin('DELETE', `${G}/nope`), 404, 'group_not_found');
    expectProblem(await t.admin('PUT', `${G}/nope/members/usr_x`), 404, 'group_not_found');
    expectProblem(await t.admin('DELETE', `${G}/nope/members/usr_x`), 404, 'group_not_found');

    expectValidation(await t.admin('POST', G, { id: 'Admins', name: 'Admins' }), ['body.id']);
    expectValidation(await t.admin('POST', G, { id: '-admins', name: 'Admins' }), ['body.id']);
    expectValidation(await t.admin('POST', G, { id: `a${'b'.repeat(64)}`, name: 'Long' }), ['body.id']);
    expectValidation(await t.admin('POST', G, { id: 'ok', name: '' }), ['body.name']);
    expectValidation(await t.admin('POST', G, { id: 'ok', name: 'evil\u202Egnp.exe' }), ['body.name']);
    expectValidation(await t.admin('POST', G, { id: 'ok', name: 'Ok', colour: 'red' }), ['body.colour']);
    expectValidation(await t.admin('POST', G, { name: 'Ok' }), ['body.id']);
    expectValidation(await t.admin('PATCH', `${G}/family`, {}), ['body']);
    expectValidation(await t.admin('PATCH', `${G}/family`, { id: 'other' }), ['body.id']);
    expectValidation(await t.admin('GET', `${G}?sort=name`), ['querystring.sort']);
    // The one-character id is valid (`^[a-z0-9][a-z0-9._-]{0,63}$`), as are dots and underscores.
    expect((await t.admin('POST', G, { id: 'x', name: 'X' })).statusCode).toBe(201);
    expect((await t.admin('POST', G, { id: 'team.ops_2', name: 'Ops' })).statusCode).toBe(201);
  });

  it('lists groups by creation in keyset pages, and by id prefix with q', async () => {
    const t = await makeApp({ clock: T0 });
    for (const id of ['media', 'admins', 'family', 'media-users', 'mediators']) {
      await create(t, { id, name: id });
      t.clock.advance(1000);
    }
    const first = await t.admin('GET', `${G}?limit=2`);
    expect(first.statusCode).toBe(200);
    expect(first.json().groups.map((g: { id: string }) => g.id)).toEqual(['media', 'admins']);
    const second = (await t.admin('GET', `${G}?limit=2&cursor=${first.json().nextCursor}`)).json();
    expect(second.groups.map((g: { id: string }) => g.id)).toEqual(['family', 'media-users']);
    const third = (await t.admin('GET', `${G}?limit=2&cursor=${second.nextCursor}`)).json();
    expect(third).toEqual({ groups: [expect.objectContaining({ id: 'mediators' })], nextCursor: null });

    const q = (await t.admin('GET', `${G}?q=MEDIA&limit=2`)).json();
    expect(q.groups.map((g: { id: string }) => g.id)).toEqual(['media', 'media-users']);
    const q2 = (await t.admin('GET', `${G}?q=MEDIA&limit=2&cursor=${q.nextCursor}`)).json();
    expect(q2).toEqual({ groups: [expect.objectContaining({ id: 'mediators' })], nextCursor: null });
    expect((await t.admin('GET', `${G}?q=zz`)).json()).toEqual({ groups: [], nextCursor: null });
    expectProblem(await t.admin('GET', `${G}?cursor=bogus`), 400, 'invalid_cursor');
  });

  it('is for the admin token only: an API key gets 403 insufficient_scope', async () => {
    const t = await makeApp();
    await createApplication(t);
    const key = await insertApiKey(t.db, 'notes', ['users:read', 'users:write']);
    const res = await t.admin('GET', G, undefined, { authorization: `Bearer ${key}` });
    expectProblem(res, 403, 'insufficient_scope');
    expectProblem(await t.admin('PUT', `${G}/x/members/y`, undefined, { authorization: `Bearer ${key}` }), 403, 'insufficient_scope');
  });
});

describe('group members', () => {
  it('puts people in and takes them out idempotently (204), lists members in pages, shows a person their groups', async () => {
    const t = await makeApp({ clock: T0 });
    await create(t, { id: 'family', name: 'Family' });
    await create(t, { id: 'admins', name: 'Admins' });
    const ann = await addPerson(t, 'ann@example.com', 'Ann');
    const bob = await addPerson(t, 'Bob@example.com');
    const cy = await addPerson(t, 'cy@example.com');
    for (const p of [ann, bob, cy]) {
      const res = await t.admin('PUT', `${G}/family/members/${p.id}`);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
    }
    // Again: 204, and nothing written twice.
    expect((await t.admin('PUT', `${G}/family/members/${ann.id}`)).statusCode).toBe(204);
    expect((await t.admin('PUT', `${G}/admins/members/${ann.id}`)).statusCode).toBe(204);

    const page1 = (await t.admin('GET', `${G}/family/members?limit=2`)).json();
    expect(page1).toEqual({
      members: [
        { id: ann.id, email: 'ann@example.com', username: 'ann', name: 'Ann', addedAt: T0.toISOString() },
        { id: bob.id, email: 'bob@example.com', username: 'bob', name: null, addedAt: T0.toISOString() },
      ],
      nextCursor: expect.any(String),
    });
    const page2 = (await t.admin('GET', `${G}/family/members?limit=2&cursor=${page1.nextCursor}`)).json();
    expect(page2).toEqual({ members: [{ id: cy.id, email: 'cy@example.com', username: 'cy', name: null, addedAt: T0.toISOString() }], nextCursor: null });

    const person = (await t.admin('GET', `/api/admin/people/${ann.id}`)).json();
    expect(person.groups).toEqual([{ id: 'admins', name: 'Admins' }, { id: 'family', name: 'Family' }]);

    expect((await t.admin('DELETE', `${G}/family/members/${bob.id}`)).statusCode).toBe(204);
    expect((await t.admin('DELETE', `${G}/family/members/${bob.id}`)).statusCode).toBe(204);
    expect((await t.admin('GET', `${G}/family/members`)).json().members.map((m: { id: string }) => m.id)).toEqual([ann.id, cy.id]);
    expect((await auditOf(t, 'family')).map((e) => [e.action, e.details])).toEqual([
      ['group.created', { name: 'Family' }],
      ['group.member_added', { userId: ann.id }],
      ['group.member_added', { userId: bob.id }],
      ['group.member_added', { userId: cy.id }],
      ['group.member_removed', { userId: bob.id }],
    ]);

    expect(expectProblem(await t.admin('PUT', `${G}/family/members/usr_nope`), 404, 'person_not_found').detail).toBe('There is no person with id "usr_nope".');
    expectProblem(await t.admin('DELETE', `${G}/family/members/usr_nope`), 404, 'person_not_found');
    expectValidation(await t.admin('PUT', `${G}/family/members/${ann.id}?x=1`), ['querystring.x']);
  });
});

describe('limits', () => {
  it('keeps at most 1,000 groups (409 group_limit_reached) and a person in at most 200 (409 person_group_limit_reached)', async () => {
    const t = await makeApp({ clock: T0 });
    const rows = Array.from({ length: 999 }, (_, i) => ({ id: `g${String(i).padStart(4, '0')}`, name: `Group ${i}`, createdAt: T0, updatedAt: T0 }));
    for (let i = 0; i < rows.length; i += 200) await exec(t.db.insert(groups).values(rows.slice(i, i + 200)));
    expect((await t.admin('POST', G, { id: 'last', name: 'The thousandth' })).statusCode).toBe(201);
    const over = expectProblem(await t.admin('POST', G, { id: 'one-more', name: 'One more' }), 409, 'group_limit_reached');
    expect(over.detail).toBe('There are already 1,000 groups, the most Gatehouse keeps; delete one first.');

    const ann = await addPerson(t, 'ann@example.com');
    await exec(t.db.insert(groupMembers).values(rows.slice(0, 200).map((g) => ({ groupId: g.id, personId: ann.id, addedAt: T0 }))));
    const full = expectProblem(await t.admin('PUT', `${G}/last/members/${ann.id}`), 409, 'person_group_limit_reached');
    expect(full.detail).toBe('ann@example.com is already in 200 groups, the most a person may be in; remove them from one first.');
    // Already a member: still 204 (idempotent), whatever the limit says.
    expect((await t.admin('PUT', `${G}/g0000/members/${ann.id}`)).statusCode).toBe(204);
    expect((await t.admin('DELETE', `${G}/g0000/members/${ann.id}`)).statusCode).toBe(204);
    expect((await t.admin('PUT', `${G}/last/members/${ann.id}`)).statusCode).toBe(204);
  });
});

describe('deleting a group', () => {
  it('removes it at once and its members in the purge, frees the id afterwards, and is refused while a setting names it', async () => {
    const t = await makeApp({ clock: T0 });
    await createApplication(t, { name: 'Grafana', id: 'grafana', audience: 'https://grafana.example.com' });
    await create(t, { id: 'admins', name: 'Admins' });
    const people_ = [];
    for (let i = 0; i < 30; i++) people_.push(await addPerson(t, `p${i}@example.com`));
    for (const p of people_) expect((await t.admin('PUT', `${G}/admins/members/${p.id}`)).statusCode).toBe(204);

    // A setting that names groups (the claims' and forward auth's register theirs in references.ts):
    // here the application's post-logout redirect URIs stand in for such a list.
    const reference = { field: 'postLogoutRedirectUris', column: applications.postLogoutRedirectUris, groupsNamed: (v: unknown) => (v as string[] | null) ?? [] };
    await exec(t.db.update(applications).set({ postLogoutRedirectUris: ['admins'] }).where(eq(applications.id, 'grafana')));
    expect(await groupReferences(t.db, 'admins', [reference])).toEqual([{ applicationId: 'grafana', applicationName: 'Grafana', field: 'postLogoutRedirectUris' }]);
    expect(await groupReferences(t.db, 'family', [reference])).toEqual([]);
    GROUP_REFERENCES.push(reference);
    try {
      const refused = expectProblem(await t.admin('DELETE', `${G}/admins`), 409, 'group_in_use');
      expect(refused.detail).toBe('The group "admins" is named by Grafana (postLogoutRedirectUris); remove it there first.');
      expect(refused.errors).toEqual([{ path: 'applications.grafana.postLogoutRedirectUris', message: 'names the group "admins"' }]);
      expect((await t.admin('GET', `${G}/admins`)).statusCode).toBe(200);
    } finally {
      GROUP_REFERENCES.splice(GROUP_REFERENCES.indexOf(reference), 1);
    }

    const res = await t.admin('DELETE', `${G}/admins`);
    expect(res.statusCode).toBe(204);
    expectProblem(await t.admin('GET', `${G}/admins`), 404, 'group_not_found');
    expect((await t.admin('GET', `/api/admin/people/${people_[0]!.id}`)).json().groups).toEqual([]);
    // Thirty rows go within the request's inline budget; then the id is free again, with no members.
    await eventually(async () => expect(await many(t.db.select().from(groupMembers))).toEqual([]));
    const again = await t.admin('POST', G, { id: 'admins', name: 'Admins again' });
    expect(again.statusCode).toBe(201);
    expect((await t.admin('GET', `${G}/admins/members`)).json()).toEqual({ members: [], nextCursor: null });
    expect((await auditOf(t, 'admins')).map((e) => e.action)).toEqual(['group.created', ...people_.map(() => 'group.member_added'), 'group.deleted', 'group.created']);
  });

  it('answers 409 group_exists while a deleted group of the same id is still being purged', async () => {
    const t = await makeApp({ clock: T0 });
    await create(t, { id: 'big', name: 'Big' });
    // A purge job left unfinished (as after a crash, before its batches ran).
    await exec(t.db.insert(groups).values({ id: 'gone', name: 'Gone', createdAt: T0, updatedAt: T0 }));
    const { purgeJobs } = await import('../../server/db/schema.js');
    await exec(t.db.insert(purgeJobs).values({ kind: 'group', target: 'gone', params: {}, actor: 'admin', requestedAt: T0, removed: {} }));
    await exec(t.db.delete(groups).where(eq(groups.id, 'gone')));
    expectProblem(await t.admin('POST', G, { id: 'gone', name: 'Gone' }), 409, 'group_exists');
  });
});

describe('webhooks', () => {
  it('sends group.* to every application with a webhook, and member events only to the person’s applications', async () => {
    const t = await makeApp({ clock: T0, config: { webhookAllowLoopback: true } });
    const hook = (id: string) => appBody({ id, name: id, audience: `https://${id}.example.com`, webhookUrl: `https://${id}.example.com/hook` });
    for (const id of ['crm', 'wiki']) expect((await t.admin('POST', '/api/admin/applications', hook(id))).statusCode).toBe(201);
    expect((await t.admin('POST', '/api/admin/applications', appBody({ id: 'quiet', audience: 'https://quiet.example.com' }))).statusCode).toBe(201);
    const { person: ann } = await addAppMember(t, 'wiki', 'ann@example.com');
    await addAppMember(t, 'quiet', 'ann@example.com');

    await create(t, { id: 'family', name: 'Family' });
    expect((await t.admin('PATCH', `${G}/family`, { name: 'Family & friends' })).statusCode).toBe(200);
    expect((await t.admin('PUT', `${G}/family/members/${ann.id}`)).statusCode).toBe(204);
    expect((await t.admin('DELETE', `${G}/family/members/${ann.id}`)).statusCode).toBe(204);
    expect((await t.admin('DELETE', `${G}/family`)).statusCode).toBe(204);
    const member = { groupId: 'family', userId: ann.id, email: 'ann@example.com', username: 'ann' };
    expect(await events(t)).toEqual([
      { app: 'crm', type: 'group.created', data: { id: 'family', name: 'Family', description: null } },
      { app: 'wiki', type: 'group.created', data: { id: 'family', name: 'Family', description: null } },
      { app: 'crm', type: 'group.updated', data: { id: 'family', name: 'Family & friends', description: null, changed: ['name'] } },
      { app: 'wiki', type: 'group.updated', data: { id: 'family', name: 'Family & friends', description: null, changed: ['name'] } },
      { app: 'wiki', type: 'group.member_added', data: member },
      { app: 'wiki', type: 'group.member_removed', data: member },
      { app: 'crm', type: 'group.deleted', data: { id: 'family' } },
      { app: 'wiki', type: 'group.deleted', data: { id: 'family' } },
    ]);
  });

  it('delivers them, signed, to a real receiver', async () => {
    const receiver: Receiver = await startReceiver();
    closers.push(() => receiver.close());
    const t = await makeApp({ deps: { startWorkers: true }, config: { webhookAllowLoopback: true, env: { GATEHOUSE_WEBHOOK_POLL_MS: '50' } } });
    expect((await t.admin('POST', '/api/admin/applications', appBody({ webhookUrl: receiver.url }))).statusCode).toBe(201);
    await create(t, { id: 'media', name: 'Media' });
    const [req] = await receiver.waitFor(1);
    expect(req!.headers['webhook-signature']).toMatch(/^v1,/);
    expect(JSON.parse(req!.body)).toMatchObject({ type: 'group.created', applicationId: 'notes', data: { id: 'media', name: 'Media', description: null } });
  });
});

describe('invitations with groups', () => {
  it('checks the groups (400 naming each unknown one; admin token only), and accepting joins them', async () => {
    const t = await makeApp({ clock: T0 });
    await createApplication(t, { authPolicy: { signup_policy: 'invite_only' } });
    await create(t, { id: 'family', name: 'Family' });
    await create(t, { id: 'media', name: 'Media' });
    const INV = '/api/admin/applications/notes/invitations';
    const unknown = expectValidation(await t.admin('POST', INV, { emails: ['new@example.com'], groups: ['family', 'nope', 'zz'] }), ['body.groups.1', 'body.groups.2']);
    expect(unknown.errors).toEqual([
      { path: 'body.groups.1', message: 'there is no group "nope"' },
      { path: 'body.groups.2', message: 'there is no group "zz"' },
    ]);
    const key = await insertApiKey(t.db, 'notes', ['invitations:write']);
    const byKey = expectProblem(await t.admin('POST', INV, { emails: ['new@example.com'], groups: ['family'] }, { authorization: `Bearer ${key}` }), 403, 'insufficient_scope');
    expect(byKey.detail).toBe('An API key may not put invited people in directory groups; that needs the admin token.');
    // Without groups a key still invites.
    expect((await t.admin('POST', INV, { emails: ['other@example.com'] }, { authorization: `Bearer ${key}` })).statusCode).toBe(201);

    const res = await t.admin('POST', INV, { emails: ['new@example.com'], groups: ['family', 'media'] });
    expect(res.statusCode).toBe(201);
    const invitation = res.json().invitations[0];
    expect(invitation.groups).toEqual(['family', 'media']);
    // A group deleted meanwhile is skipped.
    expect((await t.admin('DELETE', `${G}/media`)).statusCode).toBe(204);
    const token = invitation.acceptUrl.split('/invite/')[1];
    const joined = await signUp(t, { email: 'new@example.com', invitationToken: token });
    expect(joined.statusCode).toBe(201);
    const userId = joined.json().user.id;
    expect((await t.admin('GET', `/api/admin/people/${userId}`)).json().groups).toEqual([{ id: 'family', name: 'Family' }]);
    expect((await auditOf(t, invitation.id)).find((e) => e.action === 'invitation.accepted')?.details).toMatchObject({ groups: ['family'] });
    expect((await auditOf(t, 'family')).at(-1)).toEqual({ actor: `person:${userId}`, action: 'group.member_added', details: { userId } });
  });

  it('an invitation delivered by e-mail verifies the address on acceptance; one shown only to the administrator does not', async () => {
    const smtp = await startSmtp();
    closers.push(() => smtp.close());
    const t = await makeApp({ clock: T0, config: { smtpUrl: smtp.url, smtpFrom: 'Gatehouse <noreply@gatehouse.test>' } });
    await createApplication(t, { authPolicy: { signup_policy: 'invite_only' } });
    const res = await t.admin('POST', '/api/admin/applications/notes/invitations', { emails: ['mailed@example.com'] });
    expect(res.json().invitations[0]).toMatchObject({ emailSent: true, emailError: null });
    await smtp.waitFor(1);
    const token = res.json().invitations[0].acceptUrl.split('/invite/')[1];
    const mailed = await signUp(t, { email: 'mailed@example.com', invitationToken: token });
    expect(mailed.statusCode).toBe(201);
    expect(mailed.json().user.emailVerified).toBe(true);

    const shown = await insertInvitation(t, 'notes', 'shown@example.com', 'member', { emailSent: false });
    const linkOnly = await signUp(t, { email: 'shown@example.com', invitationToken: shown });
    expect(linkOnly.statusCode).toBe(201);
    expect(linkOnly.json().user.emailVerified).toBe(false);

  });
});

describe('query plans', () => {
  it('serves every statement of groups and memberships from an index', async () => {
    const t = await makeApp();
    const sqlite = engineOf(t.db) === 'sqlite';
    const check = async (statement: { toSQL(): { sql: string; params: unknown[] } }, sqliteDetail: RegExp, postgresIndex: string) => {
      const { sql, params } = statement.toSQL();
      const plan = await queryPlan(t.db, sql.replace(/\$\d+/g, '?'), ...params);
      if (sqlite) expect(plan, sql).toMatch(sqliteDetail);
      else expect(usesPostgresIndex(plan, postgresIndex), `${sql}\n${plan}`).toBe(true);
      expect(plan).not.toMatch(/\bSCAN (group_members|people)\b(?! USING)/);
    };
    // A person's groups (the claims' read), their count (the limit), one membership.
    await check(t.db.select({ id: groups.id }).from(groupMembers).innerJoin(groups, eq(groups.id, groupMembers.groupId)).where(eq(groupMembers.personId, 'usr_x')).orderBy(asc(groupMembers.groupId)),
      /SEARCH group_members USING COVERING INDEX group_members_person_idx \(person_id=\?\)/, 'group_members_person_idx');
    await check(t.db.select({ g: groupMembers.groupId }).from(groupMembers).where(and(eq(groupMembers.groupId, 'g'), eq(groupMembers.personId, 'usr_x'))),
      /SEARCH group_members USING (COVERING |PRIMARY KEY )?INDEX sqlite_autoindex_group_members_1 \(group_id=\? AND person_id=\?\)/, '(?:group_members_group_id_person_id_pk|group_members_person_idx)');
    // A group's members, keyset by person id.
    await check(t.db.select({ p: people.email }).from(groupMembers).innerJoin(people, eq(people.id, groupMembers.personId)).where(eq(groupMembers.groupId, 'g')).orderBy(asc(groupMembers.personId)).limit(51),
      /SEARCH group_members USING (COVERING )?INDEX sqlite_autoindex_group_members_1 \(group_id=\?\)/, 'group_members_group_id_person_id_pk');
    // The list: by creation (keyset), and by id prefix.
    await check(t.db.select().from(groups).where(sql`(${groups.createdAt}, ${groups.id}) > (${1}, ${'a'})`).orderBy(asc(groups.createdAt), asc(groups.id)).limit(51),
      /SEARCH groups USING INDEX groups_created_idx \(\(created_at,id\)>\(\?,\?\)\)/, 'groups_created_idx');
    await check(t.db.select().from(groups).where(and(gte(groups.id, 'me'), lt(groups.id, 'me\uffff'))).orderBy(asc(groups.id)).limit(51),
      /SEARCH groups USING INDEX sqlite_autoindex_groups_1 \(id>\? AND id<\?\)/, 'groups_pkey');
    // A person by username (the clash check and the backfill's look-ups).
    await check(t.db.select({ u: people.username }).from(people).where(eq(people.username, 'ann')), /SEARCH people USING COVERING INDEX people_username_uq \(username=\?\)/, 'people_username_uq');
    // The applications a directory event goes to.
    await check(t.db.select({ id: applications.id }).from(applications).where(isNotNull(applications.webhookUrl)).orderBy(asc(applications.webhookUrl)),
      /SEARCH applications USING (COVERING )?INDEX applications_webhook_idx \(webhook_url>\?\)/, 'applications_webhook_idx');
  });
});
