/**
 * What claims cost on the token path (issue 32, spec claims-and-groups.md): the CPU per grant of
 * a person in 50 directory groups, signing in to an application with 5 custom claims (one of each
 * source type; three also in the access token, two of them naming groups) and the `groups` scope,
 * against a person in no group signing in to an application with none, in the same run on the same
 * server and key. Both ask for `openid profile email offline_access` (the rich one `groups` too).
 *
 * Measured for the code exchange (access + ID token: the groups read, the claims, a larger ID
 * token) and for the refresh grant (the access token's custom claims computed again, the groups
 * read for them). The two kinds alternate, ROUNDS times each, so drift in the machine's load falls
 * on both; each figure is the server's CPU (all threads, /proc) over all its rounds.
 * Target: rich ≤ 1.1 × plain, for the exchange and for the refresh. Also reported: the size of
 * each ID token as sent (the contract keeps it under 8 KB).
 */
import type { BenchResult, Scenario } from './run.js';
import {
  authorizePath, cannon, codeFlow, createApplication, loadAverage, pkcePair, refreshLoad, signUp, startBenchServer, codeFrom, BENCH_REDIRECT,
  type BenchServer,
} from './_server.js';
import { perOpOrThrow } from './_cost.js';

const CONNECTIONS = 8;
const ROUNDS = 3;
const EXCHANGES_PER_ROUND = 1_500;
const REFRESH_SECONDS = 3;
const FAMILIES = 6 * CONNECTIONS;
const GROUPS = 50;
const TARGET_RATIO = 1.1;

interface Kind {
  name: 'plain' | 'rich';
  client: string;
  scope: string;
  cookie: string;
  pool: string[];
  exchange: { ms: number; ops: number };
  refresh: { ms: number; ops: number };
}

const payloadOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, any>;

