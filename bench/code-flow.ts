/**
 * The full authorization-code flow (issue 9): `GET /api/auth/oauth2/authorize` with a live
 * session cookie (→ 302 to the redirect URI with `code`), then the token exchange with its PKCE
 * verifier — what a signed-in person's browser and a public (`spa`) client do on every visit.
 * Driven by autocannon over 8 keep-alive connections; each connection runs the two requests in
 * turn, carrying the code and verifier from the first to the second in its per-connection
 * context, with a fresh PKCE pair, state and nonce per flow. The load generator shares the two
 * cores with the server, so its own work is kept small: the flows' authorize requests (PKCE pair,
 * state, nonce) are drawn up before the timed run, and answers are checked by pattern (302 with
 * a code; 200 with an access and an ID token) rather than parsed.
 *
 * Scope: `openid profile`, the usual OIDC sign-in, so every exchange signs two JWTs (the access
 * token and an ID token with `name`); no `offline_access`, so no refresh-token family is
 * started (the refresh path has its own scenario, bench/token.ts).
 * Eight people are signed up through the public API first, one session each; flows take them
 * in turn, so authorize reads several sessions and memberships, as on a real server.
 *
 * Target (2 cores): ≥ 700 flows/s.
 *
 * Then the token exchange on its own (issue 27): codes are collected first by authorize requests
 * over the same 8 connections (not measured), then exchanged over 8 connections while the
 * server's CPU is read. Each exchange signs two JWTs (access and ID token); judged: the server's
 * CPU per exchange at most 1.5 × those two signatures, measured in the same run with the same
 * key (bench/_signature.ts). A second batch, exchanged with the profiler on, splits the CPU into
 * signing, SQLite, HTTP and the rest (bench/_profile.ts).
 */
import type { BenchResult, Scenario } from './run.js';
import { cannon, codeFlow, cpuPerOp, createApplication, loadFigures, signUp, startBenchServer, type BenchServer } from './_server.js';
import { CODE_IN_LOCATION, exchangePrefix, flowLoad, prepareFlow, TOKENS_IN_BODY, type FlowContext } from './_code-flow.js';
import { cost, costFigures, perOpOrThrow } from './_cost.js';
import { mainThreadShares, profiled } from './_profile.js';
import { signatureCost, signingInputOf } from './_signature.js';

const CONNECTIONS = 8;
const PEOPLE = 8;
const SECONDS = 5;
const WARM_UP_FLOWS = 300;
const TARGET_FLOWS = 700;
/** Authorize requests drawn up before the timed run: more than it can use at twice the target. */
const PREPARED_FLOWS = 2 * TARGET_FLOWS * SECONDS;
const CLIENT = 'bench-spa';
const SCOPE = 'openid profile';
/** Codes exchanged in the measured batch and in the profiled one (codes live 60 s: both take a few). */
const EXCHANGES = 6_000;
const PROFILED_EXCHANGES = 3_000;
const TARGET_RATIO = 1.5;

const prepareOwnFlow = () => prepareFlow(CLIENT, SCOPE);
const EXCHANGE_PREFIX = exchangePrefix(CLIENT);

/** A code ready for its exchange, with the verifier of its challenge. */
interface IssuedCode {
  code: string;
  verifier: string;
}

/** `count` authorize requests over 8 connections (sessions in turn); returns their codes. */
async function authorizeCodes(server: BenchServer, cookies: string[], count: number): Promise<IssuedCode[]> {
  const prepared = Array.from({ length: count }, prepareOwnFlow);
  const codes: IssuedCode[] = [];
  let turn = 0;
  let failure: string | undefined;
  await cannon({
    url: server.url,
    connections: CONNECTIONS,
    amount: count,
    requests: [
      {
        method: 'GET',
        setupRequest(request, context: FlowContext) {
          const flow = prepared.pop()!;
          context.verifier = flow.verifier;
          return { ...request, path: flow.path, headers: { cookie: cookies[turn++ % cookies.length]! } };
        },
        onResponse(status, _body, context: FlowContext, headers) {
          const code = status === 302 ? CODE_IN_LOCATION.exec(String(headers?.location))?.[1] : undefined;
          if (code) codes.push({ code, verifier: context.verifier! });
          else failure ??= `authorize did not answer with a code: HTTP ${status} ${String(headers?.location)}`;
        },
      },
    ],
  });
  if (failure) throw new Error(`authorize failed: ${failure}`);
  return codes;
}

