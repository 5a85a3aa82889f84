/**
 * Years of data for the tables of spec grants-and-logout.md: every statement that the device
 * flow, client credentials, introspection and back-channel logout run is served by an index on
 * the tables that grow (EXPLAIN QUERY PLAN shows no SCAN of them), and the retention rules prune
 * expired device authorizations and old finished logout deliveries, and nothing else.
 */
import { openDatabase } from '../../server/db/client.js';
import { describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication, postJson, sessionCookieOf, signUp } from '../helpers/accounts.js';
import { authorize, location, token, WEB_REDIRECT } from '../helpers/oauth-inject.js';
import { me } from '../helpers/self-service.js';
import { backchannelLogouts, deviceAuthorizations } from '../../server/db/schema.js';
import { newId } from '../../server/util/ids.js';
import { sweep } from '../../server/data-lifecycle/sweeper.js';
import { logoutOutbox } from '../../server/oauth/backchannel/channel.js';
import { engineOf, exec, many } from '../../server/db/store.js';

const GROWING = [
  'device_authorizations', 'backchannel_logouts', 'session_clients', 'sessions', 'session_realms', 'refresh_tokens',
  'refresh_token_families', 'memberships', 'audit_log', 'people', 'webhook_deliveries',
];
const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';

/** Records the SQL of every statement the app prepares from here on. */
function recordStatements(t: TestApp): Set<string> {
  const seen = new Set<string>();
  const sqlite = t.db.$client;
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((source: string) => {
    seen.add(source);
    return prepare(source);
  }) as typeof sqlite.prepare;
  return seen;
}

function form(t: TestApp, url: string, body: Record<string, string>, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: new URLSearchParams(body).toString() });
}

describe('query plans', () => {
  it('every statement of the new flows searches the growing tables by an index', async () => {
    const t = await makeApp();
    await t.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: 'Suite' });
    const billing = await createApplication(t, {
      id: 'billing', audience: 'https://billing.example.com/api', clientType: 'web', redirectUris: [WEB_REDIRECT], ssoGroupId: 'suite',
      authPolicy: { signup_policy: 'open' }, grantTypes: ['authorization_code', 'refresh_token', 'client_credentials', DEVICE],
      backchannelLogoutUri: 'https://billing.example.com/bcl',
    });
    const secret = billing.clientSecret as string;
    // SQLite's query plans (EXPLAIN QUERY PLAN of every statement prepared); on PostgreSQL the flows still run and answer.
    const sqlite = engineOf(t.db) === 'sqlite';
    const seen = sqlite ? recordStatements(t) : new Set<string>();

    const res = await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: 'billing' });
    const cookie = `gatehouse_session=${sessionCookieOf(res)}`;
    const code = location(await authorize(t, { response_type: 'code', client_id: 'billing', redirect_uri: WEB_REDIRECT, scope: 'openid offline_access' }, cookie)).searchParams.get('code')!;
    const tokens = (await token(t, { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, client_id: 'billing', client_secret: secret })).json();
    const auth = { authorization: `Basic ${Buffer.from(`billing:${secret}`).toString('base64')}` };
    expect((await form(t, '/api/auth/oauth2/token', { grant_type: 'client_credentials' }, auth)).statusCode).toBe(200);
    for (const value of [tokens.access_token, tokens.refresh_token]) {
      expect((await form(t, '/api/auth/oauth2/introspect', { token: value }, auth)).json().active).toBe(true);
    }
    const device = (await form(t, '/api/auth/oauth2/device_authorization', { scope: 'openid' }, auth)).json();
    expect((await form(t, '/api/auth/oauth2/token', { grant_type: DEVICE, device_code: device.device_code }, auth)).statusCode).toBe(400);
    const page = await t.app.inject({ method: 'GET', url: `/device?user_code=${device.user_code}`, headers: { cookie } });
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!;
    const csrfCookie = `gatehouse_csrf=${page.cookies.find((c) => c.name === 'gatehouse_csrf')!.value}`;
    expect((await form(t, '/device', { csrf_token: csrf, user_code: device.user_code, action: 'approve' }, { cookie: `${cookie}; ${csrfCookie}` })).statusCode).toBe(200);
    t.clock.advance(6000);
    expect((await form(t, '/api/auth/oauth2/token', { grant_type: DEVICE, device_code: device.device_code }, auth)).statusCode).toBe(200);
    const member = (await t.admin('GET', '/api/admin/applications/billing/users')).json().users[0];
    expect((await me(t, 'POST', '/api/me/sessions/sign-out-all', cookie)).statusCode).toBe(200);
    expect((await t.admin('PATCH', `/api/admin/applications/billing/users/${member.id}`, { status: 'suspended' })).statusCode).toBe(200);
    expect((await postJson(t, '/api/auth/sign-out', undefined, { cookie })).statusCode).toBe(204);
    expect((await t.admin('GET', '/api/admin/applications/billing/backchannel-logouts?status=pending')).statusCode).toBe(200);
    const now = t.clock.now();
    await logoutOutbox.claimDue(t.db, now, new Date(now.getTime() + 60_000), 8, [], () => 8);
    await sweep(t.db, t.config, t.clock, { between: async () => {} });
    if (!sqlite) return;

    const scans: string[] = [];
    let explained = 0;
    // Explained on a fresh database of the same schema: the sweep's `PRAGMA optimize` has just
    // recorded statistics of these few-row tables, under which SQLite rightly reads them whole.
    const fresh = openDatabase(':memory:').$client;
    for (const source of seen) {
      // This issue's tables; the older statements these flows also run are issue 21's to index.
      if (!/^\s*(select|update|delete|insert)/i.test(source) || !/device_authorizations|backchannel_logouts|session_clients/.test(source)) continue;
      explained++;
      // drizzle writes every value as a `?` parameter; the plan does not depend on their values.
      const params = Array.from(source.matchAll(/\?/g), () => null);
      const plan = fresh.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...params) as { detail: string }[];
      for (const { detail } of plan) {
        const table = /^SCAN (\w+)/.exec(detail)?.[1];
        if (table && GROWING.includes(table)) scans.push(`${detail} ← ${source}`);
      }
    }
    fresh.close();
    expect(explained).toBeGreaterThanOrEqual(12);
    expect(scans).toEqual([]);
  });
});