async function expectOk(res: Response, what: string): Promise<void> {
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`);
}

/** The rich application's claims: one of each source type. */
const CUSTOM_CLAIMS = [
  { name: 'app_role', source: { type: 'role' }, inAccessToken: true },
  { name: 'team', source: { type: 'profileField', key: 'team' } },
  { name: 'on_call', source: { type: 'inGroup', group: 'group-07' }, inAccessToken: true },
  { name: 'level', source: { type: 'groupMap', map: [{ group: 'group-49', value: 'lead' }, { group: 'group-01', value: 'staff' }], default: 'guest' }, inAccessToken: true },
  { name: 'tier', source: { type: 'constant', value: { plan: 'gold', seats: 5 } } },
];

async function setUp(server: BenchServer): Promise<{ kinds: Kind[]; idTokenBytes: Record<Kind['name'], number> }> {
  await createApplication(server, 'plain');
  await createApplication(server, 'rich', { authPolicy: { signup_policy: 'open', profile_fields: [{ key: 'team', label: 'Team', type: 'string' }] } });
  for (let i = 0; i < GROUPS; i++) {
    await expectOk(await server.admin('POST', '/api/admin/groups', { id: `group-${String(i).padStart(2, '0')}`, name: `Group ${i}` }), 'creating a group');
  }
  await expectOk(await server.admin('PATCH', '/api/admin/applications/rich', { customClaims: CUSTOM_CLAIMS }), 'setting the custom claims');
  const kinds: Kind[] = [];
  for (const [name, scope] of [['plain', 'openid profile email offline_access'], ['rich', 'openid profile email groups offline_access']] as const) {
    const cookie = await signUp(server, `${name}@example.com`, name);
    const sub = payloadOf((await codeFlow(server, name, cookie, 'openid')).id_token!).sub as string;
    await expectOk(await server.admin('PATCH', `/api/admin/people/${sub}`, { givenName: 'Ada', familyName: 'Lovelace' }), 'naming the person');
    if (name === 'rich') {
      for (let i = 0; i < GROUPS; i++) await expectOk(await server.admin('PUT', `/api/admin/groups/group-${String(i).padStart(2, '0')}/members/${sub}`), 'adding to a group');
      const users = (await (await server.admin('GET', '/api/admin/applications/rich/users')).json()) as { users: { id: string }[] };
      await expectOk(await server.admin('PATCH', `/api/admin/applications/rich/users/${users.users[0]!.id}`, { profile: { team: 'blue' } }), 'setting the profile');
    }
    const pool: string[] = [];
    for (let i = 0; i < FAMILIES; i++) pool.push((await codeFlow(server, name, cookie, scope)).refresh_token!);
    kinds.push({ name, client: name, scope, cookie, pool, exchange: { ms: 0, ops: 0 }, refresh: { ms: 0, ops: 0 } });
  }
  // The rich person's tokens carry what they should (a benchmark of the wrong thing measures nothing).
  const [plain, rich] = kinds as [Kind, Kind];
  const richJwt = (await codeFlow(server, 'rich', rich.cookie, rich.scope)).id_token!;
  const idToken = payloadOf(richJwt);
  if (idToken.groups?.length !== GROUPS || idToken.level !== 'lead' || idToken.team !== 'blue') throw new Error(`rich ID token lacks its claims: ${JSON.stringify(idToken)}`);
  // The ID token as sent (compact JWS, bytes): the contract keeps it under 8 KB.
  const plainJwt = (await codeFlow(server, 'plain', plain.cookie, plain.scope)).id_token!;
  return { kinds, idTokenBytes: { plain: Buffer.byteLength(plainJwt), rich: Buffer.byteLength(richJwt) } };
}

/** `count` codes of the kind's person, authorized over 8 connections (not measured). */
async function authorizeCodes(server: BenchServer, kind: Kind, count: number): Promise<{ code: string; verifier: string }[]> {
  const prepared = Array.from({ length: count }, () => {
    const { verifier, challenge } = pkcePair();
    return { path: authorizePath(kind.client, kind.scope, challenge), verifier };
  });
  const codes: { code: string; verifier: string }[] = [];
  let failure: string | undefined;
  await cannon({
    url: server.url, connections: CONNECTIONS, amount: count,
    requests: [{
      method: 'GET',
      setupRequest(request, context: { verifier?: string }) {
        const flow = prepared.pop()!;
        context.verifier = flow.verifier;
        return { ...request, path: flow.path, headers: { cookie: kind.cookie } };
      },
      onResponse(status, _body, context: { verifier?: string }, headers) {
        try {
          codes.push({ code: codeFrom(status, new URL(String(headers?.location), BENCH_REDIRECT).toString()), verifier: context.verifier! });
        } catch (error) {
          failure ??= (error as Error).message;
        }
      },
    }],
  });
  if (failure) throw new Error(failure);
  return codes;
}

/** Exchanges the codes over 8 connections while the server's CPU is read; adds to the kind's totals. */
async function measureExchanges(server: BenchServer, kind: Kind, codes: { code: string; verifier: string }[]): Promise<void> {
  let next = 0;
  let failure: string | undefined;
  const before = server.cpu();
  const run = await cannon({
    url: server.url, connections: CONNECTIONS, amount: codes.length,
    requests: [{
      method: 'POST', path: '/api/auth/oauth2/token', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      setupRequest(request) {
        const { code, verifier } = codes[next++]!;
        return { ...request, body: `grant_type=authorization_code&redirect_uri=${encodeURIComponent(BENCH_REDIRECT)}&client_id=${kind.client}&code=${code}&code_verifier=${verifier}` };
      },
      onResponse(status, body) {
        if (status !== 200 || !body.includes('"id_token"')) failure ??= `HTTP ${status} ${body}`;
      },
    }],
  });
  if (failure) throw new Error(`${kind.name} exchange: ${failure}`);
  const perOp = perOpOrThrow(before, server.cpu(), run.latencies.length);
  kind.exchange.ms += perOp.totalMs * run.latencies.length;
  kind.exchange.ops += run.latencies.length;
}

async function measureRefreshes(server: BenchServer, kind: Kind): Promise<void> {
  const before = server.cpu();
  const run = await refreshLoad(server, kind.client, kind.pool, { connections: CONNECTIONS, duration: REFRESH_SECONDS });
  const perOp = perOpOrThrow(before, server.cpu(), run.latencies.length);
  kind.refresh.ms += perOp.totalMs * run.latencies.length;
  kind.refresh.ops += run.latencies.length;
}

async function run(): Promise<BenchResult[]> {
  const server = await startBenchServer('claims');
  try {
    const { kinds, idTokenBytes } = await setUp(server);
    // Warm-up (not counted): each path once under load.
    for (const kind of kinds) {
      await measureExchanges(server, kind, await authorizeCodes(server, kind, 300));
      await measureRefreshes(server, kind);
      kind.exchange = { ms: 0, ops: 0 };
      kind.refresh = { ms: 0, ops: 0 };
    }
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating which goes first, so neither always follows the other.
      const order = round % 2 === 0 ? kinds : [...kinds].reverse();
      for (const kind of order) await measureExchanges(server, kind, await authorizeCodes(server, kind, EXCHANGES_PER_ROUND));
      for (const kind of order) await measureRefreshes(server, kind);
    }
    const [plain, rich] = kinds as [Kind, Kind];
    const per = (t: { ms: number; ops: number }) => t.ms / t.ops;
    const load = loadAverage();
    return (['exchange', 'refresh'] as const).map((what) => {
      const ratio = per(rich[what]) / per(plain[what]);
      return {
        scenario: `claims: ${what === 'exchange' ? 'code exchange' : 'refresh'}, 50 groups + 5 custom claims vs none`,
        throughput: 0, p50Ms: 0, p99Ms: 0,
        cpuSecondsPer1k: per(rich[what]),
        measured: `${ratio.toFixed(3)} × (${per(rich[what]).toFixed(3)} / ${per(plain[what]).toFixed(3)} ms CPU per grant)`,
        extra: {
          'rich CPU ms/grant': per(rich[what]).toFixed(3), 'plain CPU ms/grant': per(plain[what]).toFixed(3),
          'rich grants': rich[what].ops, 'plain grants': plain[what].ops, rounds: ROUNDS, 'load avg': load,
          'rich ID token bytes': idTokenBytes.rich, 'plain ID token bytes': idTokenBytes.plain,
        },
        target: `≤ ${TARGET_RATIO} × a person with none`,
        met: ratio <= TARGET_RATIO,
      };
    });
  } finally {
    await server.stop();
  }
}

export const scenario: Scenario = {
  name: 'claims',
  description: 'code exchange and refresh for a person in 50 groups with 5 custom claims against one with none, CPU per grant in the same run',
  run,
};
