/**
 * Several Gatehouse instances on one PostgreSQL database (issue 26), as an operator runs them:
 * the BUILT server (`node dist/gatehouse.mjs serve`) as real processes, each on its own data
 * directory, with the same ADMIN_TOKEN, GATEHOUSE_KEY_SECRET and GATEHOUSE_ISSUER, behind a small
 * load balancer (test/helpers/balancer.ts) whose URL is that issuer. Only several instances can
 * show these: a start together on an empty database, an application made on one and used on the
 * other, a refresh race split across both, an instance killed under load, webhooks delivered once
 * across both, and a signing key rotated on one and served by the other.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oauth from 'oauth4webapi';
import postgres from 'postgres';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { sha256 } from '../../server/util/crypto.js';
import { startBalancer, type Balancer } from '../helpers/balancer.js';
import { freePort } from '../helpers/free-port.js';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.js';
import { CLI, cleanEnv, ensureBuilt, removeTempDirs, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';
import { eventually, startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import {
  ADMIN_TOKEN, adminCall, authorizationCode, codeExchange, postJson, refreshGrant, sessionCookie, sigkill, signUp,
  spaApplication, SPA_REDIRECT, tokenCall, type Answer,
} from '../resilience/real-server.js';

const KEY_SECRET = randomBytes(32).toString('base64url');
const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString('base64')}`;

let pg: PostgresServer;
let databaseUrl: string;
let sql: postgres.Sql;
let balancer: Balancer;
let receiver: Receiver;
let issuer: string;
/** Backend URLs the balancer forwards to, filled in as instances start. */
const backends: string[] = [];
const instances: ServerProcess[] = [];

