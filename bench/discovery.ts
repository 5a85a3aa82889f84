/**
 * JWKS and discovery (issue 9): `GET /api/auth/jwks` and `GET /.well-known/openid-configuration`
 * from autocannon over 16 keep-alive connections, each for a few seconds after a warm-up, and
 * `GET /healthz` the same way as the reference: Fastify's per-request floor with every global
 * hook, which the two documents (served from cached serialised bodies) should come close to.
 * Every answer must be a 200 with the expected body; the load generator shares the 2 cores.
 * Target (2 cores): ≥ 15,000 requests/s each; the JWKS also at most 0.1 ms of server CPU per
 * request (issue 27, `npm run bench -- jwks` runs this scenario), shown beside the cost of one
 * RS256 signature with the server's key measured in the same run (for scale: the JWKS signs
 * nothing) and split into HTTP, SQLite and the rest by a profiled second window.
 */
import type { BenchResult, Scenario } from './run.js';
import { cannon, cpuPerOp, loadAverage, percentile, startBenchServer, type BenchServer } from './_server.js';
import { cost, costFigures, perOpOrThrow, type Cost } from './_cost.js';
import { mainThreadShares, profiled } from './_profile.js';
import { signatureCost, type SignatureCost } from './_signature.js';

const CONNECTIONS = 16;
const SECONDS = 5;
const WARM_UP_SECONDS = 1;
const TARGET_RPS = 15_000;
const PROFILED_SECONDS = 3;
const TARGET_CPU_MS = 0.1;
/** The JWKS signs nothing: the signature measured for scale signs an access token's length of text. */
const SCALE_SIGNING_INPUT = 'x'.repeat(640);

interface Endpoint {
  name: string;
  path: string;
  /** A piece every answer's body must contain. */
  expect: string;
  checkTarget: boolean;
  /** Judge its CPU per request too, and split it (issue 27). */
  costed?: boolean;
}

const ENDPOINTS: Endpoint[] = [
  { name: 'healthz (per-request floor)', path: '/healthz', expect: '"status":"ok"', checkTarget: false },
  { name: 'JWKS', path: '/api/auth/jwks', expect: '"kty":"RSA"', checkTarget: true, costed: true },
  { name: 'discovery document', path: '/.well-known/openid-configuration', expect: '"jwks_uri":', checkTarget: true },
];

async function measure(server: BenchServer, endpoint: Endpoint, signature: SignatureCost): Promise<BenchResult> {
  let wrong = 0;
  const options = {
    url: `${server.url}${endpoint.path}`,
    connections: CONNECTIONS,
    requests: [
      {
        onResponse: (status: number, body: string) => {
          if (status !== 200 || !body.includes(endpoint.expect)) wrong++;
        },
      },
    ],
  };
  await cannon({ ...options, duration: WARM_UP_SECONDS });
  const before = server.cpu();
  const run = await cannon({ ...options, duration: SECONDS });
  const after = server.cpu();
  const requests = run.latencies.length;
  const throughput = requests / run.result.duration;
  const cpu = cpuPerOp(before, after, requests);
  let c: Cost | undefined;
  if (endpoint.costed) {
    const { profile } = await profiled(server, () => cannon({ ...options, duration: PROFILED_SECONDS }));
    c = cost(perOpOrThrow(before, after, requests), mainThreadShares(profile), signature, 0);
  }
  const cpuMet = !c || c.cpuMs <= TARGET_CPU_MS;
  return {
    scenario: endpoint.name,
    throughput,
    p50Ms: percentile(run.latencies, 50),
    p99Ms: percentile(run.latencies, 99),
    ...(cpu ? { cpuSecondsPer1k: cpu.totalMs } : {}),
    // What the server's CPU per request allows on one core (the load generator has the other):
    // the figure to read when other work on the machine holds the throughput down.
    ...(c ? { cost: c } : {}),
    measured: wrong
      ? `${wrong} wrong answers`
      : c
        ? `${c.cpuMs.toFixed(3)} ms CPU/request, one-core ceiling ${Math.round(1000 / c.mainMs).toLocaleString('en')}/s`
        : cpu
          ? `one-core ceiling ${Math.round(1000 / cpu.mainMs).toLocaleString('en')}/s`
          : '',
    extra: {
      connections: CONNECTIONS,
      requests,
      'wrong answers': wrong,
      'server CPU µs/request': cpu ? Number((cpu.totalMs * 1000).toFixed(1)) : 'n/a',
      // Requests/s one core of this server could answer: the ceiling on an idle machine where
      // the load generator has the other core.
      'one-core ceiling req/s': cpu ? Math.round(1000 / cpu.mainMs) : 'n/a',
      'load avg': loadAverage(),
      ...(c ? costFigures(c) : {}),
    },
    target: endpoint.checkTarget
      ? `≥ ${TARGET_RPS.toLocaleString('en')}/s${endpoint.costed ? `, CPU ≤ ${TARGET_CPU_MS} ms/request` : ''}`
      : 'reference',
    met: wrong === 0 && (!endpoint.checkTarget || throughput >= TARGET_RPS) && cpuMet,
  };
}

async function run(): Promise<BenchResult[]> {
  const server = await startBenchServer('discovery', { GATEHOUSE_BENCH_METRICS: '1' });
  try {
    const signature = await signatureCost(server.dataDir, SCALE_SIGNING_INPUT);
    const results: BenchResult[] = [];
    for (const endpoint of ENDPOINTS) results.push(await measure(server, endpoint, signature));
    return results;
  } finally {
    await server.stop();
  }
}

export const scenario: Scenario = {
  name: 'discovery',
  description: `JWKS and discovery (and /healthz for reference) over ${CONNECTIONS} keep-alive connections`,
  run,
};
