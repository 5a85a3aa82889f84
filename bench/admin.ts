/**
 * What a role check adds to an admin request (issue 33: ≤ 0.05 ms). The admin API's guard
 * (`requireAdmin`, server/http/admin-auth.ts) runs in-process on a real app (in-memory database)
 * for the same route — `GET /api/admin/applications/:id/users`, an app route a people manager may
 * call — with the admin token (no role to check: the baseline) and with a named administrator's
 * panel access token (the token's verification, from memory once verified; the session and grant
 * check, from memory between reads; the route's rule). The difference per call is the role
 * check's cost. Also reported: the rule alone (admin-policy.ts `needOf` + `personMay`), and an
 * API key's guard (a database read by hash), for comparison.
 */
import { loadavg } from 'node:os';
import type { FastifyRequest } from 'fastify';
import type { BenchResult, Scenario } from './run.js';
import { percentile } from './_server.js';
import { buildApp } from '../server/app.js';
import { testConfig } from '../server/config.js';
import { openDatabase } from '../server/db/client.js';
import { requireAdmin } from '../server/http/admin-auth.js';
import { needOf, personMay } from '../server/http/admin-policy.js';
import { KeyRing } from '../server/oauth/keys.js';
import { signAccessToken } from '../server/oauth/jwt.js';
import { PANEL_AUDIENCE, PANEL_CLIENT_ID } from '../server/administrators/panel-client.js';
import { eq } from 'drizzle-orm';
import { applications, sessions } from '../server/db/schema.js';
import { one } from '../server/db/store.js';

const ADMIN = 'bench-admin-token-0123456789abcdef';
const TARGET_MS = 0.05;
const CALLS = 20_000;
const ROUTE = '/api/admin/applications/:id/users';

async function run(): Promise<BenchResult[]> {
  const app = await buildApp({ db: openDatabase(':memory:'), config: testConfig({ adminToken: ADMIN }) });
  await app.ready();
  try {
    const call = (method: string, url: string, body?: unknown) =>
      app.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${ADMIN}` }, ...(body ? { payload: body as object } : {}) });
    const created = await call('POST', '/api/admin/applications', { id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', redirectUris: ['https://notes.example.com/cb'] });
    if (created.statusCode !== 201) throw new Error(`creating the application: HTTP ${created.statusCode}`);
    const owner = await call('POST', '/api/admin/setup/owner', { email: 'pat@example.com', name: 'Pat', password: 'correct horse battery staple' });
    if (owner.statusCode !== 201) throw new Error(`creating the owner: HTTP ${owner.statusCode} ${owner.body}`);
    const personId = owner.json().user.id as string;
    // A people manager is checked against the route's rule (an owner passes at the first line).
    const role = await call('PUT', `/api/admin/administrators/${personId}`, { role: 'owner' });
    if (role.statusCode !== 200) throw new Error(`role: HTTP ${role.statusCode}`);
    const key = await call('POST', '/api/admin/applications/notes/api-keys', { name: 'bench', scopes: ['users:read'] });
    const apiKey = key.json().key as string;

    // The panel's access token, as the code exchange issues it (signed with the server's keys).
    const session = (await one(app.ctx.db.select({ id: sessions.id }).from(sessions)))!;
    const panelApp = await one(app.ctx.db.select({ signingAlg: applications.signingAlg }).from(applications).where(eq(applications.id, PANEL_CLIENT_ID)));
    if (!panelApp) throw new Error('the panel application was not created');
    const panelToken = await signAccessToken(new KeyRing(app.ctx), {
      alg: panelApp.signingAlg, issuer: app.ctx.config.issuer, subject: personId, audience: PANEL_AUDIENCE, clientId: PANEL_CLIENT_ID, scope: 'openid offline_access',
      appUser: { id: 'mem_x', status: 'active', role: 'admin' }, sessionId: session.id, now: app.ctx.clock.now(), ttlSeconds: 600,
    });

    const requestWith = (token: string) =>
      ({ headers: { authorization: `Bearer ${token}` }, server: app, routeOptions: { url: ROUTE }, params: { id: 'notes' }, method: 'GET', is404: false }) as unknown as FastifyRequest;
    async function time(token: string): Promise<number[]> {
      const request = requestWith(token);
      await requireAdmin(request); // warm: verified, remembered
      const out: number[] = [];
      for (let i = 0; i < CALLS; i++) {
        const s = performance.now();
        await requireAdmin(request);
        out.push(performance.now() - s);
      }
      return out.sort((a, b) => a - b);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const baseline = await time(ADMIN);
    const panel = await time(panelToken);
    const keyed = await time(apiKey);

    const grant = { role: 'people_manager' as const, applications: [] };
    const s = performance.now();
    let allowed = 0;
    for (let i = 0; i < CALLS * 10; i++) if (personMay(grant, needOf('GET', ROUTE), 'notes')) allowed++;
    const ruleMs = (performance.now() - s) / (CALLS * 10);
    if (allowed !== CALLS * 10) throw new Error('the rule refused a people manager on a members route');

    const added = mean(panel) - mean(baseline);
    return [
      {
        scenario: 'admin role check',
        throughput: 1000 / mean(panel),
        p50Ms: percentile(panel, 50),
        p99Ms: percentile(panel, 99),
        measured: `${added.toFixed(4)} ms added per request`,
        extra: {
          'admin token guard mean ms': Number(mean(baseline).toFixed(4)),
          'panel token guard mean ms': Number(mean(panel).toFixed(4)),
          'panel token guard p50 ms': Number(percentile(panel, 50).toFixed(4)),
          'API key guard mean ms (database read)': Number(mean(keyed).toFixed(4)),
          'rule alone ms': Number(ruleMs.toFixed(6)),
          calls: CALLS,
          'load avg': Number(loadavg()[0]!.toFixed(1)),
        },
        target: `role check ≤ ${TARGET_MS} ms per admin request`,
        met: added <= TARGET_MS,
      },
    ];
  } finally {
    await app.close();
  }
}

export const scenario: Scenario = {
  name: 'admin',
  description: 'the admin API guard with a panel access token (role check) against the admin token, in-process, 20,000 calls each',
  run,
};
