/**
 * The OAuth server as several instances on one PostgreSQL database (issue 26): two `buildApp`
 * instances, each with its own pool, sharing one database on a PostgreSQL 15 server of this file
 * (test/helpers/postgres-server.ts). What only two instances can show:
 * - a code issued on one instance is exchanged on the other, exactly once when sent to both at once;
 * - a refresh token sent 20 times at once, split across both, rotates exactly once; the other 19
 *   are reuse, and the family is revoked (one conditional statement, never read-then-write);
 * - a device code polled by both at once gives out its tokens exactly once;
 * - a signing key rotated through one instance's admin API is served in the other's JWKS and,
 *   once it signs, used by the other's tokens, which verify on the first;
 * - an access token revoked on one instance is refused by the other's userinfo and introspection
 *   within about a second (the revoked list's cached latest expiry is polled).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { InjectOptions } from 'fastify';
import { buildApp } from '../../server/app.js';
import { testConfig } from '../../server/config.js';
import { openPostgres } from '../../server/db/postgres.js';
import type { Db } from '../../server/db/client.js';
import { closeStore } from '../../server/db/open.js';
import { auditLog, refreshTokenFamilies } from '../../server/db/schema.js';
import { many } from '../../server/db/store.js';
import { KEY_ACTIVATION_DELAY_MS } from '../../server/oauth/keys.js';
import { fixedClock } from '../../server/util/clock.js';
import { ADMIN_TOKEN, TEST_KEY_SECRET, type TestApp } from '../helpers/app.js';
import { sessionCookieOf, signUp } from '../helpers/accounts.js';
import { authorize, location, setUpClients, SPA_REDIRECT, spaParams, spaTokens, token, type Clients } from '../helpers/oauth-inject.js';
import { startPostgres, type PostgresServer } from '../helpers/postgres-server.js';

let server: PostgresServer;
const apps: TestApp[] = [];

beforeAll(async () => {
  server = await startPostgres();
}, 120_000);

afterAll(async () => {
  for (const t of apps) {
    await t.app.close();
    await closeStore(t.db);
  }
  server?.stop();
});

/** An instance on `url`: its own pool, its own clock (set to `at`), the same admin token. */
async function instance(url: string, at: Date): Promise<TestApp> {
  const db = (await openPostgres({ url, max: 8 })) as unknown as Db;
  const clock = fixedClock(at);
  const config = testConfig({ adminToken: ADMIN_TOKEN });
  config.env = { ...config.env, GATEHOUSE_KEY_SECRET: TEST_KEY_SECRET };
  const app = await buildApp({ db, config, clock });
  await app.ready();
  const t: TestApp = {
    app, db, clock, config,
    admin: (method, path, body, headers = {}) =>
      app.inject({ method, url: path, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers }, ...(body === undefined ? {} : { payload: body as InjectOptions['payload'] }) }),
  };
  apps.push(t);
  return t;
}

/** Two instances started together on a fresh database, and the clients and person of oauth-inject. */
async function pair(): Promise<{ one: TestApp; two: TestApp; clients: Clients }> {
  const url = await server.createDatabase();
  const at = new Date();
  const [one, two] = await Promise.all([instance(url, at), instance(url, at)]);
  const clients = await setUpClients(one);
  return { one, two, clients };
}

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

function form(t: TestApp, url: string, body: Record<string, string>, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: new URLSearchParams(body).toString(),
  });
}

const bearer = (accessToken: string) => ({ authorization: `Bearer ${accessToken}` });

