/**
 * SAML single sign-on under load (issue 42, spec saml.md "Operations and limits"): `npm run bench -- saml`.
 *
 * One built `gatehouse serve` on a fresh data directory, two applications: a public OIDC client
 * (the baseline) and a SAML service provider (entity ID and ACS on https://sp.bench.example, the
 * default attributes, the Response and the Assertion both signed, as the defaults are). Eight
 * people are signed up to each, one session each; requests take the sessions in turn.
 *
 * - The SAML round trip: `GET /saml/sso?SAMLRequest=…&RelayState=…` (HTTP-Redirect binding, an
 *   AuthnRequest with a fresh ID, so the replay rule never refuses it) with a live session → 200,
 *   the auto-posting form with a `SAMLResponse` (a Response and an Assertion, each signed with
 *   RSA-SHA256 over exclusive c14n). That is the whole SP-initiated sign-on on the IdP's side when
 *   a session exists. The AuthnRequests are deflated and encoded before the timed run, so the load
 *   generator's own work stays small (it shares the two cores).
 * - The baseline, measured in the same run on the same server: the OIDC authorization-code round
 *   trip, authorize with the session (302 with a code) and the PKCE token exchange (access and ID
 *   token), as bench/code-flow.ts drives it (the same code: bench/_code-flow.ts).
 *
 * Each runs for SECONDS over 8 keep-alive connections after a warm-up; the server's CPU (all
 * threads, /proc) is read around each run. Judged: the SAML round trip's CPU ≤ 2 × the OIDC
 * round trip's, and ≥ 300 signed responses/s at 8 connections. Every answer is checked (a
 * benchmark of refusals measures nothing): 200 with a SAMLResponse form to the ACS, and for OIDC a
 * code, then both tokens. The load average is printed beside the figures: on a shared machine the
 * absolute rates mean little, the same-run ratio more. A last batch runs with the server's
 * profiler on and says where the main thread's time went (signing, SQLite, HTTP, the rest).
 */
import { deflateRawSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import type autocannon from 'autocannon';
import type { BenchResult, Scenario } from './run.js';
import { cannon, codeFlow, cpuPerOp, createApplication, loadAverage, loadFigures, signUp, startBenchServer, type BenchServer } from './_server.js';
import { flowLoad, prepareFlow } from './_code-flow.js';
import { mainThreadShares, profiled } from './_profile.js';

const CONNECTIONS = 8;
const PEOPLE = 8;
const SECONDS = Number(process.env.BENCH_SAML_SECONDS ?? 8);
const WARM_UP = 400;
/** Round trips in the profiled batch (not counted in the figures). */
const PROFILED = 800;
const TARGET_RATIO = 2;
const TARGET_PER_SECOND = 300;
const OIDC_CLIENT = 'bench-oidc';
const SAML_APP = 'bench-saml';
const SP = 'https://sp.bench.example';
const ENTITY_ID = `${SP}/saml/metadata`;
const ACS = `${SP}/saml/acs`;
const RELAY_STATE = 'bench';

const log = (line: string) => console.error(`  saml: ${line}`);

/** One AuthnRequest in the HTTP-Redirect binding, with a fresh ID: the request path. */
function ssoPath(): string {
  const xml =
    '<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ' +
    `ID="_${randomBytes(16).toString('hex')}" Version="2.0" IssueInstant="${new Date().toISOString()}" AssertionConsumerServiceURL="${ACS}" ` +
    `ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"><saml:Issuer>${ENTITY_ID}</saml:Issuer>` +
    '<samlp:NameIDPolicy Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent" AllowCreate="true"/></samlp:AuthnRequest>';
  return `/saml/sso?SAMLRequest=${encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString('base64'))}&RelayState=${RELAY_STATE}`;
}

/** The auto-posting form to the ACS with a Response: what every answer must be. */
const POSTED_RESPONSE = new RegExp(`<form method="post" action="${ACS.replaceAll('.', '\\.')}" data-auto-submit>[\\s\\S]*name="SAMLResponse" value="[A-Za-z0-9+/=]{2000,}"`);

/** SAML round trips over 8 connections: for `duration` s, or `amount` of them. */
async function samlLoad(server: BenchServer, cookies: string[], prepared: string[], options: Partial<autocannon.Options>) {
  let turn = 0;
  let failure: string | undefined;
  const run = await cannon({
    url: server.url,
    connections: CONNECTIONS,
    ...options,
    requests: [
      {
        method: 'GET',
        setupRequest(request) {
          return { ...request, path: prepared.pop() ?? ssoPath(), headers: { cookie: cookies[turn++ % cookies.length]! } };
        },
        onResponse(status, body) {
          if (status !== 200 || !POSTED_RESPONSE.test(body)) failure ??= `HTTP ${status} ${body.slice(0, 300)}`;
        },
      },
    ],
  });
  if (failure) throw new Error(`SAML sign-on failed: ${failure}`);
  return run;
}

const OIDC_SCOPE = 'openid profile email';

/** OIDC authorization-code round trips (authorize, then the exchange) over 8 connections (bench/_code-flow.ts); each flow's latency. */
function oidcLoad(server: BenchServer, cookies: string[], options: Partial<autocannon.Options>) {
  const prepared = Array.from({ length: 4000 }, () => prepareFlow(OIDC_CLIENT, OIDC_SCOPE));
  return flowLoad(server, { clientId: OIDC_CLIENT, scope: OIDC_SCOPE, cookies, prepared }, { connections: CONNECTIONS, ...options });
}

async function run(): Promise<BenchResult[]> {
  const server = await startBenchServer('saml', { GATEHOUSE_SIGN_UP_RATE_LIMIT: '1000', GATEHOUSE_BENCH_METRICS: '1' });
  try {
    await createApplication(server, OIDC_CLIENT);
    await createApplication(server, SAML_APP, { saml: { entityId: ENTITY_ID, acs: [{ url: ACS }] } });
    const oidcCookies: string[] = [];
    const samlCookies: string[] = [];
    for (let i = 0; i < PEOPLE; i++) {
      oidcCookies.push(await signUp(server, `oidc${i}@example.com`, OIDC_CLIENT));
      samlCookies.push(await signUp(server, `saml${i}@example.com`, SAML_APP));
    }
    // One of each through fetch first: a failure here explains itself better than under load.
    await codeFlow(server, OIDC_CLIENT, oidcCookies[0]!, OIDC_SCOPE);
    const first = await fetch(`${server.url}${ssoPath()}`, { headers: { cookie: samlCookies[0]! } });
    const firstBody = await first.text();
    if (first.status !== 200 || !POSTED_RESPONSE.test(firstBody)) throw new Error(`SAML sign-on: HTTP ${first.status} ${firstBody.slice(0, 300)}`);

    log(`warming up (load ${loadAverage()})`);
    await samlLoad(server, samlCookies, [], { amount: WARM_UP });
    await oidcLoad(server, oidcCookies, { amount: 2 * WARM_UP });

    // Alternating halves, so a change in the machine's load falls on both alike.
    const prepared = Array.from({ length: 6000 }, ssoPath);
    const saml = { ops: 0, seconds: 0, latencies: [] as number[], clientCpuMs: 0, cpuMs: 0, mainMs: 0 };
    const oidc = { ops: 0, seconds: 0, latencies: [] as number[], clientCpuMs: 0, cpuMs: 0, mainMs: 0 };
    for (let half = 0; half < 2; half++) {
      let before = server.cpu();
      const s = await samlLoad(server, samlCookies, prepared, { duration: SECONDS / 2 });
      const sCpu = cpuPerOp(before, server.cpu(), s.latencies.length);
      if (!sCpu) throw new Error('server CPU could not be read from /proc (Linux only)');
      saml.ops += s.latencies.length;
      saml.seconds += s.result.duration;
      saml.latencies.push(...s.latencies);
      saml.clientCpuMs += s.clientCpuMs;
      saml.cpuMs += sCpu.totalMs * s.latencies.length;
      saml.mainMs += sCpu.mainMs * s.latencies.length;
      before = server.cpu();
      const o = await oidcLoad(server, oidcCookies, { duration: SECONDS / 2 });
      const oCpu = cpuPerOp(before, server.cpu(), o.flows.length);
      if (!oCpu) throw new Error('server CPU could not be read from /proc (Linux only)');
      oidc.ops += o.flows.length;
      oidc.seconds += o.seconds;
      oidc.latencies.push(...o.flows);
      oidc.clientCpuMs += o.clientCpuMs;
      oidc.cpuMs += oCpu.totalMs * o.flows.length;
      oidc.mainMs += oCpu.mainMs * o.flows.length;
    }
    // Where a SAML round trip's main-thread time goes (bench/_profile.ts), from a batch of its own with the profiler on.
    const { value: profiledRun, profile } = await profiled(server, () => samlLoad(server, samlCookies, prepared, { amount: PROFILED }));
    const where = mainThreadShares(profile);
    const shares = Object.fromEntries(Object.entries(where.shares).map(([k, v]) => [`main thread: ${k}`, `${Math.round(100 * v)} %`]));
    log(`main thread over ${profiledRun.latencies.length} profiled round trips: ${Object.entries(shares).map(([k, v]) => `${k.replace('main thread: ', '')} ${v}`).join(', ')}; GC ${Math.round(100 * where.gcShare)} %; top of the rest: ${where.restTop.slice(0, 5).map((r) => `${r.source} ${Math.round(100 * r.share)} %`).join(', ')}`);
    const perOp = (r: typeof saml) => ({ totalMs: r.cpuMs / r.ops, mainMs: r.mainMs / r.ops });
    const samlFigures = loadFigures(saml.latencies.sort((a, b) => a - b), saml.seconds, perOp(saml), saml.clientCpuMs);
    const oidcFigures = loadFigures(oidc.latencies.sort((a, b) => a - b), oidc.seconds, perOp(oidc), oidc.clientCpuMs);
    const ratio = perOp(saml).totalMs / perOp(oidc).totalMs;
    log(`SAML ${perOp(saml).totalMs.toFixed(3)} ms CPU per round trip, OIDC ${perOp(oidc).totalMs.toFixed(3)} ms: ${ratio.toFixed(2)} ×; ${Math.round(samlFigures.throughput)} SAML responses/s (load ${loadAverage()})`);
    return [
      {
        scenario: 'SAML SSO round trip vs OIDC code flow (CPU, same run)',
        throughput: samlFigures.throughput,
        p50Ms: samlFigures.p50Ms,
        p99Ms: samlFigures.p99Ms,
        cpuSecondsPer1k: samlFigures.cpuSecondsPer1k,
        measured: `${ratio.toFixed(2)} × (${perOp(saml).totalMs.toFixed(3)} / ${perOp(oidc).totalMs.toFixed(3)} ms CPU)`,
        extra: {
          connections: CONNECTIONS,
          ...samlFigures.figures,
          'OIDC flows': oidc.ops,
          'OIDC flows/s': Math.round(oidcFigures.throughput),
          'OIDC server CPU ms/flow': oidcFigures.figures['server CPU ms/op'],
          'OIDC p50 ms': Number(oidcFigures.p50Ms.toFixed(2)),
          'OIDC p99 ms': Number(oidcFigures.p99Ms.toFixed(2)),
        },
        target: `CPU ≤ ${TARGET_RATIO} × an OIDC code round trip`,
        met: ratio <= TARGET_RATIO,
      },
      {
        scenario: 'SAML signed responses, 8 connections',
        throughput: samlFigures.throughput,
        p50Ms: samlFigures.p50Ms,
        p99Ms: samlFigures.p99Ms,
        cpuSecondsPer1k: samlFigures.cpuSecondsPer1k,
        extra: { connections: CONNECTIONS, ...samlFigures.figures, ...shares, 'main thread: GC': `${Math.round(100 * where.gcShare)} %` },
        target: `≥ ${TARGET_PER_SECOND} responses/s`,
        met: samlFigures.throughput >= TARGET_PER_SECOND,
      },
    ];
  } finally {
    await server.stop();
  }
}

export const scenario: Scenario = {
  name: 'saml',
  description: 'SP-initiated SAML sign-on (AuthnRequest in, signed Response out, session present) against an OIDC code round trip in the same run; signed responses/s at 8 connections',
  run,
};
