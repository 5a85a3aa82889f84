import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { invitations, webhookDeliveries } from '../../server/db/schema.js';
import { sha256 } from '../../server/util/crypto.js';
import { appBody, makeApp, type TestApp } from '../helpers/app.js';
import { addMember } from '../helpers/members.js';
import { one, many } from '../../server/db/store.js';

const INV = '/api/admin/applications/notes/invitations';
const DAY = 24 * 3600 * 1000;

async function withApp(): Promise<TestApp> {
  const t = await makeApp({ clock: new Date('2026-03-01T10:00:00Z') });
  expect((await t.admin('POST', '/api/admin/applications', appBody({ webhookUrl: 'https://hooks.example.com/in' }))).statusCode).toBe(201);
  return t;
}

describe('invitations admin API', () => {
  it('invites addresses, skipping members and people already invited; links shown once, stored hashed', async () => {
    const t = await withApp();
    (await addMember(t, 'notes', 'member@example.com'));
    const first = await t.admin('POST', INV, { emails: ['Ann@Example.com', ' bo@example.com '], role: 'admin', message: 'Welcome aboard' });
    expect(first.statusCode).toBe(201);
    expect(first.headers.location).toBe('/api/admin/applications/notes/invitations');
    const body = first.json();
    expect(body.skipped).toEqual([]);
    expect(body.invitations).toHaveLength(2);
    const ann = body.invitations[0];
    expect(ann).toEqual({
      id: expect.stringMatching(/^inv_/),
      email: 'ann@example.com',
      role: 'admin',
      message: 'Welcome aboard',
      status: 'pending',
      createdAt: '2026-03-01T10:00:00.000Z',
      expiresAt: '2026-03-08T10:00:00.000Z',
      acceptedAt: null,
      revokedAt: null,
      emailSent: false,
      emailError: null,
      groups: [],
      acceptUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:8787\/invite\/ghi_[A-Za-z0-9_-]{43}$/),
    });
    const token = ann.acceptUrl.split('/invite/')[1];
    const row = (await one(t.db.select().from(invitations).where(eq(invitations.id, ann.id))))!;
    expect(row.tokenHash).toBe(sha256(token));
    expect(row.invitedBy).toBe('admin');

    const second = await t.admin('POST', INV, { emails: ['ann@example.com', 'member@example.com', 'cy@example.com', 'CY@example.com'] });
    expect(second.statusCode).toBe(201);
    expect(second.json().skipped).toEqual([
      { email: 'ann@example.com', reason: 'already_invited' },
      { email: 'member@example.com', reason: 'already_member' },
    ]);
    expect(second.json().invitations.map((i: { email: string; role: string }) => [i.email, i.role])).toEqual([['cy@example.com', 'member']]);

    const list = (await t.admin('GET', INV)).json();
    expect(list.nextCursor).toBeNull();
    expect(list.invitations.map((i: { email: string }) => i.email)).toEqual(['ann@example.com', 'bo@example.com', 'cy@example.com']);
    expect(list.invitations[0].acceptUrl).toBeUndefined();

    const events = await many(t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.type, 'invitation.created')));
    expect(events).toHaveLength(3);
    expect(events.map((e) => e.payload).join()).not.toContain(token);
    const audit = (await t.admin('GET', '/api/admin/audit-log?action=invitation.created')).json();
    expect(audit.entries).toHaveLength(3);
    expect(JSON.stringify(audit)).not.toContain(token);
  });

  it('names each invalid address and checks the body', async () => {
    const t = await withApp();
    const res = await t.admin('POST', INV, { emails: ['ok@example.com', 'nope', 'two@@x.com'] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      code: 'validation_failed',
      errors: [
        { path: 'body.emails.1', message: '"nope" is not a valid e-mail address' },
        { path: 'body.emails.2', message: '"two@@x.com" is not a valid e-mail address' },
      ],
    });
    expect(await many(t.db.select().from(invitations))).toHaveLength(0);
    const empty = await t.admin('POST', INV, { emails: [] });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().code).toBe('validation_failed');
    const tooMany = await t.admin('POST', INV, { emails: Array.from({ length: 101 }, (_, i) => `p${i}@example.com`) });
    expect(tooMany.statusCode).toBe(400);
    const long = await t.admin('POST', INV, { emails: ['a@example.com'], message: 'x'.repeat(1001) });
    expect(long.statusCode).toBe(400);
    expect(long.json().errors[0].path).toBe('body.message');
    const role = await t.admin('POST', INV, { emails: ['a@example.com'], role: 'owner' });
    expect(role.statusCode).toBe(400);
    const unknown = await t.admin('POST', '/api/admin/applications/nope/invitations', { emails: ['a@example.com'] });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('application_not_found');
    const hundred = await t.admin('POST', INV, { emails: Array.from({ length: 100 }, (_, i) => `p${i}@example.com`) });
    expect(hundred.statusCode).toBe(201);
    expect(hundred.json().invitations).toHaveLength(100);
  });

  it('filters by status, expired derived from expiresAt', async () => {
    const t = await withApp();
    const [a, b, c] = (await t.admin('POST', INV, { emails: ['a@example.com', 'b@example.com', 'c@example.com'] })).json().invitations;
    expect((await t.admin('DELETE', `${INV}/${b.id}`)).statusCode).toBe(204);
    t.clock.advance(3 * DAY);
    const d = (await t.admin('POST', INV, { emails: ['d@example.com'] })).json().invitations[0];
    t.clock.advance(5 * DAY); // a and c (8 days old) expired; d (5 days old) still pending
    const ids = async (status: string) => (await t.admin('GET', `${INV}?status=${status}`)).json().invitations.map((i: { id: string }) => i.id);
    expect(await ids('pending')).toEqual([d.id]);
    expect(await ids('expired')).toEqual([a.id, c.id]);
    expect(await ids('revoked')).toEqual([b.id]);
    expect(await ids('accepted')).toEqual([]);
    const all = (await t.admin('GET', `${INV}?limit=2`)).json();
    expect(all.invitations.map((i: { status: string }) => i.status)).toEqual(['expired', 'revoked']);
    const rest = (await t.admin('GET', `${INV}?limit=2&cursor=${all.nextCursor}`)).json();
    expect(rest.invitations.map((i: { status: string }) => i.status)).toEqual(['expired', 'pending']);
    expect(rest.nextCursor).toBeNull();
    const bad = await t.admin('GET', `${INV}?status=lost`);
    expect(bad.statusCode).toBe(400);
  });

  it('revokes a pending invitation once (204, invitation.revoked); otherwise 409 or 404', async () => {
    const t = await withApp();
    const [a, b] = (await t.admin('POST', INV, { emails: ['a@example.com', 'b@example.com'] })).json().invitations;
    const res = await t.admin('DELETE', `${INV}/${a.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    const again = await t.admin('DELETE', `${INV}/${a.id}`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'invitation_not_pending', detail: 'The invitation is revoked, not pending.' });
    t.clock.advance(8 * DAY);
    const expired = await t.admin('DELETE', `${INV}/${b.id}`);
    expect(expired.statusCode).toBe(409);
    expect(expired.json().code).toBe('invitation_not_pending');
    const missing = await t.admin('DELETE', `${INV}/inv_nope`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('invitation_not_found');
    const record = (await t.admin('GET', `${INV}?status=revoked`)).json().invitations[0];
    expect(record).toMatchObject({ id: a.id, status: 'revoked', revokedAt: '2026-03-01T10:00:00.000Z' });
    const event = (await one(t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.type, 'invitation.revoked'))))!;
    expect(JSON.parse(event.payload).data).toMatchObject({ id: a.id, email: 'a@example.com' });
  });

  it('resend issues a new link and expiry for pending or expired invitations; 409 when revoked', async () => {
    const t = await withApp();
    const [a, b] = (await t.admin('POST', INV, { emails: ['a@example.com', 'b@example.com'] })).json().invitations;
    t.clock.advance(10 * DAY);
    const res = await t.admin('POST', `${INV}/${a.id}/resend`);
    expect(res.statusCode).toBe(200);
    const resent = res.json();
    expect(resent).toMatchObject({ id: a.id, status: 'pending', expiresAt: '2026-03-18T10:00:00.000Z', emailSent: false });
    expect(resent.acceptUrl).not.toBe(a.acceptUrl);
    const row = (await one(t.db.select().from(invitations).where(eq(invitations.id, a.id))))!;
    expect(row.tokenHash).toBe(sha256(resent.acceptUrl.split('/invite/')[1]));
    expect(row.tokenHash).not.toBe(sha256(a.acceptUrl.split('/invite/')[1]));

    await t.admin('DELETE', `${INV}/${a.id}`);
    const revoked = await t.admin('POST', `${INV}/${a.id}/resend`);
    expect(revoked.statusCode).toBe(409);
    expect(revoked.json().code).toBe('invitation_not_pending');
    const missing = await t.admin('POST', `${INV}/inv_nope/resend`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('invitation_not_found');
    expect(b.id).toBeDefined();
  });

  it('resend refuses an expired invitation whose address was invited again or has joined since', async () => {
    const t = await withApp();
    const [old] = (await t.admin('POST', INV, { emails: ['c@example.com'] })).json().invitations;
    const [joiner] = (await t.admin('POST', INV, { emails: ['d@example.com'] })).json().invitations;
    t.clock.advance(8 * DAY);
    const [newer] = (await t.admin('POST', INV, { emails: ['c@example.com'] })).json().invitations;
    expect(newer.id).not.toBe(old.id);
    const twice = await t.admin('POST', `${INV}/${old.id}/resend`);
    expect(twice.statusCode).toBe(409);
    expect(twice.json()).toMatchObject({ code: 'already_invited', detail: 'c@example.com has a newer pending invitation to this application.' });
    (await addMember(t, 'notes', 'd@example.com'));
    const member = await t.admin('POST', `${INV}/${joiner.id}/resend`);
    expect(member.statusCode).toBe(409);
    expect(member.json()).toMatchObject({ code: 'already_member', detail: 'd@example.com is already a member of this application.' });
    // Nothing was re-issued: the refused invitations keep their old links and expiry.
    expect((await one(t.db.select().from(invitations).where(eq(invitations.id, old.id))))!.tokenHash).toBe(sha256(old.acceptUrl.split('/invite/')[1]));
    expect((await t.admin('POST', `${INV}/${newer.id}/resend`)).statusCode).toBe(200);
  });
});