/** One instance of `gatehouse serve` on the shared database (its own data directory). */
function startInstance(): Promise<ServerProcess> {
  return startServer(
    process.execPath,
    [CLI, 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', tempDir('gatehouse-multi-')],
    cleanEnv({
      GATEHOUSE_DATABASE_URL: databaseUrl,
      GATEHOUSE_DATABASE_POOL: '4',
      ADMIN_TOKEN,
      GATEHOUSE_KEY_SECRET: KEY_SECRET,
      GATEHOUSE_ISSUER: issuer,
      // As deployed (docs/postgresql.md): the balancer is trusted for the client's address.
      GATEHOUSE_TRUST_PROXY: 'loopback',
      GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: '1',
      // Both instances poll the outbox often, so they compete for every delivery.
      GATEHOUSE_WEBHOOK_POLL_MS: '50',
      GATEHOUSE_WEBHOOK_TIMEOUT_MS: '2000',
      GATEHOUSE_SIGN_UP_RATE_LIMIT: '100000',
      GATEHOUSE_SIGN_IN_RATE_LIMIT: '100000',
      GATEHOUSE_TOKEN_FAILURE_LIMIT: '100000',
    }),
    90_000,
  );
}

const urlOf = (i: number) => instances[i]!.url;

beforeAll(async () => {
  ensureBuilt();
  pg = await startPostgres();
  databaseUrl = await pg.createDatabase('gatehouse_multi');
  sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
  receiver = await startReceiver();
  // The issuer is the balancer's URL, known before the instances start.
  issuer = `http://127.0.0.1:${await freePort()}`;
  balancer = await startBalancer(backends, Number(new URL(issuer).port));
}, 300_000);

afterAll(async () => {
  await Promise.all(instances.map((s) => s.stop()));
  await balancer?.close();
  await receiver?.close();
  await sql?.end({ timeout: 1 });
  pg?.stop();
  removeTempDirs();
});

/** A person signed up for `appId` through instance `i`; resolves with the session cookie. */
async function person(i: number, appId: string, email = `p${randomBytes(4).toString('hex')}@example.com`): Promise<string> {
  const res = await signUp(urlOf(i), email, appId);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return sessionCookie(res);
}

/** A fresh refresh token of `appId`: authorized on instance `a`, exchanged on instance `b`. */
async function refreshToken(cookie: string, appId: string, a: number, b: number): Promise<string> {
  const code = await authorizationCode(urlOf(a), cookie, appId);
  const res = await tokenCall(urlOf(b), codeExchange(appId, code));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.refresh_token as string;
}

const invalidGrant = (res: Answer) => res.status === 400 && res.body?.error === 'invalid_grant';

describe('two instances on one PostgreSQL database', () => {
  it('started at the same moment on an empty database, both come up and the migrations ran once', async () => {
    expect((await sql`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`)[0]!.n).toBe(0);
    const started = await Promise.all([startInstance(), startInstance()]);
    instances.push(...started);
    backends.push(...started.map((s) => s.url));
    for (const s of started) {
      expect(s.line).toContain(`issuer ${issuer}`);
      const health = await fetch(`${s.url}/healthz`);
      expect(health.status).toBe(200);
      expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
    }
    // Each migration recorded once (a second run would have failed on its CREATE TABLEs, or added rows).
    const rows = await sql<{ hash: string }[]>`SELECT hash FROM drizzle.__drizzle_migrations`;
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.hash)).size).toBe(rows.length);
    // Both serve the same discovery document, under the one issuer.
    const docs = await Promise.all(started.map(async (s) => (await (await fetch(`${s.url}/.well-known/openid-configuration`)).json()) as { issuer: string }));
    expect(docs[0]).toEqual(docs[1]);
    expect(docs[0]?.issuer).toBe(issuer);
  });

  it('an application created through one instance is used on the other: a PKCE code flow whose steps alternate instances', async () => {
    const created = await adminCall(urlOf(0), 'POST', '/api/admin/applications', spaApplication('notes'));
    expect(created.status).toBe(201);
    expect((await adminCall(urlOf(1), 'GET', '/api/admin/applications/notes')).body).toMatchObject({ id: 'notes', clientType: 'spa' });

    // The relying party (oauth4webapi) talks to the issuer; the balancer alternates instances strictly.
    balancer.pick((n) => n % 2);
    const start = balancer.served.length;
    const as = await oauth.processDiscoveryResponse(new URL(issuer), await oauth.discoveryRequest(new URL(issuer), { [oauth.allowInsecureRequests]: true }));
    const client: oauth.Client = { client_id: 'notes' };
    const auth = oauth.None();
    const cookie = (await postJson(issuer, '/api/auth/sign-up/email', { email: 'ada@example.com', password: 'correct horse battery', name: 'Ada', applicationId: 'notes' })).headers
      .getSetCookie().find((c) => c.startsWith('gatehouse_session='))!.split(';')[0]!;
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorizeUrl = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({
      client_id: 'notes', redirect_uri: SPA_REDIRECT, response_type: 'code', scope: 'openid email offline_access', state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    })) authorizeUrl.searchParams.set(k, v);
    const hop = await fetch(authorizeUrl, { redirect: 'manual', headers: { cookie } });
    expect(hop.status).toBe(302);
    const callback = new URL(hop.headers.get('location')!);
    expect(callback.origin + callback.pathname).toBe(SPA_REDIRECT);
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as, client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, SPA_REDIRECT, verifier, { [oauth.allowInsecureRequests]: true }),
    );
    expect(tokens.refresh_token).toMatch(/^ghr_/);
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(claims).toMatchObject({ iss: issuer, aud: 'notes', email: 'ada@example.com' });
    const info = await oauth.processUserInfoResponse(
      as, client, claims.sub,
      await oauth.userInfoRequest(as, client, tokens.access_token, { [oauth.allowInsecureRequests]: true }),
    );
    expect(info).toMatchObject({ sub: claims.sub, email: 'ada@example.com' });
    const refreshed = await oauth.processRefreshTokenResponse(
      as, client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, { [oauth.allowInsecureRequests]: true }),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    // Discovery, sign-up, authorize, code exchange, userinfo and refresh: each step on the other
    // instance than the one before.
    const steps = balancer.served.slice(start);
    expect(steps).toHaveLength(6);
    expect(steps.slice(1).every((index, i) => index !== steps[i])).toBe(true);
  });

  it('a 20-way refresh race split across both instances has exactly one winner; the family is then revoked on both', async () => {
    const cookie = await person(1, 'notes');
    const token = await refreshToken(cookie, 'notes', 1, 0);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => tokenCall(urlOf(i % 2), refreshGrant('notes', token))));
    const winners = answers.filter((a) => a.status === 200);
    expect(winners).toHaveLength(1);
    expect(answers.filter(invalidGrant)).toHaveLength(19);
    // The losers are reuses: the winner's successor is dead too, on either instance.
    const successor = winners[0]!.body.refresh_token as string;
    for (const i of [0, 1]) {
      const res = await tokenCall(urlOf(i), refreshGrant('notes', successor));
      expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
    }
    const family = await sql<{ revoked: Date | null; reason: string | null }[]>`
      SELECT f.revoked_at AS revoked, f.revoked_reason AS reason FROM refresh_token_families f
      JOIN refresh_tokens t ON t.family_id = f.id WHERE t.token_hash = ${sha256(token)}`;
    expect(family).toHaveLength(1);
    expect(family[0]!.revoked).toBeInstanceOf(Date);
    expect(family[0]!.reason).toBe('refresh_token_reused');
  });

  it('SIGKILL of one instance under refresh load: every rotation it acknowledged still works on the other', async () => {
    const victim = await startInstance();
    instances.push(victim);
    const v = instances.length - 1;
    const cookie = await person(0, 'notes');
    const FAMILIES = 12;
    const latest: string[] = [];
    for (let i = 0; i < FAMILIES; i++) latest.push(await refreshToken(cookie, 'notes', 0, v));
    /** Families whose request was in flight when the instance died (its answer never came). */
    const inFlight = new Set<number>();
    let acknowledged = 0;
    let running = true;
    const chains = latest.map(async (_, f) => {
      while (running) {
        const res = await tokenCall(urlOf(v), refreshGrant('notes', latest[f]!)).catch(() => undefined);
        if (!res) {
          inFlight.add(f);
          return;
        }
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        latest[f] = res.body.refresh_token as string;
        acknowledged++;
      }
    });
    await eventually(() => acknowledged >= 200, 60_000);
    await sigkill(victim);
    running = false;
    await Promise.all(chains);

    for (let f = 0; f < FAMILIES; f++) {
      // The last token this client received is the newest of its family unless the request in
      // flight at the kill committed its rotation before the answer was lost: then presenting it
      // again is a reuse, as it would be on one instance.
      const [row] = await sql<{ rotated: Date | null }[]>`SELECT rotated_at AS rotated FROM refresh_tokens WHERE token_hash = ${sha256(latest[f]!)}`;
      expect(row, `family ${f}: the acknowledged token is stored`).toBeDefined();
      if (!inFlight.has(f)) expect(row!.rotated).toBeNull();
      const res = await tokenCall(urlOf(0), refreshGrant('notes', latest[f]!));
      if (row!.rotated === null) {
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        // And the successor rotates there too.
        expect((await tokenCall(urlOf(0), refreshGrant('notes', res.body.refresh_token))).status).toBe(200);
      } else {
        expect(invalidGrant(res)).toBe(true);
      }
    }
    instances.pop();
  }, 120_000);

  it('webhooks are delivered once per event across both instances', async () => {
    const created = await adminCall(urlOf(1), 'POST', '/api/admin/applications', {
      ...spaApplication('hooks'), webhookUrl: receiver.url, webhookSecret: WEBHOOK_SECRET,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const before = receiver.received.length;
    const PEOPLE = 30;
    const emails = Array.from({ length: PEOPLE }, (_, i) => `hook${i}@example.com`);
    await Promise.all(emails.map((email, i) => person(i % 2, 'hooks', email)));
    const received = await receiver.waitFor(before + PEOPLE, 30_000);
    // Both instances keep polling: give a duplicate time to show up.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const events = received.slice(before).map((r) => ({ id: r.headers['webhook-id'], body: JSON.parse(r.body) }));
    expect(events).toHaveLength(PEOPLE);
    expect(new Set(events.map((e) => e.id)).size).toBe(PEOPLE);
    expect(events.map((e) => e.body.type)).toEqual(emails.map(() => 'membership.created'));
    expect(events.map((e) => e.body.data.email).sort()).toEqual([...emails].sort());
    const rows = await sql<{ status: string; n: number }[]>`
      SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE application_id = 'hooks' GROUP BY status`;
    expect(rows).toEqual([{ status: 'succeeded', n: PEOPLE }]);
  });

  it('a signing key rotated on one instance is served by the other within seconds; tokens signed by either verify on both', async () => {
    const jwks = async (i: number) => (await (await fetch(`${urlOf(i)}/api/auth/jwks`)).json()) as JSONWebKeySet;
    const rotated = await adminCall(urlOf(0), 'POST', '/api/admin/keys/rotate');
    expect(rotated.status).toBe(201);
    const kid = rotated.body.key.kid as string;
    const t0 = Date.now();
    await eventually(async () => (await jwks(1)).keys.some((k) => k.kid === kid), 10_000);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect((await adminCall(urlOf(1), 'GET', '/api/admin/keys')).body.keys.find((k: { kid: string }) => k.kid === kid)).toMatchObject({ status: 'next' });

    // The new key signs after the JWKS cache lifetime (two minutes): move that hand-over to now
    // in the database rather than wait; each instance's key cache looks again within seconds.
    await sql`UPDATE signing_keys SET retired_at = now() WHERE kid <> ${kid} AND retired_at > now()`;
    const cookie = await person(0, 'notes');
    const signedBy = async (i: number) => {
      const res = await tokenCall(urlOf(i), codeExchange('notes', await authorizationCode(urlOf(i), cookie, 'notes')));
      expect(res.status).toBe(200);
      return res.body.access_token as string;
    };
    const tokens = [await eventually(async () => {
      const t = await signedBy(0);
      return decodeProtectedHeader(t).kid === kid && t;
    }, 15_000)];
    tokens.push(await eventually(async () => {
      const t = await signedBy(1);
      return decodeProtectedHeader(t).kid === kid && t;
    }, 15_000));
    for (const token of tokens) {
      for (const i of [0, 1]) {
        await jwtVerify(token, createLocalJWKSet(await jwks(i)), { issuer, audience: 'https://notes.example.com/api' });
        const info = await fetch(`${urlOf(i)}/api/auth/oauth2/userinfo`, { headers: { authorization: `Bearer ${token}` } });
        expect(info.status).toBe(200);
      }
    }
  }, 60_000);
});
