/**
 * `GET /metrics` (spec presets-and-operations.md, "Metrics"; docs/monitoring.md): who may read
 * it (GATEHOUSE_METRICS_TOKEN, GATEHOUSE_METRICS_ALLOW, proxies), the exact exposition of what
 * features count, and the state gauges read at scrape time — on both engines.
 */
import { readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, makeApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { PASSWORD, signIn } from '../helpers/accounts.js';
import { setUpClients, spaTokens, token } from '../helpers/oauth-inject.js';
import { ConfigError, loadConfig } from '../../server/config.js';
import { sweep } from '../../server/data-lifecycle/sweeper.js';
import { engineOf, exec } from '../../server/db/store.js';
import { eq } from 'drizzle-orm';
import { signingKeys } from '../../server/db/schema.js';
import { FORWARD_AUTH_CHECKS } from '../../server/forward-auth/check.js';
import { countBind } from '../../server/ldap/metrics.js';
import { queryPlan, usesPostgresIndex } from '../helpers/query-plan.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

/**
 * What each prom-client module server/metrics/metrics.ts imports by its internal path
 * (`prom-client/lib/metrics/<module>.js`, its default metrics one by one) registers, by name, in
 * its order (prom-client 15.x on Linux). The three `_total` gauges are registered and then removed
 * by the server (misnamed for Prometheus).
 */
const PROM_CLIENT_MODULES: Record<string, string[]> = {
  processCpuTotal: ['process_cpu_user_seconds_total', 'process_cpu_system_seconds_total', 'process_cpu_seconds_total'],
  processStartTime: ['process_start_time_seconds'],
  osMemoryHeap: ['process_resident_memory_bytes', 'process_virtual_memory_bytes', 'process_heap_bytes'],
  processOpenFileDescriptors: ['process_open_fds'],
  processMaxFileDescriptors: ['process_max_fds'],
  processResources: ['nodejs_active_resources', 'nodejs_active_resources_total'],
  processHandles: ['nodejs_active_handles', 'nodejs_active_handles_total'],
  processRequests: ['nodejs_active_requests', 'nodejs_active_requests_total'],
  heapSizeAndUsed: ['nodejs_heap_size_total_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_external_memory_bytes'],
  heapSpacesSizeAndUsed: ['nodejs_heap_space_size_total_bytes', 'nodejs_heap_space_size_used_bytes', 'nodejs_heap_space_size_available_bytes'],
  version: ['nodejs_version_info'],
  gc: ['nodejs_gc_duration_seconds'],
};
const REMOVED_BY_THE_SERVER = ['nodejs_active_resources_total', 'nodejs_active_handles_total', 'nodejs_active_requests_total'];

function scrape(t: TestApp, headers: Record<string, string> = {}, remoteAddress = '127.0.0.1') {
  return t.app.inject({ method: 'GET', url: '/metrics', headers, remoteAddress });
}

/** The sample lines of one metric family (no comments), as `name{labels} value`. */
function samples(text: string, family: string): string[] {
  return text.split('\n').filter((line) => !line.startsWith('#') && (line.startsWith(`${family}{`) || line.startsWith(`${family} `) || line.startsWith(`${family}_`)));
}

async function exposition(t: TestApp): Promise<string> {
  const res = await scrape(t);
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

describe('GET /metrics: who may read it', () => {
  it('answers loopback by default in the Prometheus text format, never cached', async () => {
    const t = await makeApp();
    const res = await scrape(t);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect((await scrape(t, {}, '::1')).statusCode).toBe(200);
    expect((await scrape(t, {}, '::ffff:127.0.0.1')).statusCode).toBe(200);
  });

  it('refuses other addresses with 403 metrics_not_allowed when no token is set', async () => {
    const t = await makeApp();
    const res = await scrape(t, {}, '192.0.2.7');
    expectProblem(res, 403, 'metrics_not_allowed');
    expect(res.json().detail).toBe('Metrics are not served to this address: add it to GATEHOUSE_METRICS_ALLOW, or set GATEHOUSE_METRICS_TOKEN and scrape with it.');
  });

  it('does not take a request forwarded by an untrusted proxy on loopback for a loopback client', async () => {
    const t = await makeApp();
    expectProblem(await scrape(t, { 'x-forwarded-for': '198.51.100.4' }), 403, 'metrics_not_allowed');
    expectProblem(await scrape(t, { forwarded: 'for=198.51.100.4' }), 403, 'metrics_not_allowed');
  });

  it('behind a trusted proxy, judges the client the proxy names', async () => {
    const t = await makeApp({ config: { trustProxy: ['loopback'], metrics: { token: undefined, allow: ['10.0.0.0/8'] } } });
    expect((await scrape(t, { 'x-forwarded-for': '10.1.2.3' })).statusCode).toBe(200);
    expectProblem(await scrape(t, { 'x-forwarded-for': '198.51.100.4' }), 403, 'metrics_not_allowed');
  });

  it('with GATEHOUSE_METRICS_TOKEN: the token from anywhere; without it 401 with a Bearer challenge; a wrong one 401 invalid_token', async () => {
    const t = await makeApp({ config: { metrics: { token: METRICS_TOKEN, allow: ['loopback'] } } });
    expect((await scrape(t, { authorization: `Bearer ${METRICS_TOKEN}` }, '203.0.113.5')).statusCode).toBe(200);

    const missing = await scrape(t, {}, '203.0.113.5');
    expectProblem(missing, 401, 'unauthorized');
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="gatehouse-metrics"');

    for (const authorization of [`Bearer ${METRICS_TOKEN}x`, `Bearer ${ADMIN_TOKEN}`, `Basic ${Buffer.from(`x:${METRICS_TOKEN}`).toString('base64')}`]) {
      const wrong = await scrape(t, { authorization }, '203.0.113.5');
      expectProblem(wrong, 401, 'invalid_token');
      expect(wrong.headers['www-authenticate']).toBe('Bearer realm="gatehouse-metrics", error="invalid_token"');
      // A credential presented is checked even from an allowed address.
      expectProblem(await scrape(t, { authorization }), 401, 'invalid_token');
    }
    // Loopback still needs no token.
    expect((await scrape(t)).statusCode).toBe(200);
  });

  it('GATEHOUSE_METRICS_ALLOW=none serves nobody without the token', async () => {
    const t = await makeApp({ config: { metrics: { token: undefined, allow: [] } } });
    expectProblem(await scrape(t), 403, 'metrics_not_allowed');
  });

  it('reads its settings with one clear sentence for each bad value', () => {
    expect(loadConfig({}).metrics).toEqual({ token: undefined, allow: ['loopback'] });
    expect(loadConfig({ GATEHOUSE_METRICS_ALLOW: '192.168.1.0/24, ::1,loopback', GATEHOUSE_METRICS_TOKEN: METRICS_TOKEN }).metrics).toEqual({
      token: METRICS_TOKEN,
      allow: ['192.168.1.0/24', '::1', 'loopback'],
    });
    expect(loadConfig({ GATEHOUSE_METRICS_ALLOW: 'none' }).metrics.allow).toEqual([]);
    expect(() => loadConfig({ GATEHOUSE_METRICS_ALLOW: '192.168.1.0/33' })).toThrow(
      new ConfigError('GATEHOUSE_METRICS_ALLOW must list addresses or CIDR ranges (or loopback, linklocal, uniquelocal), comma-separated, or be "none"; "192.168.1.0/33" has a prefix length out of range.'),
    );
    expect(() => loadConfig({ GATEHOUSE_METRICS_ALLOW: 'prometheus.lan' })).toThrow(
      new ConfigError('GATEHOUSE_METRICS_ALLOW must list addresses or CIDR ranges (or loopback, linklocal, uniquelocal), comma-separated, or be "none"; "prometheus.lan" is not an address or a CIDR range.'),
    );
    expect(() => loadConfig({ GATEHOUSE_METRICS_TOKEN: 'short' })).toThrow(new ConfigError('GATEHOUSE_METRICS_TOKEN must be at least 16 characters long.'));
    expect(() => loadConfig({ GATEHOUSE_METRICS_TOKEN: METRICS_TOKEN, GATEHOUSE_METRICS_TOKEN_FILE: '/nowhere' })).toThrow(
      new ConfigError('Set GATEHOUSE_METRICS_TOKEN or GATEHOUSE_METRICS_TOKEN_FILE, not both.'),
    );
    expect(() => loadConfig({ GATEHOUSE_METRICS_TOKEN_FILE: '/nowhere/metrics-token' })).toThrow(
      new ConfigError('GATEHOUSE_METRICS_TOKEN_FILE names /nowhere/metrics-token, which does not exist.'),
    );
  });
});

describe('GET /metrics: what is counted', () => {
  it('names every metric of the contract, with the process metrics of prom-client', async () => {
    const t = await makeApp();
    const text = await exposition(t);
    const families = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect(families).toEqual(expect.arrayContaining([
      'gatehouse_sign_ins_total counter',
      'gatehouse_tokens_issued_total counter',
      'gatehouse_token_errors_total counter',
      'gatehouse_forward_auth_checks_total counter',
      'gatehouse_ldap_binds_total counter',
      'gatehouse_directory_sync_runs_total counter',
      'gatehouse_directory_binds_total counter',
      'gatehouse_webhook_backlog gauge',
      'gatehouse_backchannel_logout_backlog gauge',
      'gatehouse_sessions_active gauge',
      'gatehouse_http_request_duration_seconds histogram',
      'gatehouse_event_loop_delay_seconds summary',
      'gatehouse_database_size_bytes gauge',
      'gatehouse_sweeper_last_run_timestamp_seconds gauge',
      'gatehouse_backup_last_success_timestamp_seconds gauge',
      'gatehouse_signing_key_age_seconds gauge',
      'gatehouse_tls_certificate_expiry_timestamp_seconds gauge',
      'process_cpu_seconds_total counter',
      'process_resident_memory_bytes gauge',
      'nodejs_heap_size_used_bytes gauge',
      // prom-client's lag gauges, read from the same histogram as the summary (decision 0345).
      'nodejs_eventloop_lag_seconds gauge',
      'nodejs_eventloop_lag_min_seconds gauge',
      'nodejs_eventloop_lag_max_seconds gauge',
      'nodejs_eventloop_lag_mean_seconds gauge',
      'nodejs_eventloop_lag_stddev_seconds gauge',
      'nodejs_eventloop_lag_p50_seconds gauge',
      'nodejs_eventloop_lag_p90_seconds gauge',
      'nodejs_eventloop_lag_p99_seconds gauge',
    ]));
    // Every metric of prom-client's modules the server registers one by one, but the three it removes.
    const names = families.map((f) => f.slice(0, f.indexOf(' ')));
    const fromModules = Object.values(PROM_CLIENT_MODULES).flat();
    expect(names).toEqual(expect.arrayContaining(fromModules.filter((name) => !REMOVED_BY_THE_SERVER.includes(name))));
    expect(names.filter((name) => REMOVED_BY_THE_SERVER.includes(name))).toEqual([]);
    // Each once, and the second scrape reads the histogram the first one reset: a p99 in seconds,
    // the same the summary's 0.99 quantile gives in that scrape.
    expect(families.filter((f) => f.startsWith('nodejs_eventloop_lag_p99_seconds '))).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 120));
    const again = await exposition(t);
    const p99 = Number(/^nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(again)?.[1]);
    expect(p99).toBeGreaterThan(0);
    expect(p99).toBe(Number(/^gatehouse_event_loop_delay_seconds\{quantile="0\.99"\} (\S+)$/m.exec(again)?.[1]));
  });

  it("every prom-client module metrics.ts imports by its internal path is there and registers its metrics by name (an upgrade that moves or changes one fails here)", async () => {
    const source = readFileSync(new URL('../../server/metrics/metrics.ts', import.meta.url), 'utf8');
    const imported = [...source.matchAll(/from '(prom-client\/lib\/[^']+)'/g)].map((m) => m[1]!);
    expect(imported.map((path) => /^prom-client\/lib\/metrics\/(\w+)\.js$/.exec(path)?.[1]).sort()).toEqual(Object.keys(PROM_CLIENT_MODULES).sort());
    for (const [module, names] of Object.entries(PROM_CLIENT_MODULES)) {
      const { default: register } = (await import(`prom-client/lib/metrics/${module}.js`)) as { default: (registry: Registry, config: object) => void };
      const registry = new Registry();
      register(registry, {});
      expect(registry.getMetricsAsArray().map((metric) => metric.name), module).toEqual(names);
    }
  });

  it('counts sign-ins, tokens issued and token errors, and times requests by route and status class', async () => {
    const t = await makeApp();
    const { cookie } = await setUpClients(t); // signs up (a sign-up is not a sign-in)
    expect((await signIn(t, { email: 'ada@example.com', applicationId: 'notes' })).statusCode).toBe(200);
    expect((await signIn(t, { email: 'ada@example.com', password: `${PASSWORD}!`, applicationId: 'notes' })).statusCode).toBe(401);
    expect((await signIn(t, { email: 'nobody@example.com', applicationId: 'notes' })).statusCode).toBe(401);
    const tokens = await spaTokens(t, cookie);
    expect((await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'notes' })).statusCode).toBe(200);
    expect((await token(t, { grant_type: 'refresh_token', refresh_token: 'nope', client_id: 'notes' })).statusCode).toBe(400);
    expect((await token(t, { grant_type: 'password', client_id: 'notes' })).statusCode).toBe(400);
    expect((await token(t, { grant_type: 'refresh_token', refresh_token: 'nope', client_id: 'billing', client_secret: 'wrong' })).statusCode).toBe(401);
    expect((await t.admin('GET', '/api/admin/applications')).statusCode).toBe(200);
    expect((await t.admin('GET', '/api/admin/applications/nope')).statusCode).toBe(404);

    const text = await exposition(t);
    expect(samples(text, 'gatehouse_sign_ins_total')).toEqual([
      'gatehouse_sign_ins_total{result="success",method="password"} 1',
      'gatehouse_sign_ins_total{result="failure",method="password"} 2',
    ]);
    expect(samples(text, 'gatehouse_tokens_issued_total')).toEqual([
      'gatehouse_tokens_issued_total{grant_type="authorization_code"} 1',
      'gatehouse_tokens_issued_total{grant_type="refresh_token"} 1',
    ]);
    expect(samples(text, 'gatehouse_token_errors_total')).toEqual([
      'gatehouse_token_errors_total{error="invalid_grant"} 1',
      'gatehouse_token_errors_total{error="unsupported_grant_type"} 1',
      'gatehouse_token_errors_total{error="invalid_client"} 1',
    ]);
    // Counted by the features that own them (forward auth, LDAP); none yet.
    expect(samples(text, 'gatehouse_forward_auth_checks_total')).toEqual([]);
    expect(samples(text, 'gatehouse_ldap_binds_total')).toEqual([]);

    const durations = samples(text, 'gatehouse_http_request_duration_seconds');
    // Route patterns, not paths; the admin POSTs of setUpClients share the list's route.
    expect(durations.filter((line) => line.includes('_count{'))).toEqual([
      'gatehouse_http_request_duration_seconds_count{route="/api/admin/applications",status_class="2xx"} 3',
      'gatehouse_http_request_duration_seconds_count{route="/api/auth/sign-up/email",status_class="2xx"} 1',
      'gatehouse_http_request_duration_seconds_count{route="/api/auth/sign-in/email",status_class="2xx"} 1',
      'gatehouse_http_request_duration_seconds_count{route="/api/auth/sign-in/email",status_class="4xx"} 2',
      'gatehouse_http_request_duration_seconds_count{route="/api/auth/oauth2/authorize",status_class="3xx"} 1',
      'gatehouse_http_request_duration_seconds_count{route="/api/auth/oauth2/token",status_class="2xx"} 2',
      'gatehouse_http_request_duration_seconds_count{route="/api/auth/oauth2/token",status_class="4xx"} 3',
      'gatehouse_http_request_duration_seconds_count{route="/api/admin/applications/:id",status_class="4xx"} 1',
    ]);
    expect(durations).toContain('gatehouse_http_request_duration_seconds_bucket{le="+Inf",route="/api/auth/oauth2/token",status_class="2xx"} 2');
    // 13 bounds and +Inf.
    expect(durations.filter((line) => line.includes('_bucket{') && line.includes('route="/api/admin/applications",status_class="2xx"'))).toHaveLength(14);
  });

  it('the plugins that count forward-auth checks and LDAP binds reach their counters through the context', async () => {
    const t = await makeApp();
    const checks = t.app.ctx.metrics.counter(FORWARD_AUTH_CHECKS);
    checks.inc({ result: 'allowed' });
    checks.inc({ result: 'allowed' });
    checks.inc({ result: 'redirected' });
    checks.inc({ result: 'refused' });
    countBind(t.app.ctx, 'success');
    countBind(t.app.ctx, 'invalid_credentials');
    countBind(t.app.ctx, 'busy');
    const text = await exposition(t);
    expect(samples(text, 'gatehouse_forward_auth_checks_total')).toEqual([
      'gatehouse_forward_auth_checks_total{result="allowed"} 2',
      'gatehouse_forward_auth_checks_total{result="redirected"} 1',
      'gatehouse_forward_auth_checks_total{result="refused"} 1',
    ]);
    expect(samples(text, 'gatehouse_ldap_binds_total')).toEqual([
      'gatehouse_ldap_binds_total{result="success"} 1',
      'gatehouse_ldap_binds_total{result="invalid_credentials"} 1',
      'gatehouse_ldap_binds_total{result="busy"} 1',
    ]);
  });

  it('reads the state gauges when scraped', async () => {
    const t = await makeApp({ clock: new Date('2026-03-01T12:00:00Z') });
    let text = await exposition(t);
    // The first key was made at start-up, at the fixed clock's time.
    expect(samples(text, 'gatehouse_signing_key_age_seconds')).toEqual(['gatehouse_signing_key_age_seconds 0']);
    expect(samples(text, 'gatehouse_sessions_active')).toEqual(['gatehouse_sessions_active 0']);
    expect(samples(text, 'gatehouse_webhook_backlog')).toEqual(['gatehouse_webhook_backlog 0']);
    expect(samples(text, 'gatehouse_backchannel_logout_backlog')).toEqual(['gatehouse_backchannel_logout_backlog 0']);
    // No pass yet; an in-memory store keeps no backups; no TLS.
    expect(samples(text, 'gatehouse_sweeper_last_run_timestamp_seconds')).toEqual([]);
    expect(samples(text, 'gatehouse_backup_last_success_timestamp_seconds')).toEqual([]);
    expect(samples(text, 'gatehouse_tls_certificate_expiry_timestamp_seconds')).toEqual([]);
    const size = Number(samples(text, 'gatehouse_database_size_bytes')[0]!.split(' ')[1]);
    expect(size).toBeGreaterThan(100_000);

    // Two people signed in (sessions), one of them signed out again; a member event waits for a
    // webhook receiver that is never reached (the worker does not run here).
    await t.admin('POST', '/api/admin/applications', {
      id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa',
      redirectUris: ['http://127.0.0.1:5173/callback'], authPolicy: { signup_policy: 'open' }, webhookUrl: 'https://hooks.example.com/in',
    });
    const { signUp } = await import('../helpers/accounts.js');
    await signUp(t, { email: 'ada@example.com', applicationId: 'notes' });
    const grace = await signUp(t, { email: 'grace@example.com', applicationId: 'notes' });
    const cookie = grace.cookies.find((c) => c.name === 'gatehouse_session')!.value;
    await t.app.inject({ method: 'POST', url: '/api/auth/sign-out', headers: { cookie: `gatehouse_session=${cookie}`, 'content-type': 'application/json' }, payload: '{}' });
    t.clock.advance(90 * 1000);
    await sweep(t.db, t.config, t.clock);

    text = await exposition(t);
    expect(samples(text, 'gatehouse_sessions_active')).toEqual(['gatehouse_sessions_active 1']);
    expect(samples(text, 'gatehouse_webhook_backlog')).toEqual(['gatehouse_webhook_backlog 2']);
    expect(samples(text, 'gatehouse_signing_key_age_seconds')).toEqual(['gatehouse_signing_key_age_seconds 90']);
    // One key per algorithm: the gauge shows the oldest (here an ES256 key made an hour earlier).
    await exec(t.db.update(signingKeys).set({ createdAt: new Date(t.clock.now().getTime() - 3600_000) }).where(eq(signingKeys.alg, 'ES256')));
    expect(samples(await exposition(t), 'gatehouse_signing_key_age_seconds')).toEqual(['gatehouse_signing_key_age_seconds 3600']);
    expect(samples(text, 'gatehouse_sweeper_last_run_timestamp_seconds')).toEqual([
      `gatehouse_sweeper_last_run_timestamp_seconds ${new Date('2026-03-01T12:01:30Z').getTime() / 1000}`,
    ]);
  });

  it('a gauge whose reader fails is left out of that scrape; the rest is served', async () => {
    const t = await makeApp();
    t.app.ctx.metrics.readState('webhookBacklog', () => {
      throw new Error('the store is gone');
    });
    const text = await exposition(t);
    expect(samples(text, 'gatehouse_webhook_backlog')).toEqual([]);
    expect(samples(text, 'gatehouse_sessions_active')).toEqual(['gatehouse_sessions_active 0']);
  });
});

