/**
 * `GET /api/auth/oauth2/userinfo` with a Bearer access token (issue 27): what every relying party
 * that reads the person's claims calls after a sign-in. Eight people sign up and go through a
 * code flow with `openid profile email` (over the public API); their access tokens are then
 * presented in turn over 8 keep-alive connections for a few seconds. Every answer must be a 200
 * with the person's `sub` and `email`.
 *
 * Judged: the server's CPU per request (every thread, /proc) at most 0.1 ms. Beside it, for
 * scale, the verification of one RS256 signature with the same key (each request verifies one),
 * and a profiled second window splits the CPU into signing (here: verifying), SQLite, HTTP and
 * the rest (bench/_profile.ts).
 */
import type { BenchResult, Scenario } from './run.js';
import { cannon, codeFlow, createApplication, loadFigures, signUp, startBenchServer, type BenchServer } from './_server.js';
import { cost, costFigures, perOpOrThrow } from './_cost.js';
import { mainThreadShares, profiled } from './_profile.js';
import { signatureCost, signingInputOf } from './_signature.js';

const CONNECTIONS = 8;
const PEOPLE = 8;
const SECONDS = 5;
const WARM_UP_SECONDS = 1;
const PROFILED_SECONDS = 3;
const TARGET_CPU_MS = 0.1;
const CLIENT = 'bench-userinfo';

function userinfoLoad(server: BenchServer, tokens: string[], seconds: number) {
  let turn = 0;
  let failure: string | undefined;
  return cannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'GET',
        path: '/api/auth/oauth2/userinfo',
        setupRequest: (request) => ({ ...request, headers: { authorization: `Bearer ${tokens[turn++ % tokens.length]!}` } }),
        onResponse(status, body) {
          if (status !== 200 || !body.includes('"sub":') || !body.includes('"email":')) failure ??= `userinfo: HTTP ${status} ${body}`;
        },
      },
    ],
  }).then((run) => {
    if (failure) throw new Error(failure);
    return run;
  });
}

async function run(): Promise<BenchResult[]> {
  const server = await startBenchServer('userinfo', { GATEHOUSE_BENCH_METRICS: '1' });
  try {
    await createApplication(server, CLIENT);
    const tokens: string[] = [];
    for (let i = 0; i < PEOPLE; i++) {
      const cookie = await signUp(server, `reader${i}@example.com`, CLIENT);
      tokens.push((await codeFlow(server, CLIENT, cookie, 'openid profile email')).access_token!);
    }
    await userinfoLoad(server, tokens, WARM_UP_SECONDS);
    const before = server.cpu();
    const measured = await userinfoLoad(server, tokens, SECONDS);
    const perOp = perOpOrThrow(before, server.cpu(), measured.latencies.length);
    const { profile } = await profiled(server, () => userinfoLoad(server, tokens, PROFILED_SECONDS));
    const signature = await signatureCost(server.dataDir, signingInputOf(tokens[0]!));
    const c = cost(perOp, mainThreadShares(profile), signature, 0);
    const { figures, ...timing } = loadFigures(measured.latencies, measured.result.duration, perOp, measured.clientCpuMs);
    return [
      {
        scenario: 'userinfo, 8 connections',
        ...timing,
        cost: c,
        measured: `${c.cpuMs.toFixed(3)} ms CPU/request (${(c.cpuMs / signature.verifyMs).toFixed(1)} × one verification, ${c.ratio.toFixed(2)} × one signature)`,
        extra: { connections: CONNECTIONS, ...figures, ...costFigures(c), 'verification ms (same run)': signature.verifyMs.toFixed(3) },
        target: `CPU ≤ ${TARGET_CPU_MS} ms/request`,
        met: c.cpuMs <= TARGET_CPU_MS,
      },
    ];
  } finally {
    await server.stop();
  }
}

export const scenario: Scenario = {
  name: 'userinfo',
  description: 'userinfo with Bearer access tokens over 8 keep-alive connections, CPU per request',
  run,
};
