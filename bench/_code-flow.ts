/**
 * The OIDC authorization-code round trip under load, shared by the scenarios that drive it: its
 * own (bench/code-flow.ts) and those that measure another protocol against it in the same run
 * (bench/saml.ts). Each flow is `GET /api/auth/oauth2/authorize` with a live session cookie (→ 302
 * to the redirect URI with `code`), then the PKCE token exchange, carried per connection in
 * autocannon's context. The load generator shares the cores with the server, so authorize
 * requests (PKCE pair, state, nonce) are drawn up ahead and answers are checked by pattern (302
 * with a code; 200 with an access and an ID token) rather than parsed.
 */
import type autocannon from 'autocannon';
import { authorizePath, BENCH_REDIRECT, cannon, pkcePair, type BenchServer } from './_server.js';

/** One flow's authorize request, prepared ahead: its path and the PKCE verifier for the exchange. */
export interface PreparedFlow {
  path: string;
  verifier: string;
}

export function prepareFlow(clientId: string, scope: string): PreparedFlow {
  const { verifier, challenge } = pkcePair();
  return { path: authorizePath(clientId, scope, challenge), verifier };
}

/** The fixed part of every exchange's form body of `clientId` (codeExchangeBody's, encoded once). */
export const exchangePrefix = (clientId: string) =>
  new URLSearchParams({ grant_type: 'authorization_code', redirect_uri: BENCH_REDIRECT, client_id: clientId }).toString();
export const CODE_IN_LOCATION = /[?&]code=([^&]+)/;
export const TOKENS_IN_BODY = /^\{"access_token":"[^"]+".*"id_token":"[^"]+"/;

export interface FlowContext {
  started?: number;
  verifier?: string;
  code?: string;
}

/**
 * Runs code flows of `clientId` with the sessions of `cookies` in turn, taking authorize requests
 * from `prepared` (then fresh ones); returns each completed flow's latency (ms, sorted), the
 * run's seconds and the load generator's CPU. Fails on any answer that is not a code, then both tokens.
 */
export async function flowLoad(
  server: BenchServer,
  flow: { clientId: string; scope: string; cookies: string[]; prepared: PreparedFlow[] },
  options: Partial<autocannon.Options>,
) {
  const { clientId, scope, cookies, prepared } = flow;
  const prefix = exchangePrefix(clientId);
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
          const next = prepared.pop() ?? prepareFlow(clientId, scope);
          context.started = performance.now();
          context.verifier = next.verifier;
          return { ...request, path: next.path, headers: { cookie: cookies[turn++ % cookies.length]! } };
        },
        onResponse(status, _body, context: FlowContext, headers) {
          const code = status === 302 ? CODE_IN_LOCATION.exec(String(headers?.location))?.[1] : undefined;
          if (code) context.code = code;
          else failure ??= `authorize did not answer with a code: HTTP ${status} ${String(headers?.location)}`;
        },
      },
      {
        method: 'POST',
        path: '/api/auth/oauth2/token',
        setupRequest(request, context: FlowContext) {
          return {
            ...request,
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            // Code and verifier are base64url: nothing to escape (codeExchangeBody, without URLSearchParams).
            body: `${prefix}&code=${context.code ?? 'missing'}&code_verifier=${context.verifier ?? 'missing'}`,
          };
        },
        onResponse(status, body, context: FlowContext) {
          if (status !== 200 || !TOKENS_IN_BODY.test(body)) failure ??= `token exchange: HTTP ${status} ${body.slice(0, 200)}`;
          else flows.push(performance.now() - context.started!);
        },
      },
    ],
  });
  if (failure) throw new Error(`code flow failed: ${failure}`);
  return { flows: flows.sort((a, b) => a - b), seconds: result.duration, clientCpuMs };
}