/** Polls `check` every 100 ms until it holds, for at most `ms` (wall clock): caches are polled, not told. */
async function eventually(check: () => Promise<boolean>, ms = 3_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('OAuth on two instances sharing one PostgreSQL database', () => {
  it('a refresh token sent 20 times at once across both rotates once; the 19 others revoke the family', async () => {
    const { one, two, clients } = await pair();
    const first = await spaTokens(one, clients.cookie);
    // The refresh grant works on the other instance.
    const onTwo = await token(two, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: 'notes' });
    expect(onTwo.statusCode, onTwo.body).toBe(200);
    const live = onTwo.json().refresh_token as string;

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => token(i % 2 === 0 ? one : two, { grant_type: 'refresh_token', refresh_token: live, client_id: 'notes' })),
    );
    const statuses = answers.map((res) => res.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(19);
    for (const res of answers.filter((r) => r.statusCode === 400)) expect(res.json().error).toBe('invalid_grant');

    const families = await many(one.db.select().from(refreshTokenFamilies));
    expect(families).toHaveLength(1);
    expect(families[0]!.revokedAt).not.toBeNull();
    expect(families[0]!.revokedReason).toBe('refresh_token_reused');
    // The winner's successor belongs to the revoked family: refused on both.
    const successor = answers.find((r) => r.statusCode === 200)!.json().refresh_token as string;
    for (const t of [one, two]) {
      const res = await token(t, { grant_type: 'refresh_token', refresh_token: successor, client_id: 'notes' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_grant', error_description: 'The refresh token has been revoked.' });
    }
    // Exactly one reuse was reported (webhook + audit), however many instances saw it.
    expect(await many(one.db.select().from(auditLog).where(eq(auditLog.action, 'security.refresh_token_reused')))).toHaveLength(1);
  });

  it('a code issued on one instance is exchanged on the other, once: of 10 exchanges at once one wins, and a replay revokes its family', async () => {
    const { one, two, clients } = await pair();
    const { pkce, params } = spaParams();
    const code = location(await authorize(one, params, clients.cookie)).searchParams.get('code')!;
    const exchange = (t: TestApp) => token(t, { grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: 'notes', code_verifier: pkce.verifier });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => exchange(i % 2 === 0 ? two : one)));
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const res of answers.filter((r) => r.statusCode !== 200)) {
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_grant');
    }
    const won = answers.find((r) => r.statusCode === 200)!.json() as { refresh_token: string };
    // The family exists once its exchange committed; a replay now, on either instance, revokes it.
    const replay = await exchange(one);
    expect(replay.json()).toEqual({ error: 'invalid_grant', error_description: 'The authorization code has already been used.' });
    const refreshed = await token(two, { grant_type: 'refresh_token', refresh_token: won.refresh_token, client_id: 'notes' });
    expect(refreshed.json()).toEqual({ error: 'invalid_grant', error_description: 'The refresh token has been revoked.' });
    const families = await many(one.db.select().from(refreshTokenFamilies));
    expect(families.map((f) => f.revokedReason)).toEqual(['code_replayed']);
  });

  it('a signing key rotated through one instance is served by the other, signs its tokens once active, and they verify on the first', async () => {
    const { one, two, clients } = await pair();
    const kids = async (t: TestApp) => ((await t.app.inject({ method: 'GET', url: '/api/auth/jwks' })).json().keys as { kid: string }[]).map((k) => k.kid).sort();
    const oldKids = await kids(two);
    expect(oldKids).toHaveLength(3); // RS256, ES256, EdDSA
    expect(await kids(one)).toEqual(oldKids);

    const rotated = await one.admin('POST', '/api/admin/keys/rotate');
    expect(rotated.statusCode, rotated.body).toBe(201);
    const newKid = rotated.json().key.kid as string; // RS256's: the spa app signs with it
    const all = [...oldKids, ...(rotated.json().keys as { kid: string }[]).map((k) => k.kid)].sort();
    expect(all).toHaveLength(6);
    // Served by the instance that rotated at once, by the other within its poll.
    expect(await kids(one)).toEqual(all);
    await eventually(async () => JSON.stringify(await kids(two)) === JSON.stringify(all));

    // Once the hand-over time has come (both clocks), the other instance signs with the new key.
    one.clock.advance(KEY_ACTIVATION_DELAY_MS);
    two.clock.advance(KEY_ACTIVATION_DELAY_MS);
    const kidOf = (jwt: string) => (JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;
    let issued = '';
    await eventually(async () => {
      issued = (await spaTokens(two, clients.cookie, { scope: 'openid email' })).access_token;
      return kidOf(issued) === newKid;
    });
    // A token signed by the second instance verifies on the first.
    const info = await one.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo', headers: bearer(issued) });
    expect(info.statusCode, info.body).toBe(200);
    expect(info.json().email).toBe('ada@example.com');
  });

  it('an access token revoked on one instance is refused by the other within about a second', async () => {
    const { one, two, clients } = await pair();
    const tokens = await spaTokens(one, clients.cookie, { scope: 'openid email' });
    // The other instance has read the (empty) revoked list and cached its latest expiry.
    expect((await two.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo', headers: bearer(tokens.access_token) })).statusCode).toBe(200);

    const revoked = await one.app.inject({
      method: 'POST', url: '/api/auth/oauth2/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: tokens.access_token, client_id: 'notes' }).toString(),
    });
    expect(revoked.statusCode).toBe(200);
    const started = Date.now();
    await eventually(async () => (await two.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo', headers: bearer(tokens.access_token) })).statusCode === 401);
    expect(Date.now() - started).toBeLessThan(2_000);
    const refused = await two.app.inject({ method: 'GET', url: '/api/auth/oauth2/userinfo', headers: bearer(tokens.access_token) });
    expect(refused.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(refused.json().error).toBe('invalid_token');
  });

  it('a device approved on one instance and polled on both at once gives out its tokens once', async () => {
    const { one, two } = await pair();
    const created = await one.admin('POST', '/api/admin/applications', {
      id: 'tv', name: 'Lobby TV', audience: 'https://tv.example.com/api', clientType: 'native', redirectUris: ['http://127.0.0.1/callback'],
      grantTypes: [DEVICE_GRANT, 'refresh_token'], authPolicy: { signup_policy: 'open' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const started = await form(two, '/api/auth/oauth2/device_authorization', { client_id: 'tv', scope: 'openid offline_access' });
    expect(started.statusCode, started.body).toBe(200);
    const device = started.json() as { device_code: string; user_code: string };

    // The person approves on the first instance (the request was made on the second).
    const signedUp = await signUp(one, { email: 'grace@example.com', name: 'Grace', applicationId: 'tv' });
    expect(signedUp.statusCode).toBe(201);
    const session = `gatehouse_session=${sessionCookieOf(signedUp)}`;
    const page = await one.app.inject({ method: 'GET', url: `/device?user_code=${device.user_code}`, headers: { cookie: session } });
    expect(page.statusCode, page.body).toBe(200);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!;
    const csrfCookie = page.cookies.find((c) => c.name === 'gatehouse_csrf');
    const approved = await form(one, '/device', { csrf_token: csrf, user_code: device.user_code, action: 'approve' }, {
      cookie: [session, csrfCookie ? `gatehouse_csrf=${csrfCookie.value}` : ''].filter(Boolean).join('; '),
    });
    expect(approved.statusCode, approved.body).toBe(200);

    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => token(i % 2 === 0 ? one : two, { grant_type: DEVICE_GRANT, device_code: device.device_code, client_id: 'tv' })),
    );
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const res of answers.filter((r) => r.statusCode !== 200)) {
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_grant');
    }
    expect(await many(one.db.select().from(refreshTokenFamilies).where(eq(refreshTokenFamilies.applicationId, 'tv')))).toHaveLength(1);
  });
});
