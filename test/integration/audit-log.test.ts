import { describe, expect, it } from 'vitest';
import { appBody, makeApp } from '../helpers/app.js';

const LOG = '/api/admin/audit-log';

describe('GET /api/admin/audit-log', () => {
  it('lists entries newest first with filters and cursor pagination', async () => {
    const t = await makeApp({ clock: new Date('2026-03-01T10:00:00Z') });
    await t.admin('POST', '/api/admin/applications', appBody());
    t.clock.advance(1000);
    await t.admin('POST', '/api/admin/applications', appBody({ id: 'other', audience: 'https://other.example.com' }));
    t.clock.advance(1000);
    await t.admin('POST', '/api/admin/applications/notes/invitations', { emails: ['a@example.com', 'b@example.com'] });
    t.clock.advance(1000);
    const key = (await t.admin('POST', '/api/admin/applications/other/api-keys', { name: 'k', scopes: ['invitations:write'] })).json();
    t.clock.advance(1000);
    await t.admin('POST', '/api/admin/applications/other/invitations', { emails: ['c@example.com'] }, { authorization: `Bearer ${key.key}` });

    const all = await t.admin('GET', LOG);
    expect(all.statusCode).toBe(200);
    const entries = all.json().entries;
    expect(entries.map((e: { action: string }) => e.action)).toEqual([
      'invitation.created', 'api_key.created', 'invitation.created', 'invitation.created', 'application.created', 'application.created',
    ]);
    expect(entries[0]).toEqual({
      id: expect.stringMatching(/^aud_/),
      at: '2026-03-01T10:00:04.000Z',
      actor: `api_key:${key.id}`,
      action: 'invitation.created',
      applicationId: 'other',
      target: expect.stringMatching(/^inv_/),
      details: { email: 'c@example.com', role: 'member' },
    });
    expect(all.json().nextCursor).toBeNull();

    const ids = async (qs: string) => (await t.admin('GET', `${LOG}?${qs}`)).json().entries.map((e: { action: string; applicationId: string }) => `${e.applicationId}:${e.action}`);
    expect(await ids('applicationId=notes')).toEqual(['notes:invitation.created', 'notes:invitation.created', 'notes:application.created']);
    expect(await ids('action=application.created')).toEqual(['other:application.created', 'notes:application.created']);
    expect(await ids(`actor=api_key:${key.id}`)).toEqual(['other:invitation.created']);
    expect(await ids('applicationId=other&actor=admin')).toEqual(['other:api_key.created', 'other:application.created']);
    expect(await ids('action=nothing')).toEqual([]);

    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { entries: { id: string }[]; nextCursor: string | null } = (await t.admin('GET', `${LOG}?limit=4${cursor ? `&cursor=${cursor}` : ''}`)).json();
      walked.push(...page.entries.map((e) => e.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(walked).toEqual(entries.map((e: { id: string }) => e.id));
  });

  it('validates its query and needs the admin token', async () => {
    const t = await makeApp();
    const extra = await t.admin('GET', `${LOG}?who=me`);
    expect(extra.statusCode).toBe(400);
    expect(extra.json().code).toBe('validation_failed');
    const limit = await t.admin('GET', `${LOG}?limit=500`);
    expect(limit.statusCode).toBe(400);
    const cursor = await t.admin('GET', `${LOG}?cursor=abc`);
    expect(cursor.statusCode).toBe(400);
    expect(cursor.json().code).toBe('invalid_cursor');
    const anon = await t.app.inject({ method: 'GET', url: LOG });
    expect(anon.statusCode).toBe(401);
    expect(anon.headers['www-authenticate']).toBe('Bearer');
  });
});