describe('retention', () => {
  it('prunes expired device authorizations and finished logout deliveries older than 30 days; keeps the rest', async () => {
    const t = await makeApp();
    await createApplication(t, { id: 'tv', audience: 'https://tv.example.com/api', clientType: 'native', redirectUris: ['http://127.0.0.1/cb'] });
    const now = t.clock.now().getTime();
    const day = 86_400_000;
    const device = (id: string, expiresAt: number) => ({
      id, deviceCodeHash: `d-${id}`, userCodeHash: `u-${id}`, applicationId: 'tv', scope: 'openid', resource: 'https://tv.example.com/api',
      interval: 5, createdAt: new Date(expiresAt - 600_000), expiresAt: new Date(expiresAt),
    });
    await exec(t.db.insert(deviceAuthorizations).values([device('expired', now - 1), device('live', now + 60_000)]));
    const logout = (id: string, ageDays: number, status: 'pending' | 'succeeded' | 'failed') => ({
      id, applicationId: 'tv', subject: 'usr_x', sessionId: null, reason: 'sign_out', status,
      createdAt: new Date(now - ageDays * day), nextAttemptAt: new Date(now - ageDays * day),
    });
    await exec(t.db.insert(backchannelLogouts).values([
      logout('old-done', 31, 'succeeded'), logout('old-failed', 31, 'failed'), logout('old-pending', 31, 'pending'), logout('recent', 29, 'succeeded'),
    ]));
    // Enough expired device rows to need several batches.
    await exec(t.db.insert(deviceAuthorizations).values(Array.from({ length: 1200 }, () => device(newId('dev'), now - 1000))));

    const { pruned } = await sweep(t.db, t.config, t.clock, { between: async () => {} });
    expect({ devices: pruned['device authorizations'], logouts: pruned['back-channel logouts'] }).toEqual({ devices: 1201, logouts: 2 });
    expect(await many(t.db.select({ id: deviceAuthorizations.id }).from(deviceAuthorizations))).toEqual([{ id: 'live' }]);
    expect((await many(t.db.select({ id: backchannelLogouts.id }).from(backchannelLogouts))).map((r) => r.id).sort()).toEqual(['old-pending', 'recent']);
  });
});
