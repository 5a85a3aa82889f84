/**
 * Client-credentials grants (issue 24): a machine client (`web`, Basic authentication) asks for
 * access tokens for itself over 8 keep-alive connections, against refresh-token grants on the
 * same server as the reference (the token scenario's load). The two loads alternate, twice each,
 * so a burst of other work on the shared machine weighs on both alike.
 *
 * A client-credentials grant costs the client-secret check (one SHA-256), one prepared audit
 * insert and one RS256 signature; a refresh costs a joined read, a conditional update, an insert
 * and one signature. Target: client credentials ≥ 90 % of the refresh throughput.
 */
import type { BenchResult, Scenario } from './run.js';
import { cannon, codeFlow, cpuPerOp, createApplication, loadFigures, refreshLoad, signUp, startBenchServer, type CannonRun } from './_server.js';

const CONNECTIONS = 8;
const SECONDS = 5;
const ROUNDS = 2;
const TARGET_RATIO = 0.9;

async function run(): Promise<BenchResult[]> {
  const server = await startBenchServer('client-credentials');
  try {
    await createApplication(server, 'bench');
    const res = await server.admin('POST', '/api/admin/applications', {
      id: 'machine', name: 'Machine', audience: 'https://machine.example.com/api', clientType: 'web',
      redirectUris: ['https://machine.example.com/cb'], grantTypes: ['client_credentials'],
    });
    if (res.status !== 201) throw new Error(`creating the machine client: HTTP ${res.status}`);
    const { clientSecret } = (await res.json()) as { clientSecret: string };
    const basic = `Basic ${Buffer.from(`machine:${clientSecret}`).toString('base64')}`;
    const cookie = await signUp(server, 'bench@example.com', 'bench');
    const pool: string[] = [];
    for (let i = 0; i < 2 * CONNECTIONS; i++) pool.push((await codeFlow(server, 'bench', cookie, 'openid offline_access')).refresh_token!);

    const machineLoad = async (options: { amount?: number; duration?: number }): Promise<CannonRun> => {
      let failure: string | undefined;
      const run = await cannon({
        url: server.url, connections: CONNECTIONS, ...options,
        requests: [{
          method: 'POST', path: '/api/auth/oauth2/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
          body: 'grant_type=client_credentials&resource=https%3A%2F%2Fmachine.example.com%2Fapi',
          onResponse(status, body) {
            if (status !== 200 || !body.includes('"access_token"')) failure ??= `HTTP ${status} ${body}`;
          },
        }],
      });
      if (failure) throw new Error(`client credentials failed: ${failure}`);
      return run;
    };

    // Warm both paths up (JIT, prepared statements).
    await refreshLoad(server, 'bench', pool, { connections: CONNECTIONS, amount: 500 });
    await machineLoad({ amount: 500 });

    const refresh: CannonRun[] = [];
    const machine: CannonRun[] = [];
    let refreshCpu = { totalMs: 0, mainMs: 0 };
    let machineCpu = { totalMs: 0, mainMs: 0 };
    const add = (a: typeof refreshCpu, b: ReturnType<typeof cpuPerOp>, ops: number) =>
      b ? { totalMs: a.totalMs + b.totalMs * ops, mainMs: a.mainMs + b.mainMs * ops } : a;
    for (let round = 0; round < ROUNDS; round++) {
      let c0 = server.cpu();
      const r = await refreshLoad(server, 'bench', pool, { connections: CONNECTIONS, duration: SECONDS });
      let c1 = server.cpu();
      refresh.push(r);
      refreshCpu = add(refreshCpu, cpuPerOp(c0, c1, r.latencies.length), r.latencies.length);
      c0 = server.cpu();
      const m = await machineLoad({ duration: SECONDS });
      c1 = server.cpu();
      machine.push(m);
      machineCpu = add(machineCpu, cpuPerOp(c0, c1, m.latencies.length), m.latencies.length);
    }

    const merged = (runs: CannonRun[], cpu: typeof refreshCpu) => {
      const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
      const seconds = runs.reduce((s, r) => s + r.result.duration, 0);
      const clientMs = runs.reduce((s, r) => s + r.clientCpuMs, 0);
      return loadFigures(latencies, seconds, { totalMs: cpu.totalMs / latencies.length, mainMs: cpu.mainMs / latencies.length }, clientMs);
    };
    const ref = merged(refresh, refreshCpu);
    const cc = merged(machine, machineCpu);
    const ratio = cc.throughput / ref.throughput;
    const { figures: refFigures, ...refTiming } = ref;
    const { figures: ccFigures, ...ccTiming } = cc;
    return [
      { scenario: 'refresh grant (reference), 8 connections', ...refTiming, extra: { connections: CONNECTIONS, ...refFigures }, target: 'reference', met: true },
      {
        scenario: 'client credentials, 8 connections', ...ccTiming,
        measured: `${(ratio * 100).toFixed(0)} % of refresh`,
        extra: { connections: CONNECTIONS, ratio: Number(ratio.toFixed(3)), ...ccFigures },
        target: `≥ ${TARGET_RATIO * 100} % of refresh throughput`,
        met: ratio >= TARGET_RATIO,
      },
    ];
  } finally {
    await server.stop();
  }
}

export const scenario: Scenario = {
  name: 'client-credentials',
  description: 'client-credentials grants against refresh grants on the same server, 8 connections, alternating',
  run,
};
