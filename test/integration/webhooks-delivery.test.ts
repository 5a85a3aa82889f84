/**
 * Webhook delivery (issue 6) to real HTTP receivers on 127.0.0.1: Standard Webhooks signatures
 * checked by the official `standardwebhooks` verifier, secret rotation, retries after failures,
 * timeouts, redirects, per-application isolation. The clock is fixed; retries become due when
 * the test advances it and nudges the worker.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { appBody, makeApp, type TestApp } from '../helpers/app.js';
import { eventually, startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { webhookDeliveries } from '../../server/db/schema.js';
import { RETRY_SCHEDULE_MS } from '../../server/webhooks/settings.js';
import { insertApiKey } from '../helpers/webhook-fixtures.js';
import { one } from '../../server/db/store.js';

const receivers: Receiver[] = [];
afterEach(async () => {
  while (receivers.length) await receivers.pop()!.close();
});

async function receiver(...args: Parameters<typeof startReceiver>) {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

/** The receivers listen on 127.0.0.1, so these servers allow loopback targets (an operator's opt-in). */
async function workerApp(env: Record<string, string> = {}) {
  return makeApp({
    deps: { startWorkers: true },
    config: { webhookAllowLoopback: true, env: { GATEHOUSE_WEBHOOK_POLL_MS: '50', GATEHOUSE_WEBHOOK_TIMEOUT_MS: '2000', ...env } },
  });
}

async function createApp(t: TestApp, url: string, extra: Record<string, unknown> = {}, id = 'notes') {
  const res = await t.admin('POST', '/api/admin/applications', appBody({ id, audience: `https://${id}.example.com/api`, webhookUrl: url, ...extra }));
  expect(res.statusCode).toBe(201);
  return res.json() as { webhookSecret?: string };
}

async function sendTest(t: TestApp, id = 'notes'): Promise<string> {
  const res = await t.admin('POST', `/api/admin/applications/${id}/webhook-test`);
  expect(res.statusCode).toBe(202);
  return res.json().id;
}

const row = async (t: TestApp, id: string) => (await one(t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id))))!;

