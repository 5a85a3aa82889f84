/**
 * `GET /api/auth/oauth2/userinfo` with a Bearer access token (issue 27): what every relying party
 * that reads the person's claims calls after a sign-in. Eight people sign up and go through a
 * code flow with `openid profile email offline_access` (over the public API). Two loads over 8
 * keep-alive connections, every answer a 200 with the person's `sub` and `email`:
 * - the same 8 access tokens presented in turn (an application reading userinfo on each page
 *   load): the server verifies each token's signature once and remembers it (oauth/access-tokens.ts);
 * - first use: 6,000 distinct access tokens (minted by refresh grants first), presented in turn,
 *   more than the server remembers (5,000), so every request verifies an RS256 signature.
 *
 * Judged: the server's CPU per request (every thread, /proc) at most 0.1 ms, both ways. Beside it,
 * for scale, one RS256 verification with the same key, and a profiled second window splits the
 * CPU into signing (here: verifying), SQLite, HTTP and the rest (bench/_profile.ts).
 */
import type { BenchResult, Scenario } from './run.js';
import { cannon, codeFlow, createApplication, loadFigures, refreshLoad, signUp, startBenchServer, type BenchServer } from './_server.js';
import { cost, costFigures, perOpOrThrow } from './_cost.js';
import type { SignatureCost } from './_signature.js';
import { mainThreadShares, profiled } from './_profile.js';
import { signatureCost, signingInputOf } from './_signature.js';

const CONNECTIONS = 8;
const PEOPLE = 8;
const SECONDS = 5;
const WARM_UP_SECONDS = 1;
const PROFILED_SECONDS = 3;
const TARGET_CPU_MS = 0.1;
/** Distinct tokens for the first-use load: more than the server remembers verified (VERIFIED_CACHE_SIZE). */
const DISTINCT_TOKENS = 6_000;
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

/** Measures `seconds` of userinfo over `tokens`, then a profiled window; one row. */
async function measure(server: BenchServer, name: string, tokens: string[], signature: SignatureCost): Promise<BenchResult> {
  await userinfoLoad(server, tokens, WARM_UP_SECONDS);
  const before = server.cpu();
  const measured = await userinfoLoad(server, tokens, SECONDS);
  const perOp = perOpOrThrow(before, server.cpu(), measured.latencies.length);
  const { profile } = await profiled(server, () => userinfoLoad(server, tokens, PROFILED_SECONDS));
  const c = cost(perOp, mainThreadShares(profile), signature, 0);
  const { figures, ...timing } = loadFigures(measured.latencies, measured.result.duration, perOp, measured.clientCpuMs);
  return {
    scenario: name,
    ...timing,
    cost: c,
    measured: `${c.cpuMs.toFixed(3)} ms CPU/request (${(c.cpuMs / signature.verifyMs).toFixed(1)} × one verification, ${c.ratio.toFixed(2)} × one signature)`,
    extra: { connections: CONNECTIONS, tokens: tokens.length, ...figures, ...costFigures(c), 'verification ms (same run)': signature.verifyMs.toFixed(3) },
    target: `CPU ≤ ${TARGET_CPU_MS} ms/request`,
    met: c.cpuMs <= TARGET_CPU_MS,
  };
}

async function run(): Promise<BenchResult[]> {
  const server = await startBenchServer('userinfo', { GATEHOUSE_BENCH_METRICS: '1' });
  try {
    await createApplication(server, CLIENT);
    const tokens: string[] = [];
    const families: string[] = [];
    for (let i = 0; i < PEOPLE; i++) {
      const cookie = await signUp(server, `reader${i}@example.com`, CLIENT);
      const issued = await codeFlow(server, CLIENT, cookie, 'openid profile email offline_access');
      tokens.push(issued.access_token!);
      families.push(issued.refresh_token!);
    }
    const distinct: string[] = [];
    await refreshLoad(server, CLIENT, families, { connections: PEOPLE, amount: DISTINCT_TOKENS }, (token) => distinct.push(token));
    const signature = await signatureCost(server.dataDir, signingInputOf(tokens[0]!));
    return [
      await measure(server, 'userinfo, the same 8 tokens, 8 connections', tokens, signature),
      await measure(server, 'userinfo, first use of each token, 8 connections', distinct, signature),
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
