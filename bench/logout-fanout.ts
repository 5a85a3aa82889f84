/**
 * Back-channel logout fan-out (issue 24): signing out must not get slower with the number of
 * applications to tell. One server has 50 applications (one SSO group, each with a logout URL at
 * a local receiver in its own process). Half the sessions received tokens from one application,
 * half from all 50; they are signed out alternately, one every 150 ms (a busy team's pace, far
 * above a real one), so both kinds meet the same machine load, and each sign-out's latency is
 * measured. Meanwhile the server's worker signs and delivers one logout token per application
 * to the receiver, which counts them.
 *
 * Sign-out only writes the logout rows (one INSERT … SELECT in its transaction); signing and
 * delivery happen afterwards in the worker, a few at a time. Target: p99 with 50 applications
 * ≤ 1.5 × p99 with 1, and every logout token delivered.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchResult, Scenario } from './run.js';
import { BENCH_PASSWORD, BENCH_REDIRECT, codeFlow, cpuPerOp, loadAverage, percentile, signUp, startBenchServer, type BenchServer } from './_server.js';

/** Sign-outs of each kind. */
const SIGN_OUTS = 150;
const PACE_MS = 150;
const APPS = 50;
const TARGET_RATIO = 1.5;

function stats(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    const onMessage = (msg: { type: string; received: number }) => {
      if (msg.type !== 'stats') return;
      child.off('message', onMessage);
      resolve(msg.received);
    };
    child.on('message', onMessage);
    child.send('stats');
  });
}

/** A new session of the bench person (another device), signed in to the group. */
async function newSession(server: BenchServer): Promise<string> {
  const res = await fetch(`${server.url}/api/auth/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.com', password: BENCH_PASSWORD, applicationId: 'app-0' }),
  });
  if (res.status !== 200) throw new Error(`sign-in: HTTP ${res.status}`);
  return res.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session='))!.split(';')[0]!;
}

async function run(): Promise<BenchResult[]> {
  const here = dirname(fileURLToPath(import.meta.url));
  const receiver = fork(join(here, '_logout-receiver.mjs'), [], { stdio: 'inherit' });
  const port = await new Promise<number>((resolve) => receiver.once('message', (m: { port: number }) => resolve(m.port)));
  // Every session is a password sign-in from this one address: lift the per-address limit.
  // The receiver listens on 127.0.0.1: loopback targets allowed.
  const server = await startBenchServer('logout-fanout', { GATEHOUSE_SIGN_IN_RATE_LIMIT: '100000', GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: '1' });
  try {
    await server.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: 'Suite' });
    for (let i = 0; i < APPS; i++) {
      const res = await server.admin('POST', '/api/admin/applications', {
        id: `app-${i}`, name: `App ${i}`, audience: `https://app-${i}.example.com/api`, clientType: 'spa', redirectUris: [BENCH_REDIRECT],
        authPolicy: { signup_policy: 'open' }, ssoGroupId: 'suite', backchannelLogoutUri: `http://127.0.0.1:${port}/logout/${i}`,
      });
      if (res.status !== 201) throw new Error(`creating app-${i}: HTTP ${res.status} ${await res.text()}`);
    }
    await signUp(server, 'bench@example.com', 'app-0');
    // Sessions alternate: one that got tokens from app-0 only, one from every application
    // (silent authorize: they share the group's sign-in).
    const plan: { cookie: string; apps: number }[] = [];
    for (let s = 0; s < 2 * SIGN_OUTS; s++) {
      const apps = s % 2 === 0 ? 1 : APPS;
      const cookie = await newSession(server);
      for (let i = 0; i < apps; i++) await codeFlow(server, `app-${i}`, cookie, 'openid');
      plan.push({ cookie, apps });
    }

    const before = await stats(receiver);
    const latencies = new Map<number, number[]>([[1, []], [APPS, []]]);
    const cpu0 = server.cpu();
    const started = performance.now();
    for (const [n, { cookie, apps }] of plan.entries()) {
      // Open loop: sign-out n starts at n × PACE_MS, whatever the previous ones took.
      const wait = started + n * PACE_MS - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const t0 = performance.now();
      const res = await fetch(`${server.url}/api/auth/sign-out`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' } });
      latencies.get(apps)!.push(performance.now() - t0);
      if (res.status !== 204) throw new Error(`sign-out: HTTP ${res.status}`);
    }
    const expected = SIGN_OUTS * (1 + APPS);
    const deadline = Date.now() + 60_000;
    let delivered = 0;
    while ((delivered = (await stats(receiver)) - before) < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const drainedMs = performance.now() - started - (plan.length - 1) * PACE_MS;
    const cpu = cpuPerOp(cpu0, server.cpu(), plan.length);

    const one = latencies.get(1)!.sort((a, b) => a - b);
    const many = latencies.get(APPS)!.sort((a, b) => a - b);
    const ratio = percentile(many, 99) / percentile(one, 99);
    const allDelivered = delivered === expected;
    const row = (list: number[], apps: number, judged: boolean): BenchResult => ({
      scenario: `sign-out with ${apps} application${apps === 1 ? '' : 's'} to tell`,
      throughput: 1000 / PACE_MS / 2,
      p50Ms: percentile(list, 50),
      p99Ms: percentile(list, 99),
      measured: judged ? `p99 ${ratio.toFixed(2)} × the 1-application p99` : 'reference',
      extra: {
        'sign-outs': list.length, 'max ms': Number(list.at(-1)!.toFixed(2)),
        ...(judged
          ? {
              'logout tokens delivered': `${delivered}/${expected}`, 'all delivered after the last sign-out, ms': Math.round(drainedMs),
              'server CPU ms per sign-out, both kinds, deliveries included': cpu ? cpu.totalMs.toFixed(2) : 'n/a',
            }
          : {}),
        'load avg': loadAverage(),
      },
      target: judged ? `p99 ≤ ${TARGET_RATIO} × the 1-application p99, all delivered` : 'reference',
      met: judged ? allDelivered && ratio <= TARGET_RATIO : true,
    });
    return [row(one, 1, false), row(many, APPS, true)];
  } finally {
    await server.stop();
    receiver.kill();
  }
}

export const scenario: Scenario = {
  name: 'logout-fanout',
  description: 'sign-out latency with 1 and 50 applications to tell by back-channel logout, alternating, paced, delivered to a local receiver',
  run,
};