describe('webhook delivery', () => {
  it('delivers a signed event that the official verifier accepts, and a tampered one it rejects', async () => {
    const r = await receiver();
    const t = await workerApp();
    const { webhookSecret } = await createApp(t, r.url);
    expect(webhookSecret).toMatch(/^whsec_/);
    const id = await sendTest(t);

    const [got] = await r.waitFor(1);
    expect(got!.method).toBe('POST');
    expect(got!.path).toBe('/hooks');
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['webhook-id']).toBe(id);
    expect(got!.headers['webhook-timestamp']).toBe(String(Math.floor(t.clock.now().getTime() / 1000)));
    expect(got!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    // Byte-identical to the stored payload.
    expect(got!.body).toBe((await row(t, id)).payload);

    const wh = new Webhook(webhookSecret!);
    const headers = got!.headers as Record<string, string>;
    expect(wh.verify(got!.body, headers)).toEqual({
      id,
      type: 'webhook.test',
      createdAt: t.clock.now().toISOString(),
      applicationId: 'notes',
      data: { message: 'Test event sent from Gatehouse.' },
    });
    expect(() => wh.verify(got!.body.replace('notes', 'notez'), headers)).toThrow('No matching signature found');
    expect(() => wh.verify(got!.body, { ...headers, 'webhook-id': 'msg_other' })).toThrow('No matching signature found');
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(got!.body, headers)).toThrow();

    const delivered = await eventually(async () => (await row(t, id)).status === 'succeeded' && (await row(t, id)));
    expect(delivered).toMatchObject({ attempts: 1, lastStatusCode: 204, lastError: null, leaseUntil: null });
    expect(delivered.deliveredAt?.toISOString()).toBe(t.clock.now().toISOString());
    const listed = (await t.admin('GET', '/api/admin/applications/notes/webhook-deliveries?status=succeeded')).json();
    expect(listed.deliveries[0]).toMatchObject({ id, status: 'succeeded', attempts: 1, lastStatusCode: 204, nextAttemptAt: null });
  });

  it('uses a secret without the whsec_ prefix as UTF-8 bytes', async () => {
    const r = await receiver();
    const t = await workerApp();
    const secret = 'plain-secret-ünïcode-0123456789';
    await createApp(t, r.url, { webhookSecret: secret });
    await sendTest(t);
    const [got] = await r.waitFor(1);
    const wh = new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
    expect(wh.verify(got!.body, got!.headers as Record<string, string>)).toMatchObject({ type: 'webhook.test' });
  });

  it('signs with both secrets for 24 hours after a rotation', async () => {
    const r = await receiver();
    const t = await workerApp();
    const { webhookSecret: oldSecret } = await createApp(t, r.url);
    const newSecret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { webhookSecret: newSecret })).statusCode).toBe(200);

    await sendTest(t);
    const [during] = await r.waitFor(1);
    const signatures = String(during!.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    for (const s of signatures) expect(s).toMatch(/^v1,/);
    const headers = during!.headers as Record<string, string>;
    expect(new Webhook(oldSecret!).verify(during!.body, headers)).toMatchObject({ type: 'webhook.test' });
    expect(new Webhook(newSecret).verify(during!.body, headers)).toMatchObject({ type: 'webhook.test' });

    // A day later only the new secret signs. (The verifier checks timestamps against the real
    // clock, so the signature is checked by hand here.)
    t.clock.advance(24 * 3600_000 + 1000);
    await sendTest(t);
    const [, after] = await r.waitFor(2);
    const only = String(after!.headers['webhook-signature']);
    expect(only.split(' ')).toHaveLength(1);
    const expected = new Webhook(newSecret).sign(String(after!.headers['webhook-id']), new Date(Number(after!.headers['webhook-timestamp']) * 1000), after!.body);
    expect(only).toBe(expected);
  });

  it('retries after a 500 with the same id and body, and records the failed attempt', async () => {
    const r = await receiver((_req, i) => (i === 0 ? { status: 500, body: 'oops' } : { status: 200, body: 'ok' }));
    const t = await workerApp();
    const { webhookSecret } = await createApp(t, r.url);
    const start = t.clock.now();
    const id = await sendTest(t);

    await r.waitFor(1);
    const failed = await eventually(async () => (await row(t, id)).attempts === 1 && (await row(t, id)));
    expect(failed).toMatchObject({ status: 'pending', lastStatusCode: 500, lastError: 'HTTP 500', leaseUntil: null });
    expect(failed.lastAttemptAt?.toISOString()).toBe(start.toISOString());
    expect(failed.nextAttemptAt.getTime()).toBe(start.getTime() + 5000);
    const listed = (await t.admin('GET', '/api/admin/applications/notes/webhook-deliveries?status=pending')).json();
    expect(listed.deliveries[0]).toMatchObject({ id, attempts: 1, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: new Date(start.getTime() + 5000).toISOString() });

    // Not due yet: nothing more arrives.
    t.clock.advance(4000);
    t.app.ctx.wakeWebhooks();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(r.received).toHaveLength(1);

    t.clock.advance(1000);
    t.app.ctx.wakeWebhooks();
    const [first, second] = await r.waitFor(2);
    expect(second!.headers['webhook-id']).toBe(id);
    expect(second!.body).toBe(first!.body);
    expect(new Webhook(webhookSecret!).verify(second!.body, second!.headers as Record<string, string>)).toMatchObject({ id });
    const done = await eventually(async () => (await row(t, id)).status === 'succeeded' && (await row(t, id)));
    expect(done).toMatchObject({ attempts: 2, lastStatusCode: 200, lastError: null });
  });

  it('follows the retry schedule 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h and then fails', async () => {
    const r = await receiver(() => ({ status: 503 }));
    const t = await workerApp();
    await createApp(t, r.url);
    const id = await sendTest(t);
    for (let attempt = 1; attempt <= 8; attempt++) {
      await r.waitFor(attempt);
      const current = await eventually(async () => (await row(t, id)).attempts === attempt && (await row(t, id)));
      if (attempt <= RETRY_SCHEDULE_MS.length) {
        expect(current.status).toBe('pending');
        expect(current.nextAttemptAt.getTime() - t.clock.now().getTime()).toBe(RETRY_SCHEDULE_MS[attempt - 1]);
        t.clock.advance(RETRY_SCHEDULE_MS[attempt - 1]!);
        t.app.ctx.wakeWebhooks();
      } else {
        expect(current).toMatchObject({ status: 'failed', lastStatusCode: 503, lastError: 'HTTP 503' });
      }
    }
    expect(RETRY_SCHEDULE_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    t.clock.advance(100 * 3600_000);
    t.app.ctx.wakeWebhooks();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(r.received).toHaveLength(8);

    // A replay by an administrator sends it once more.
    r.respond(() => ({ status: 202 }));
    expect((await t.admin('POST', `/api/admin/applications/notes/webhook-deliveries/${id}/retry`)).statusCode).toBe(202);
    await r.waitFor(9);
    expect(await eventually(async () => (await row(t, id)).status === 'succeeded' && (await row(t, id)))).toMatchObject({ attempts: 1, lastStatusCode: 202 });
  });

  it('gives up on a receiver that never answers after the timeout and retries later', async () => {
    const r = await receiver(() => 'hang');
    const t = await workerApp({ GATEHOUSE_WEBHOOK_TIMEOUT_MS: '300' });
    await createApp(t, r.url);
    const id = await sendTest(t);
    await r.waitFor(1);
    const timedOut = await eventually(async () => (await row(t, id)).attempts === 1 && (await row(t, id)), 5000);
    expect(timedOut).toMatchObject({ status: 'pending', lastStatusCode: null, lastError: 'timed out after 300 ms', leaseUntil: null });
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const target = await receiver();
    const r = await receiver(() => ({ status: 302, headers: { location: target.url } }));
    const t = await workerApp();
    await createApp(t, r.url);
    const id = await sendTest(t);
    await r.waitFor(1);
    const redirected = await eventually(async () => (await row(t, id)).attempts === 1 && (await row(t, id)));
    expect(redirected).toMatchObject({ status: 'pending', lastStatusCode: 302, lastError: 'redirect (HTTP 302) not followed' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(target.received).toHaveLength(0);
  });

  it('records a connection failure when the receiver is down', async () => {
    const r = await receiver();
    const url = r.url;
    await receivers.pop()!.close();
    const t = await workerApp();
    await createApp(t, url);
    const id = await sendTest(t);
    const refused = await eventually(async () => (await row(t, id)).attempts === 1 && (await row(t, id)));
    expect(refused).toMatchObject({ status: 'pending', lastStatusCode: null, lastError: 'request failed: ECONNREFUSED' });
  });

  it('keeps a slow endpoint from delaying another application’s events', async () => {
    const slow = await receiver(() => 'hang');
    const fast = await receiver();
    const t = await workerApp({ GATEHOUSE_WEBHOOK_TIMEOUT_MS: '5000', GATEHOUSE_WEBHOOK_CONCURRENCY: '4', GATEHOUSE_WEBHOOK_PER_APP_CONCURRENCY: '2' });
    await createApp(t, slow.url, {}, 'slow');
    await createApp(t, fast.url, {}, 'fast');
    for (let i = 0; i < 6; i++) await sendTest(t, 'slow');
    await slow.waitFor(2);
    const started = Date.now();
    const id = await sendTest(t, 'fast');
    await fast.waitFor(1, 2000);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(fast.received[0]!.headers['webhook-id']).toBe(id);
    // The slow application holds only its own share of the workers.
    expect(slow.received).toHaveLength(2);
  });
});

describe('what API keys see of failed deliveries (issue 22)', () => {
  it('a closed port and an answering one look the same to an API key; the admin sees why', async () => {
    const answering = await receiver(() => ({ status: 500 }));
    const closed = await receiver();
    const closedUrl = closed.url;
    await closed.close();
    receivers.splice(receivers.indexOf(closed), 1);
    const t = await workerApp();
    await createApp(t, answering.url, {}, 'notes');
    await createApp(t, closedUrl, {}, 'wiki');
    const ids = { notes: await sendTest(t, 'notes'), wiki: await sendTest(t, 'wiki') };
    await eventually(async () => (await row(t, ids.notes)).attempts === 1 && (await row(t, ids.wiki)).attempts === 1);
    expect([(await row(t, ids.notes)).lastError, (await row(t, ids.wiki)).lastError]).toEqual(['HTTP 500', 'request failed: ECONNREFUSED']);

    const seenBy = async (app: 'notes' | 'wiki', authorization: string) => {
      const list = await t.admin('GET', `/api/admin/applications/${app}/webhook-deliveries`, undefined, { authorization });
      expect(list.statusCode).toBe(200);
      const [d] = list.json().deliveries;
      return { status: d.status, attempts: d.attempts, lastStatusCode: d.lastStatusCode, lastError: d.lastError };
    };
    for (const app of ['notes', 'wiki'] as const) {
      const key = (await insertApiKey(t.db, app, ['webhooks:read', 'webhooks:write']));
      expect(await seenBy(app, `Bearer ${key}`)).toEqual({ status: 'pending', attempts: 1, lastStatusCode: null, lastError: 'delivery_failed' });
      // The same through the replay answer.
      const replay = await t.admin('POST', `/api/admin/applications/${app}/webhook-deliveries/${ids[app]}/retry`, undefined, { authorization: `Bearer ${key}` });
      expect(replay.statusCode).toBe(202);
      expect([replay.json().lastStatusCode, replay.json().lastError]).toEqual([null, 'delivery_failed']);
    }
    expect(await seenBy('notes', 'Bearer test-admin-token-0123456789')).toMatchObject({ lastStatusCode: 500, lastError: 'HTTP 500' });
  });
});
