/**
 * Webhook admin API (issue 6) over inject, no worker running: listing with filters and
 * pagination, replay, test events, audit, API-key scopes, and the outbox's transaction rule.
 */
import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { appBody, makeApp, type TestApp } from '../helpers/app.js';
import { insertApiKey } from '../helpers/webhook-fixtures.js';
import { auditLog, webhookDeliveries } from '../../server/db/schema.js';
import { recordEvent } from '../../server/webhooks/outbox.js';
import { exec, one, many, transaction } from '../../server/db/store.js';

const HOOK_URL = 'http://10.0.0.9:9/hooks'; // a LAN receiver; no worker runs here

async function appWithWebhook(t: TestApp, id = 'notes') {
  const res = await t.admin('POST', '/api/admin/applications', appBody({ id, audience: `https://${id}.example.com/api`, webhookUrl: HOOK_URL }));
  expect(res.statusCode).toBe(201);
}

function problem(res: { statusCode: number; headers: Record<string, unknown>; json(): any }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(res.json()).toMatchObject({ status, code });
  return res.json();
}

describe('webhook admin API', () => {
  it('sends a webhook.test event and lists it with its parsed payload', async () => {
    const t = await makeApp({ clock: new Date('2026-03-01T10:00:00Z') });
    await appWithWebhook(t);
    const sent = await t.admin('POST', '/api/admin/applications/notes/webhook-test');
    expect(sent.statusCode).toBe(202);
    const record = sent.json();
    expect(record).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: 'webhook.test',
      status: 'pending',
      attempts: 0,
      lastStatusCode: null,
      lastError: null,
      lastAttemptAt: null,
      nextAttemptAt: '2026-03-01T10:00:00.000Z',
      createdAt: '2026-03-01T10:00:00.000Z',
      deliveredAt: null,
      payload: {
        id: record.id,
        type: 'webhook.test',
        createdAt: '2026-03-01T10:00:00.000Z',
        applicationId: 'notes',
        data: { message: 'Test event sent from Gatehouse.' },
      },
    });
    const list = await t.admin('GET', '/api/admin/applications/notes/webhook-deliveries');
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({ deliveries: [record], nextCursor: null });

    const audit = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'webhook.test_sent')));
    expect(audit).toMatchObject([{ actor: 'admin', applicationId: 'notes', target: record.id }]);
  });

  it('answers 409 webhook_not_configured for an application without a webhook URL', async () => {
    const t = await makeApp();
    await t.admin('POST', '/api/admin/applications', appBody());
    problem(await t.admin('POST', '/api/admin/applications/notes/webhook-test'), 409, 'webhook_not_configured');
    expect(await many(t.db.select().from(webhookDeliveries))).toEqual([]);
  });

  it('answers 404 for unknown applications and deliveries', async () => {
    const t = await makeApp();
    await appWithWebhook(t);
    problem(await t.admin('GET', '/api/admin/applications/nope/webhook-deliveries'), 404, 'application_not_found');
    problem(await t.admin('POST', '/api/admin/applications/nope/webhook-test'), 404, 'application_not_found');
    problem(await t.admin('POST', '/api/admin/applications/notes/webhook-deliveries/msg_x/retry'), 404, 'delivery_not_found');
  });

  it('rejects unknown query fields on the test and retry actions, sending nothing', async () => {
    const t = await makeApp();
    await appWithWebhook(t);
    const test = problem(await t.admin('POST', '/api/admin/applications/notes/webhook-test?foo=1'), 400, 'validation_failed');
    expect(test.errors).toEqual([{ path: 'querystring.foo', message: 'is not a known field' }]);
    const retry = problem(await t.admin('POST', '/api/admin/applications/notes/webhook-deliveries/msg_x/retry?now=1'), 400, 'validation_failed');
    expect(retry.errors).toEqual([{ path: 'querystring.now', message: 'is not a known field' }]);
    expect(await many(t.db.select().from(webhookDeliveries))).toEqual([]);
  });

  it('filters by status, paginates in creation order and rejects bad queries', async () => {
    const t = await makeApp();
    await appWithWebhook(t);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await t.admin('POST', '/api/admin/applications/notes/webhook-test')).json().id);
      t.clock.advance(1000);
    }
    await exec(t.db.update(webhookDeliveries).set({ status: 'failed', attempts: 8, lastStatusCode: 500, lastError: 'HTTP 500' }).where(eq(webhookDeliveries.id, ids[1]!)));
    await exec(t.db.update(webhookDeliveries).set({ status: 'succeeded', attempts: 1, lastStatusCode: 204, deliveredAt: t.clock.now() }).where(eq(webhookDeliveries.id, ids[2]!)));

    const failed = (await t.admin('GET', '/api/admin/applications/notes/webhook-deliveries?status=failed')).json();
    expect(failed.deliveries.map((d: { id: string }) => d.id)).toEqual([ids[1]]);
    expect(failed.deliveries[0]).toMatchObject({ status: 'failed', attempts: 8, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: null });
    const succeeded = (await t.admin('GET', '/api/admin/applications/notes/webhook-deliveries?status=succeeded')).json();
    expect(succeeded.deliveries.map((d: { id: string }) => d.id)).toEqual([ids[2]]);

    const page1 = (await t.admin('GET', '/api/admin/applications/notes/webhook-deliveries?status=pending&limit=2')).json();
    expect(page1.deliveries.map((d: { id: string }) => d.id)).toEqual([ids[0], ids[3]]);
    const page2 = (await t.admin('GET', `/api/admin/applications/notes/webhook-deliveries?status=pending&limit=2&cursor=${page1.nextCursor}`)).json();
    expect(page2).toEqual({ deliveries: [expect.objectContaining({ id: ids[4] })], nextCursor: null });

    const bad = await t.admin('GET', '/api/admin/applications/notes/webhook-deliveries?status=lost');
    problem(bad, 400, 'validation_failed');
    problem(await t.admin('GET', '/api/admin/applications/notes/webhook-deliveries?cursor=zzz'), 400, 'invalid_cursor');
    problem(await t.admin('GET', '/api/admin/applications/notes/webhook-deliveries?colour=red'), 400, 'validation_failed');
  });

  it('replays a failed delivery: pending, due now, fresh schedule, audited', async () => {
    const t = await makeApp({ clock: new Date('2026-03-01T10:00:00Z') });
    await appWithWebhook(t);
    const id = (await t.admin('POST', '/api/admin/applications/notes/webhook-test')).json().id as string;
    await exec(t.db.update(webhookDeliveries).set({ status: 'failed', attempts: 8, lastStatusCode: 503, lastError: 'HTTP 503' }).where(eq(webhookDeliveries.id, id)));
    t.clock.advance(3600_000);

    const res = await t.admin('POST', `/api/admin/applications/notes/webhook-deliveries/${id}/retry`);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ id, status: 'pending', attempts: 0, nextAttemptAt: '2026-03-01T11:00:00.000Z', lastStatusCode: 503, lastError: 'HTTP 503' });
    const audit = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'webhook_delivery.retried')));
    expect(audit).toMatchObject([{ actor: 'admin', applicationId: 'notes', target: id, details: { type: 'webhook.test', previousStatus: 'failed' } }]);
  });

  it('refuses to replay a delivery while an attempt holds its lease', async () => {
    const t = await makeApp();
    await appWithWebhook(t);
    const id = (await t.admin('POST', '/api/admin/applications/notes/webhook-test')).json().id as string;
    await exec(t.db.update(webhookDeliveries).set({ leaseUntil: new Date(t.clock.now().getTime() + 60_000) }).where(eq(webhookDeliveries.id, id)));
    problem(await t.admin('POST', `/api/admin/applications/notes/webhook-deliveries/${id}/retry`), 409, 'delivery_in_progress');
  });

  it('does not show one application’s deliveries under another', async () => {
    const t = await makeApp();
    await appWithWebhook(t, 'notes');
    await appWithWebhook(t, 'tasks');
    const id = (await t.admin('POST', '/api/admin/applications/notes/webhook-test')).json().id as string;
    expect((await t.admin('GET', '/api/admin/applications/tasks/webhook-deliveries')).json().deliveries).toEqual([]);
    problem(await t.admin('POST', `/api/admin/applications/tasks/webhook-deliveries/${id}/retry`), 404, 'delivery_not_found');
  });

  it('lets API keys in with webhooks:read / webhooks:write scopes only, on their own application', async () => {
    const t = await makeApp();
    await appWithWebhook(t, 'notes');
    await appWithWebhook(t, 'tasks');
    const reader = (await insertApiKey(t.db, 'notes', ['webhooks:read']));
    const writer = (await insertApiKey(t.db, 'notes', ['webhooks:read', 'webhooks:write']));
    const usersOnly = (await insertApiKey(t.db, 'notes', ['users:read', 'users:write']));
    const as = (key: string) => ({ authorization: `Bearer ${key}` });

    const sent = await t.admin('POST', '/api/admin/applications/notes/webhook-test', undefined, as(writer));
    expect(sent.statusCode).toBe(202);
    const id = sent.json().id as string;
    expect((await one(t.db.select().from(auditLog).where(eq(auditLog.action, 'webhook.test_sent'))))?.actor).toMatch(/^api_key:key_/);

    const listed = await t.admin('GET', '/api/admin/applications/notes/webhook-deliveries', undefined, as(reader));
    expect(listed.statusCode).toBe(200);
    expect(listed.json().deliveries).toHaveLength(1);
    expect((await t.admin('POST', `/api/admin/applications/notes/webhook-deliveries/${id}/retry`, undefined, as(writer))).statusCode).toBe(202);

    problem(await t.admin('POST', '/api/admin/applications/notes/webhook-test', undefined, as(reader)), 403, 'insufficient_scope');
    problem(await t.admin('POST', `/api/admin/applications/notes/webhook-deliveries/${id}/retry`, undefined, as(reader)), 403, 'insufficient_scope');
    problem(await t.admin('GET', '/api/admin/applications/notes/webhook-deliveries', undefined, as(usersOnly)), 403, 'insufficient_scope');
    problem(await t.admin('GET', '/api/admin/applications/tasks/webhook-deliveries', undefined, as(writer)), 403, 'insufficient_scope');
    const anonymous = await t.app.inject({ method: 'GET', url: '/api/admin/applications/notes/webhook-deliveries' });
    problem(anonymous, 401, 'unauthorized');
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
  });
});

