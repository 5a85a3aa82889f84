/**
 * Token introspection (issue 24, RFC 7662): an application's back end asks about its tokens over
 * 8 keep-alive connections (Basic client authentication). The access token introspected is the
 * costliest kind: born of a refresh-token family in a session, so each answer checks the
 * signature (node:crypto, a cached public key), the family, the session and the membership,
 * each one prepared primary-key read. A refresh-token run follows as a reference.
 * Target: ≥ 5,000 introspections/s on this machine.
 */
import type { BenchResult, Scenario } from './run.js';
import { BENCH_REDIRECT, cannon, codeFrom, cpuPerOp, loadFigures, signUp, startBenchServer, type BenchServer, type CannonRun } from './_server.js';

const CONNECTIONS = 8;
const SECONDS = 5;
const TARGET = 5_000;

async function load(server: BenchServer, basic: string, token: string, options: { amount?: number; duration?: number }): Promise<CannonRun> {
  let failure: string | undefined;
  const run = await cannon({
    url: server.url, connections: CONNECTIONS, ...options,
    requests: [{
      method: 'POST', path: '/api/auth/oauth2/introspect',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      body: `token=${encodeURIComponent(token)}`,
      onResponse(status, body) {
        if (status !== 200 || !body.startsWith('{"active":true')) failure ??= `HTTP ${status} ${body}`;
      },
    }],
  });
  if (failure) throw new Error(`introspection failed: ${failure}`);
  return run;
}

async function run(): Promise<BenchResult[]> {
  const server = await startBenchServer('introspect');
  try {
    const res = await server.admin('POST', '/api/admin/applications', {
      id: 'api', name: 'API', audience: 'https://api.example.com/api', clientType: 'web', redirectUris: [BENCH_REDIRECT],
      authPolicy: { signup_policy: 'open' },
    });
    if (res.status !== 201) throw new Error(`creating the application: HTTP ${res.status}`);
    const { clientSecret } = (await res.json()) as { clientSecret: string };
    const basic = `Basic ${Buffer.from(`api:${clientSecret}`).toString('base64')}`;
    const cookie = await signUp(server, 'bench@example.com', 'api');
    const query = new URLSearchParams({ response_type: 'code', client_id: 'api', redirect_uri: BENCH_REDIRECT, scope: 'openid offline_access' });
    const authorized = await fetch(`${server.url}/api/auth/oauth2/authorize?${query}`, { redirect: 'manual', headers: { cookie } });
    const code = codeFrom(authorized.status, authorized.headers.get('location'));
    const exchanged = await fetch(`${server.url}/api/auth/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: BENCH_REDIRECT }).toString(),
    });
    const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string };

    await load(server, basic, tokens.access_token, { amount: 2000 });
    const c0 = server.cpu();
    const access = await load(server, basic, tokens.access_token, { duration: SECONDS });
    const c1 = server.cpu();
    const refresh = await load(server, basic, tokens.refresh_token, { duration: SECONDS });
    const c2 = server.cpu();

    const row = (name: string, r: CannonRun, cpu: ReturnType<typeof cpuPerOp>, judged: boolean): BenchResult => {
      const { figures, ...timing } = loadFigures(r.latencies, r.result.duration, cpu, r.clientCpuMs);
      return {
        scenario: name, ...timing, extra: { connections: CONNECTIONS, ...figures },
        target: judged ? `≥ ${TARGET.toLocaleString('en')}/s` : 'reference', met: judged ? timing.throughput >= TARGET : true,
      };
    };
    return [
      row('introspect access token, 8 connections', access, cpuPerOp(c0, c1, access.latencies.length), true),
      row('introspect refresh token, 8 connections', refresh, cpuPerOp(c1, c2, refresh.latencies.length), false),
    ];
  } finally {
    await server.stop();
  }
}

export const scenario: Scenario = {
  name: 'introspect',
  description: 'RFC 7662 introspection of a family-born access token (and a refresh token), 8 connections',
  run,
};
