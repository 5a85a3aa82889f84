/**
 * JWKS and discovery (issue 9): `GET /api/auth/jwks` and `GET /.well-known/openid-configuration`
 * from autocannon over 16 keep-alive connections, each for a few seconds after a warm-up, and
 * `GET /healthz` the same way as the reference: Fastify's per-request floor with every global
 * hook, which the two documents (served from cached serialised bodies) should come close to.
 * Every answer must be a 200 with the expected body; the load generator shares the 2 cores.
 * Target (2 cores): ≥ 15,000 requests/s each.
 */
import type { BenchResult, Scenario } from './run.js';
import { cannon, cpuPerOp, loadAverage, percentile, startBenchServer, type BenchServer } from './_server.js';

const CONNECTIONS = 16;
const SECONDS = 5;
const WARM_UP_SECONDS = 1;
const TARGET_RPS = 15_000;

interface Endpoint {
  name: string;
  path: string;
  /** A piece every answer's body must contain. */
  expect: string;
  checkTarget: boolean;
}

const ENDPOINTS: Endpoint[] = [
  { name: 'healthz (per-request floor)', path: '/healthz', expect: '"status":"ok"', checkTarget: false },
  { name: 'JWKS', path: '/api/auth/jwks', expect: '"kty":"RSA"', checkTarget: true },
  { name: 'discovery document', path: '/.well-known/openid-configuration', expect: '"jwks_uri":', checkTarget: true },
];

async function measure(server: BenchServer, endpoint: Endpoint): Promise<BenchResult> {
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
  return {
    scenario: endpoint.name,
    throughput,
    p50Ms: percentile(run.latencies, 50),
    p99Ms: percentile(run.latencies, 99),
    ...(cpu ? { cpuSecondsPer1k: cpu.totalMs } : {}),
    // What the server's CPU per request allows on one core (the load generator has the other):
    // the figure to read when other work on the machine holds the throughput down.
    measured: wrong ? `${wrong} wrong answers` : cpu ? `one-core ceiling ${Math.round(1000 / cpu.mainMs).toLocaleString('en')}/s` : '',
    extra: {
      connections: CONNECTIONS,
      requests,
      'wrong answers': wrong,
      'server CPU µs/request': cpu ? Number((cpu.totalMs * 1000).toFixed(1)) : 'n/a',
      // Requests/s one core of this server could answer: the ceiling on an idle machine where
      // the load generator has the other core.
      'one-core ceiling req/s': cpu ? Math.round(1000 / cpu.mainMs) : 'n/a',
      'load avg': loadAverage(),
    },
    target: endpoint.checkTarget ? `≥ ${TARGET_RPS.toLocaleString('en')}/s` : 'reference',
    met: wrong === 0 && (!endpoint.checkTarget || throughput >= TARGET_RPS),
  };
}

async function run(): Promise<BenchResult[]> {
  const server = await startBenchServer('discovery');
  try {
    const results: BenchResult[] = [];
    for (const endpoint of ENDPOINTS) results.push(await measure(server, endpoint));
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
