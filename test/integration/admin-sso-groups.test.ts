/** SSO groups admin API (spec §4.2, DESIGN §4.8): create, list, get, rename, delete, add/move/remove apps. */
import { describe, expect, it } from 'vitest';
import { appBody, makeApp, type TestApp } from '../helpers/app.js';
import { expectProblem, expectValidation } from '../helpers/problem.js';
import { auditLog } from '../../server/db/schema.js';
import { many } from '../../server/db/store.js';

const T0 = new Date('2026-03-01T10:00:00.000Z');

async function app(t: TestApp, id: string) {
  const res = await t.admin('POST', '/api/admin/applications', appBody({ id, audience: `aud-${id}` }));
  expect(res.statusCode, res.body).toBe(201);
}

async function group(t: TestApp, id: string, name = id.toUpperCase()) {
  const res = await t.admin('POST', '/api/admin/sso-groups', { id, name });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

describe('POST /api/admin/sso-groups', () => {
  it('creates a group: 201, Location and the record', async () => {
    const t = await makeApp({ clock: T0 });
    const res = await t.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: 'Office suite' });
    expect(res.statusCode).toBe(201);
    expect(res.headers.location).toBe('/api/admin/sso-groups/suite');
    expect(res.json()).toEqual({ id: 'suite', name: 'Office suite', applicationIds: [], createdAt: T0.toISOString() });
    expect(await many(t.db.select().from(auditLog))).toMatchObject([{ actor: 'admin', action: 'sso_group.created', target: 'suite' }]);
  });

  it('answers 409 sso_group_exists and 400 for bad ids, names and unknown fields', async () => {
    const t = await makeApp();
    await group(t, 'suite');
    expectProblem(await t.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: 'Again' }), 409, 'sso_group_exists');
    expectValidation(await t.admin('POST', '/api/admin/sso-groups', { id: 'Bad Id', name: 'x' }), ['body.id']);
    expectValidation(await t.admin('POST', '/api/admin/sso-groups', { id: 'g', name: 'x' }), ['body.id']);
    expectValidation(await t.admin('POST', '/api/admin/sso-groups', { id: 'ok-id', name: '' }), ['body.name']);
    expectValidation(await t.admin('POST', '/api/admin/sso-groups', { id: 'ok-id', name: 'n'.repeat(201) }), ['body.name']);
    expectValidation(await t.admin('POST', '/api/admin/sso-groups', { name: 'x' }), ['body.id']);
    expectValidation(await t.admin('POST', '/api/admin/sso-groups', { id: 'ok-id', name: 'x', applicationIds: [] }), ['body.applicationIds']);
  });
});

describe('GET /api/admin/sso-groups', () => {
  it('lists groups with their applications, paged by limit and cursor in creation order', async () => {
    const t = await makeApp({ clock: T0 });
    await group(t, 'g-b');
    await group(t, 'g-a'); // same time as g-b: id breaks the tie
    t.clock.advance(1000);
    await group(t, 'g-c');
    await app(t, 'notes');
    await app(t, 'tasks');
    await t.admin('POST', '/api/admin/sso-groups/g-c/apps', { appId: 'tasks' });
    await t.admin('POST', '/api/admin/sso-groups/g-c/apps', { appId: 'notes' });

    const all = await t.admin('GET', '/api/admin/sso-groups');
    expect(all.statusCode).toBe(200);
    expect(all.json()).toEqual({
      ssoGroups: [
        { id: 'g-a', name: 'G-A', applicationIds: [], createdAt: T0.toISOString() },
        { id: 'g-b', name: 'G-B', applicationIds: [], createdAt: T0.toISOString() },
        // Applications in their own creation order.
        { id: 'g-c', name: 'G-C', applicationIds: ['notes', 'tasks'], createdAt: new Date(T0.getTime() + 1000).toISOString() },
      ],
      nextCursor: null,
    });

    const first = (await t.admin('GET', '/api/admin/sso-groups?limit=2')).json();
    expect(first.ssoGroups.map((g: { id: string }) => g.id)).toEqual(['g-a', 'g-b']);
    const second = (await t.admin('GET', `/api/admin/sso-groups?limit=2&cursor=${first.nextCursor}`)).json();
    expect(second).toMatchObject({ ssoGroups: [{ id: 'g-c', applicationIds: ['notes', 'tasks'] }], nextCursor: null });
  });

  it('answers 200 with an empty list, and 400 for a bad limit or cursor', async () => {
    const t = await makeApp();
    expect((await t.admin('GET', '/api/admin/sso-groups')).json()).toEqual({ ssoGroups: [], nextCursor: null });
    expectValidation(await t.admin('GET', '/api/admin/sso-groups?limit=201'), ['querystring.limit']);
    expectValidation(await t.admin('GET', '/api/admin/sso-groups?limit=0'), ['querystring.limit']);
    expectProblem(await t.admin('GET', '/api/admin/sso-groups?cursor=nonsense'), 400, 'invalid_cursor');
  });
});