describe('webhook outbox', () => {
  it('writes no event when the change’s transaction rolls back', async () => {
    const t = await makeApp();
    await appWithWebhook(t);
    await expect(
      transaction(t.db, async (tx) => {
        expect(await recordEvent(tx, t.clock.now(), 'notes', 'membership.created', { userId: 'usr_x' })).toMatch(/^msg_/);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await many(t.db.select().from(webhookDeliveries))).toEqual([]);

    const id = await transaction(t.db, async (tx) => recordEvent(tx, t.clock.now(), 'notes', 'membership.created', { userId: 'usr_x' }));
    expect(await many(t.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries))).toEqual([{ id }]);
  });

  it('writes nothing for an application without a webhook URL', async () => {
    const t = await makeApp();
    await t.admin('POST', '/api/admin/applications', appBody());
    expect(await transaction(t.db, async (tx) => recordEvent(tx, t.clock.now(), 'notes', 'membership.created', {}))).toBeUndefined();
    expect(await many(t.db.select().from(webhookDeliveries))).toEqual([]);
  });

  it('limits manual sends (test events and replays) to 10 a minute per application, after authentication', async () => {
    const t = await makeApp();
    await appWithWebhook(t);
    await appWithWebhook(t, 'wiki');
    const key = (await insertApiKey(t.db, 'notes', ['webhooks:write']));
    // Strangers' refused requests spend nothing.
    for (let i = 0; i < 20; i++) {
      expect((await t.admin('POST', '/api/admin/applications/notes/webhook-test', undefined, { authorization: 'Bearer ghk_wrong' })).statusCode).toBe(401);
    }
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) {
      const sent = await t.admin('POST', '/api/admin/applications/notes/webhook-test', undefined, { authorization: `Bearer ${key}` });
      expect(sent.statusCode).toBe(202);
      ids.push(sent.json().id);
    }
    // A replay draws on the same budget.
    expect((await t.admin('POST', `/api/admin/applications/notes/webhook-deliveries/${ids[0]}/retry`)).statusCode).toBe(202);
    for (const [url, headers] of [
      ['/api/admin/applications/notes/webhook-test', { authorization: `Bearer ${key}` }],
      [`/api/admin/applications/notes/webhook-deliveries/${ids[1]}/retry`, {}],
    ] as const) {
      const limited = await t.admin('POST', url, undefined, headers);
      problem(limited, 429, 'rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(await many(t.db.select().from(webhookDeliveries))).toHaveLength(9);
    // Another application has its own budget.
    expect((await t.admin('POST', '/api/admin/applications/wiki/webhook-test')).statusCode).toBe(202);
  });
});