/** Exchanges every code once over 8 connections; fails on any answer without both tokens. */
async function exchangeLoad(server: BenchServer, codes: IssuedCode[]) {
  let next = 0;
  let failure: string | undefined;
  const run = await cannon({
    url: server.url,
    connections: CONNECTIONS,
    amount: codes.length,
    requests: [
      {
        method: 'POST',
        path: '/api/auth/oauth2/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        setupRequest(request) {
          const { code, verifier } = codes[next++]!;
          return { ...request, body: `${EXCHANGE_PREFIX}&code=${code}&code_verifier=${verifier}` };
        },
        onResponse(status, body) {
          if (status !== 200 || !TOKENS_IN_BODY.test(body)) failure ??= `token exchange: HTTP ${status} ${body}`;
        },
      },
    ],
  });
  if (failure) throw new Error(`code exchange failed: ${failure}`);
  return run;
}

async function run(): Promise<BenchResult[]> {
  const server = await startBenchServer('code-flow', { GATEHOUSE_BENCH_METRICS: '1' });
  try {
    await createApplication(server, CLIENT);
    const cookies: string[] = [];
    for (let i = 0; i < PEOPLE; i++) cookies.push(await signUp(server, `person${i}@example.com`, CLIENT));
    // One flow through fetch first: a failure here explains itself better than under load.
    const { id_token: idToken } = await codeFlow(server, CLIENT, cookies[0]!, SCOPE);

    await flowLoad(server, { clientId: CLIENT, scope: SCOPE, cookies, prepared: [] }, { connections: CONNECTIONS, amount: 2 * WARM_UP_FLOWS });
    const prepared = Array.from({ length: PREPARED_FLOWS }, prepareOwnFlow);
    const before = server.cpu();
    const { flows, seconds, clientCpuMs } = await flowLoad(server, { clientId: CLIENT, scope: SCOPE, cookies, prepared }, { connections: CONNECTIONS, duration: SECONDS });
    const { figures, ...timing } = loadFigures(flows, seconds, cpuPerOp(before, server.cpu(), flows.length), clientCpuMs);

    const codes = await authorizeCodes(server, cookies, EXCHANGES);
    const cpu0 = server.cpu();
    const exchanges = await exchangeLoad(server, codes);
    const perOp = perOpOrThrow(cpu0, server.cpu(), exchanges.latencies.length);
    const profileCodes = await authorizeCodes(server, cookies, PROFILED_EXCHANGES);
    const { profile } = await profiled(server, () => exchangeLoad(server, profileCodes));
    // The ID token is the longer of the two signing inputs; both are about a signature's size apart.
    const signature = await signatureCost(server.dataDir, signingInputOf(idToken!));
    const exchangeCost = cost(perOp, mainThreadShares(profile), signature, 2);
    const exchange = loadFigures(exchanges.latencies, exchanges.result.duration, perOp, exchanges.clientCpuMs);
    return [
      {
        scenario: 'authorization-code flow, 8 connections',
        ...timing,
        extra: { connections: CONNECTIONS, ...figures },
        target: `≥ ${TARGET_FLOWS} flows/s`,
        met: timing.throughput >= TARGET_FLOWS,
      },
      {
        scenario: 'code exchange (access + ID token), 8 connections',
        throughput: exchange.throughput,
        p50Ms: exchange.p50Ms,
        p99Ms: exchange.p99Ms,
        cpuSecondsPer1k: exchange.cpuSecondsPer1k,
        cost: exchangeCost,
        measured: `${exchangeCost.ratio.toFixed(2)} × 2 signatures (${exchangeCost.cpuMs.toFixed(3)} / 2 × ${exchangeCost.signatureMs.toFixed(3)} ms)`,
        extra: { connections: CONNECTIONS, ...exchange.figures, ...costFigures(exchangeCost) },
        target: `CPU ≤ ${TARGET_RATIO} × its 2 signatures`,
        met: exchangeCost.ratio <= TARGET_RATIO,
      },
    ];
  } finally {
    await server.stop();
  }
}

export const scenario: Scenario = {
  name: 'code-flow',
  description: 'authorize with a live session (302 with code), then the PKCE code exchange with an ID token, over 8 connections',
  run,
};
