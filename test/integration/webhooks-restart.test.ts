/**
 * The outbox is durable (issue 6): events written while the receiver is down survive a restart
 * of the real server (`start()` on a data directory) and arrive once the receiver is back; a
 * lease left by a crashed attempt only delays its row until the lease runs out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { start, type Running } from '../../server/main.js';
import { loadConfig } from '../../server/config.js';
import { webhookDeliveries } from '../../server/db/schema.js';
import { appBody, makeApp } from '../helpers/app.js';
import { eventually, startReceiver } from '../helpers/webhook-receiver.js';
import { exec, one } from '../../server/db/store.js';

const ADMIN = 'restart-test-admin-token-0123456789';
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function startServer(dataDir: string): Promise<Running> {
  const env = {
    ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: 'warn',
    GATEHOUSE_WEBHOOK_POLL_MS: '50',
    // The receiver listens on 127.0.0.1: the operator's opt-in.
    GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: '1',
    // Short retries so the test does not wait 5 s, with room for a slow stop.
    GATEHOUSE_WEBHOOK_RETRY_SCHEDULE_MS: '1500,1500,1500,1500,1500,1500,1500',
  };
  const running = await start(loadConfig(env, { dataDir, port: '0', host: '127.0.0.1' }));
  cleanup.push(() => running.stop());
  return running;
}

async function admin(running: Running, method: string, path: string, body?: unknown) {
  const res = await fetch(`${running.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('webhook outbox durability', () => {
  it('delivers an event after a server restart while the receiver was down', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-webhooks-'));
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    // Reserve a port for the receiver, then take it down.
    const probe = await startReceiver();
    const { port, url } = probe;
    await probe.close();

    const first = await startServer(dataDir);
    const created = await admin(first, 'POST', '/api/admin/applications', appBody({ webhookUrl: url }));
    expect(created.status).toBe(201);
    const secret = created.body.webhookSecret as string;
    const sent = await admin(first, 'POST', '/api/admin/applications/notes/webhook-test');
    expect(sent.status).toBe(202);
    const id = sent.body.id as string;
    const failed = await eventually(async () =>
      (await one(first.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id))))?.attempts === 1,
    );
    expect(failed).toBe(true);
    await first.stop();

    const receiver = await startReceiver(undefined, port);
    cleanup.push(() => receiver.close());
    const second = await startServer(dataDir);
    const [got] = await receiver.waitFor(1, 15_000);
    expect(got!.headers['webhook-id']).toBe(id);
    expect(new Webhook(secret).verify(got!.body, got!.headers as Record<string, string>)).toMatchObject({ id, type: 'webhook.test', applicationId: 'notes' });

    const listed = await eventually(async () => {
      const res = await admin(second, 'GET', '/api/admin/applications/notes/webhook-deliveries?status=succeeded');
      return res.body.deliveries.length === 1 && res.body.deliveries[0];
    });
    expect(listed).toMatchObject({ id, status: 'succeeded', attempts: 2, lastStatusCode: 204, lastError: null, nextAttemptAt: null });
  });

  it('resumes a delivery left in flight by a crashed worker once its lease runs out', async () => {
    const receiver = await startReceiver();
    cleanup.push(() => receiver.close());
    const t = await makeApp({ deps: { startWorkers: true }, config: { webhookAllowLoopback: true, env: { GATEHOUSE_WEBHOOK_POLL_MS: '50' } } });
    expect((await t.admin('POST', '/api/admin/applications', appBody({ webhookUrl: receiver.url }))).statusCode).toBe(201);
    // As if another process had claimed the row and died mid-delivery.
    const id = 'msg_crashed0000000000000';
    await exec(t.db.insert(webhookDeliveries).values({
      id,
      applicationId: 'notes',
      type: 'webhook.test',
      payload: JSON.stringify({ id, type: 'webhook.test', createdAt: t.clock.now().toISOString(), applicationId: 'notes', data: {} }),
      status: 'pending',
      nextAttemptAt: t.clock.now(),
      leaseUntil: new Date(t.clock.now().getTime() + 75_000),
      createdAt: t.clock.now(),
    }));
    t.app.ctx.wakeWebhooks();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received).toHaveLength(0);

    t.clock.advance(75_000);
    t.app.ctx.wakeWebhooks();
    const [got] = await receiver.waitFor(1);
    expect(got!.headers['webhook-id']).toBe(id);
  });
});