describe('the state gauges read through indexes', () => {
  // The statements of ops/state-gauges.ts (accounts/session.ts countLiveSessions, webhooks/queries.ts outboxBacklog).
  const statements: [string, string, unknown[], RegExp, string][] = [
    ['live sessions', 'SELECT count(*) FROM sessions WHERE revoked_at IS NULL AND expires_at > ?', [Date.now()], /SEARCH sessions USING COVERING INDEX sessions_revoked_expires_idx \(revoked_at=\? AND expires_at>\?\)/, 'sessions_revoked_expires_idx'],
    ['webhook backlog', "SELECT count(*) FROM webhook_deliveries WHERE status = ?", ['pending'], /SEARCH webhook_deliveries USING COVERING INDEX webhook_deliveries_due_idx \(status=\?\)/, 'webhook_deliveries_due_idx'],
    ['logout backlog', "SELECT count(*) FROM backchannel_logouts WHERE status = ?", ['pending'], /SEARCH backchannel_logouts USING COVERING INDEX backchannel_logouts_due_idx \(status=\?\)/, 'backchannel_logouts_due_idx'],
  ];
  it.each(statements)('%s', async (_name, query, params, sqlite, postgresIndex) => {
    const t = await makeApp();
    const plan = await queryPlan(t.db, query, ...params);
    if (engineOf(t.db) === 'sqlite') expect(plan).toMatch(sqlite);
    else expect(usesPostgresIndex(plan, postgresIndex), plan).toBe(true);
  });
});
