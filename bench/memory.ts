/**
 * Idle memory (issue 9): the resident set (VmRSS) of `gatehouse serve` after start-up and one of
 * each flow over HTTP — sign-up, password sign-in, authorize + token (PKCE, `openid
 * offline_access`), refresh, the admin member list, an invitation, the JWKS and discovery, and the
 * signed webhook deliveries those changes cause (to a receiver in this process, waited for) —
 * then three seconds of idleness, in
 * which the server gives back what the burst grew (server/ops/idle-memory.ts: after a quiet second,
 * so three leave room for a busy host); the figure right after the flows is reported too. RSS is
 * what the operating system charges the process: V8's heap, code, SQLite's page cache and
 * native buffers (argon2's 19 MiB blocks) alike, and the pages of the node binary and shared
 * libraries it has touched (reported apart as "mapped files": shared with the page cache). The V8 heap figures come over IPC
 * (GATEHOUSE_BENCH_METRICS=1) to tell the parts apart.
 * Target: ≤ 80 MB (10^6 bytes) resident.
 */
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { BenchResult, Scenario } from './run.js';
import type { BenchMetrics } from '../server/cli/bench-metrics.js';
import { BENCH_PASSWORD, codeFlow, createApplication, loadAverage, signUp, startBenchServer, type BenchServer } from './_server.js';

const TARGET_MB = 80;
const APP = 'memory-bench';
const MB = 1e6;
/** Idle time before the measurement (the server reclaims after a quiet second). */
const IDLE_MS = 3_000;

async function expectOk(res: Response, what: string): Promise<unknown> {
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

/** A webhook receiver that counts the deliveries it is sent (answering 204 to each). */
async function startReceiver(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
  let count = 0;
  const receiver: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received: () => count,
    close: () => new Promise((resolve) => receiver.close(() => resolve())),
  };
}

/** Waits until the receiver has `count` deliveries (the outbox delivers within a second). */
async function awaitDeliveries(received: () => number, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (received() < count) {
    if (Date.now() > deadline) throw new Error(`webhooks: ${received()} of ${count} deliveries arrived in 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One of each flow, in the order a first day of use would run them. */
async function everyFlowOnce(server: BenchServer, webhookUrl: string): Promise<void> {
  await createApplication(server, APP, { webhookUrl, webhookSecret: `whsec_${randomBytes(32).toString('base64')}` });
  await signUp(server, 'memory@example.com', APP);
  const signedIn = await fetch(`${server.url}/api/auth/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'memory@example.com', password: BENCH_PASSWORD, applicationId: APP }),
  });
  await expectOk(signedIn, 'sign-in');
  const cookie = signedIn.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='))!.split(';')[0]!;
  const tokens = await codeFlow(server, APP, cookie, 'openid offline_access');
  const refreshed = await fetch(`${server.url}/api/auth/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', client_id: APP, refresh_token: tokens.refresh_token! }).toString(),
  });
  await expectOk(refreshed, 'refresh');
  await expectOk(await server.admin('GET', `/api/admin/applications/${APP}/users?limit=50`), 'admin member list');
  const invited = await server.admin('POST', `/api/admin/applications/${APP}/invitations`, { emails: ['invited@example.com'], role: 'member' });
  if (invited.status !== 201) throw new Error(`invitation: HTTP ${invited.status} ${await invited.text()}`);
  await expectOk(await fetch(`${server.url}/api/auth/jwks`), 'JWKS');
  await expectOk(await fetch(`${server.url}/.well-known/openid-configuration`), 'discovery');
}

/** The webhook events the flows above cause: membership.created, membership.signed_in, invitation.created. */
const EXPECTED_DELIVERIES = 3;

async function run(): Promise<BenchResult[]> {
  // The receiver listens on 127.0.0.1: the operator's opt-in to loopback webhook targets.
  const server = await startBenchServer('memory', { GATEHOUSE_BENCH_METRICS: '1', GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: '1' });
  const receiver = await startReceiver();
  try {
    const atReady = server.rssMiB() * 2 ** 20;
    await everyFlowOnce(server, receiver.url);
    await awaitDeliveries(receiver.received, EXPECTED_DELIVERIES);
    const busy = server.rssParts().rssBytes;
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const { rssBytes: rss, anonBytes, fileBytes } = server.rssParts();
    const { memory, idleReclaim } = await server.ask<BenchMetrics>({ type: 'bench-metrics' });
    const mb = (bytes: number) => Number((bytes / MB).toFixed(1));
    return [
      {
        scenario: 'idle memory after each flow once',
        throughput: 0,
        p50Ms: 0,
        p99Ms: 0,
        measured: `RSS ${mb(rss)} MB (anonymous ${mb(anonBytes)}, files ${mb(fileBytes)})`,
        extra: {
          'RSS at ready MB': mb(atReady),
          'RSS right after the flows MB': mb(busy),
          'RSS idle MB': mb(rss),
          'anonymous MB': mb(anonBytes),
          'mapped files MB': mb(fileBytes),
          'V8 heap used MB': mb(memory.heapUsed),
          'V8 heap total MB': mb(memory.heapTotal),
          'external + array buffers MB': mb(memory.external),
          'idle reclaims': idleReclaim ? `${idleReclaim.count}, last ${mb(idleReclaim.last?.beforeBytes ?? 0)} → ${mb(idleReclaim.last?.afterBytes ?? 0)} MB in ${idleReclaim.last?.ms ?? 0} ms` : 'off',
          'load avg': loadAverage(),
        },
        target: `RSS ≤ ${TARGET_MB} MB`,
        met: rss <= TARGET_MB * MB,
      },
    ];
  } finally {
    await server.stop();
    await receiver.close();
  }
}

export const scenario: Scenario = {
  name: 'memory',
  description: 'RSS after start-up and one sign-up, sign-in, authorize+token, refresh, admin list, invitation, JWKS, discovery and webhook delivery',
  run,
};
