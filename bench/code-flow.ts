/**
 * The full authorization-code flow (issue 9): `GET /api/auth/oauth2/authorize` with a live
 * session cookie (→ 302 to the redirect URI with `code`), then the token exchange with its PKCE
 * verifier — what a signed-in person's browser and a public (`spa`) client do on every visit.
 * Driven by autocannon over 8 keep-alive connections; each connection runs the two requests in
 * turn, carrying the code and verifier from the first to the second in its per-connection
 * context, with a fresh PKCE pair, state and nonce per flow.
 *
 * Scope: `openid profile`, the usual OIDC sign-in, so every exchange signs two JWTs (the access
 * token and an ID token with `name`); no `offline_access`, so no refresh-token family is
 * started (the refresh path has its own scenario, bench/token.ts).
 * Eight people are signed up through the public API first, one session each; flows take them
 * in turn, so authorize reads several sessions and memberships, as on a real server.
 *
 * Target (2 cores): ≥ 700 flows/s.
 */
import type autocannon from 'autocannon';
import type { BenchResult, Scenario } from './run.js';
import {
  authorizePath, cannon, codeExchangeBody, codeFlow, codeFrom, cpuPerOp, createApplication, loadFigures, pkcePair,
  signUp, startBenchServer, type BenchServer,
} from './_server.js';

const CONNECTIONS = 8;
const PEOPLE = 8;
const SECONDS = 5;
const WARM_UP_FLOWS = 300;
const TARGET_FLOWS = 700;
const CLIENT = 'bench-spa';
const SCOPE = 'openid profile';

interface FlowContext {
  started?: number;
  verifier?: string;
  code?: string;
}

/** Runs code flows; returns each completed flow's latency (ms, sorted) and the run's seconds. */
async function flowLoad(server: BenchServer, cookies: string[], options: Partial<autocannon.Options>) {
  let turn = 0;
  let failure: string | undefined;
  const flows: number[] = [];
  const { result, clientCpuMs } = await cannon({
    url: server.url,
    ...options,
    requests: [
      {
        method: 'GET',
        setupRequest(request, context: FlowContext) {
          const { verifier, challenge } = pkcePair();
          context.started = performance.now();
          context.verifier = verifier;
          return { ...request, path: authorizePath(CLIENT, SCOPE, challenge), headers: { cookie: cookies[turn++ % cookies.length]! } };
        },
        onResponse(status, _body, context: FlowContext, headers) {
          try {
            context.code = codeFrom(status, headers?.location);
          } catch (error) {
            failure ??= (error as Error).message;
          }
        },
      },
      {
        method: 'POST',
        path: '/api/auth/oauth2/token',
        setupRequest(request, context: FlowContext) {
          return {
            ...request,
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: codeExchangeBody(CLIENT, context.code ?? 'missing', context.verifier ?? 'missing'),
          };
        },
        onResponse(status, body, context: FlowContext) {
          const tokens = status === 200 ? (JSON.parse(body) as { access_token?: string; id_token?: string }) : {};
          if (!tokens.access_token || !tokens.id_token) failure ??= `token exchange: HTTP ${status} ${body}`;
          else flows.push(performance.now() - context.started!);
        },
      },
    ],
  });
  if (failure) throw new Error(`code flow failed: ${failure}`);
  return { flows: flows.sort((a, b) => a - b), seconds: result.duration, clientCpuMs };
}

async function run(): Promise<BenchResult[]> {
  const server = await startBenchServer('code-flow');
  try {
    await createApplication(server, CLIENT);
    const cookies: string[] = [];
    for (let i = 0; i < PEOPLE; i++) cookies.push(await signUp(server, `person${i}@example.com`, CLIENT));
    // One flow through fetch first: a failure here explains itself better than under load.
    await codeFlow(server, CLIENT, cookies[0]!, SCOPE);

    await flowLoad(server, cookies, { connections: CONNECTIONS, amount: 2 * WARM_UP_FLOWS });
    const before = server.cpu();
    const { flows, seconds, clientCpuMs } = await flowLoad(server, cookies, { connections: CONNECTIONS, duration: SECONDS });
    const { figures, ...timing } = loadFigures(flows, seconds, cpuPerOp(before, server.cpu(), flows.length), clientCpuMs);
    return [
      {
        scenario: 'authorization-code flow, 8 connections',
        ...timing,
        extra: { connections: CONNECTIONS, ...figures },
        target: `≥ ${TARGET_FLOWS} flows/s`,
        met: timing.throughput >= TARGET_FLOWS,
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