describe('GET, PATCH and DELETE /api/admin/sso-groups/:id', () => {
  it('gets and renames a group; 404 sso_group_not_found for unknown ones', async () => {
    const t = await makeApp({ clock: T0 });
    await group(t, 'suite', 'Suite');
    expect((await t.admin('GET', '/api/admin/sso-groups/suite')).json()).toEqual({ id: 'suite', name: 'Suite', applicationIds: [], createdAt: T0.toISOString() });

    const renamed = await t.admin('PATCH', '/api/admin/sso-groups/suite', { name: 'Office' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toEqual({ id: 'suite', name: 'Office', applicationIds: [], createdAt: T0.toISOString() });
    expect((await t.admin('GET', '/api/admin/sso-groups/suite')).json().name).toBe('Office');

    expectValidation(await t.admin('PATCH', '/api/admin/sso-groups/suite', { name: '' }), ['body.name']);
    expectValidation(await t.admin('PATCH', '/api/admin/sso-groups/suite', {}), ['body.name']);
    expectValidation(await t.admin('PATCH', '/api/admin/sso-groups/suite', { name: 'x', id: 'other' }), ['body.id']);
    for (const [method, body] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      const res = await t.admin(method, '/api/admin/sso-groups/ghost', body);
      expect(expectProblem(res, 404, 'sso_group_not_found').detail).toBe('There is no SSO group with id "ghost".');
    }
  });

  it('deletes a group (204); its applications stay, standing alone', async () => {
    const t = await makeApp();
    await group(t, 'suite');
    await app(t, 'notes');
    await app(t, 'alone');
    await app(t, 'blog');
    for (const appId of ['notes', 'blog']) await t.admin('POST', '/api/admin/sso-groups/suite/apps', { appId });
    const res = await t.admin('DELETE', '/api/admin/sso-groups/suite');
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    // The audit entry names the applications it detached.
    expect((await t.admin('GET', '/api/admin/audit-log?action=sso_group.deleted')).json().entries[0]).toMatchObject({
      target: 'suite', details: { applicationsDetached: ['blog', 'notes'] },
    });
    expectProblem(await t.admin('GET', '/api/admin/sso-groups/suite'), 404, 'sso_group_not_found');
    const notes = await t.admin('GET', '/api/admin/applications/notes');
    expect(notes.statusCode).toBe(200);
    expect(notes.json().ssoGroupId).toBeNull();
    expectProblem(await t.admin('DELETE', '/api/admin/sso-groups/suite'), 404, 'sso_group_not_found');
    // The id is free again.
    await group(t, 'suite');
  });
});

describe('POST /api/admin/sso-groups/:id/apps and DELETE .../apps/:appId', () => {
  it('adds an application, moves it between groups, and removes it', async () => {
    const t = await makeApp();
    await group(t, 'g1');
    await group(t, 'g2');
    await app(t, 'notes');
    await app(t, 'tasks');

    const added = await t.admin('POST', '/api/admin/sso-groups/g1/apps', { appId: 'notes' });
    expect(added.statusCode).toBe(200);
    expect(added.json()).toMatchObject({ id: 'g1', applicationIds: ['notes'] });
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().ssoGroupId).toBe('g1');
    // Adding again is idempotent.
    expect((await t.admin('POST', '/api/admin/sso-groups/g1/apps', { appId: 'notes' })).json().applicationIds).toEqual(['notes']);
    await t.admin('POST', '/api/admin/sso-groups/g1/apps', { appId: 'tasks' });

    // An application is in at most one group: adding it to g2 moves it.
    const moved = await t.admin('POST', '/api/admin/sso-groups/g2/apps', { appId: 'notes' });
    expect(moved.statusCode).toBe(200);
    expect(moved.json()).toMatchObject({ id: 'g2', applicationIds: ['notes'] });
    expect((await t.admin('GET', '/api/admin/sso-groups/g1')).json().applicationIds).toEqual(['tasks']);
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().ssoGroupId).toBe('g2');
    const movedAudit = (await many(t.db.select().from(auditLog))).filter((a) => a.action === 'sso_group.application_added');
    expect(movedAudit.at(-1)).toMatchObject({ applicationId: 'notes', target: 'g2', details: { movedFrom: 'g1' } });

    // Removing from the wrong group is a 404; from the right one a 204.
    expectProblem(await t.admin('DELETE', '/api/admin/sso-groups/g1/apps/notes'), 404, 'application_not_in_group');
    const removed = await t.admin('DELETE', '/api/admin/sso-groups/g2/apps/notes');
    expect(removed.statusCode).toBe(204);
    expect(removed.body).toBe('');
    expect((await t.admin('GET', '/api/admin/sso-groups/g2')).json().applicationIds).toEqual([]);
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().ssoGroupId).toBeNull();
    expectProblem(await t.admin('DELETE', '/api/admin/sso-groups/g2/apps/notes'), 404, 'application_not_in_group');
  });

  it('answers 404 for unknown groups or applications and 400 for bad bodies', async () => {
    const t = await makeApp();
    await group(t, 'g1');
    await app(t, 'notes');
    expectProblem(await t.admin('POST', '/api/admin/sso-groups/ghost/apps', { appId: 'notes' }), 404, 'sso_group_not_found');
    expectProblem(await t.admin('POST', '/api/admin/sso-groups/g1/apps', { appId: 'ghost' }), 404, 'application_not_found');
    expectProblem(await t.admin('DELETE', '/api/admin/sso-groups/ghost/apps/notes'), 404, 'sso_group_not_found');
    expectProblem(await t.admin('DELETE', '/api/admin/sso-groups/g1/apps/ghost'), 404, 'application_not_found');
    expectValidation(await t.admin('POST', '/api/admin/sso-groups/g1/apps', {}), ['body.appId']);
    expectValidation(await t.admin('POST', '/api/admin/sso-groups/g1/apps', { appId: '' }), ['body.appId']);
    expectValidation(await t.admin('POST', '/api/admin/sso-groups/g1/apps', { appId: 42 }), ['body.appId']);
    expectValidation(await t.admin('POST', '/api/admin/sso-groups/g1/apps', { appId: 'notes', applicationId: 'notes' }), ['body.applicationId']);
    expect((await t.admin('GET', '/api/admin/sso-groups/g1')).json().applicationIds).toEqual([]);
  });
});
