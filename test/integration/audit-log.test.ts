import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, appBody, makeApp } from '../helpers/app.js';
import { recordAudit } from '../../server/audit/record.js';
import { engineOf } from '../../server/db/store.js';
import { queryPlan, usesPostgresIndex } from '../helpers/query-plan.js';
import { createClient, pkcePair, signUpCookie, startOAuthServer } from '../helpers/oauth-server.js';

const LOG = '/api/admin/audit-log';

describe('GET /api/admin/audit-log', () => {
  it('lists entries newest first with filters and cursor pagination', async () => {
    const t = await makeApp({ clock: new Date('2026-03-01T10:00:00Z') });
    await t.admin('POST', '/api/admin/applications', appBody());
    t.clock.advance(1000);
    await t.admin('POST', '/api/admin/applications', appBody({ id: 'other', audience: 'https://other.example.com' }));
    t.clock.advance(1000);
    await t.admin('POST', '/api/admin/applications/notes/invitations', { emails: ['a@example.com', 'b@example.com'] });
    t.clock.advance(1000);
    const key = (await t.admin('POST', '/api/admin/applications/other/api-keys', { name: 'k', scopes: ['invitations:write'] })).json();
    t.clock.advance(1000);
    await t.admin('POST', '/api/admin/applications/other/invitations', { emails: ['c@example.com'] }, { authorization: `Bearer ${key.key}` });

    const all = await t.admin('GET', LOG);
    expect(all.statusCode).toBe(200);
    const entries = all.json().entries;
    expect(entries.map((e: { action: string }) => e.action)).toEqual([
      'invitation.created', 'api_key.created', 'invitation.created', 'invitation.created', 'application.created', 'application.created',
    ]);
    expect(entries[0]).toEqual({
      id: expect.stringMatching(/^aud_/),
      at: '2026-03-01T10:00:04.000Z',
      actor: `api_key:${key.id}`,
      action: 'invitation.created',
      applicationId: 'other',
      target: expect.stringMatching(/^inv_/),
      details: { email: 'c@example.com', role: 'member' },
      ip: '127.0.0.1',
    });
    expect(all.json().nextCursor).toBeNull();

    const ids = async (qs: string) => (await t.admin('GET', `${LOG}?${qs}`)).json().entries.map((e: { action: string; applicationId: string }) => `${e.applicationId}:${e.action}`);
    expect(await ids('applicationId=notes')).toEqual(['notes:invitation.created', 'notes:invitation.created', 'notes:application.created']);
    expect(await ids('action=application.created')).toEqual(['other:application.created', 'notes:application.created']);
    expect(await ids(`actor=api_key:${key.id}`)).toEqual(['other:invitation.created']);
    expect(await ids('applicationId=other&actor=admin')).toEqual(['other:api_key.created', 'other:application.created']);
    expect(await ids('action=nothing')).toEqual([]);

    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { entries: { id: string }[]; nextCursor: string | null } = (await t.admin('GET', `${LOG}?limit=4${cursor ? `&cursor=${cursor}` : ''}`)).json();
      walked.push(...page.entries.map((e) => e.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(walked).toEqual(entries.map((e: { id: string }) => e.id));
  });

  it('validates its query and needs the admin token', async () => {
    const t = await makeApp();
    const extra = await t.admin('GET', `${LOG}?who=me`);
    expect(extra.statusCode).toBe(400);
    expect(extra.json().code).toBe('validation_failed');
    const limit = await t.admin('GET', `${LOG}?limit=500`);
    expect(limit.statusCode).toBe(400);
    const cursor = await t.admin('GET', `${LOG}?cursor=abc`);
    expect(cursor.statusCode).toBe(400);
    expect(cursor.json().code).toBe('invalid_cursor');
    const anon = await t.app.inject({ method: 'GET', url: LOG });
    expect(anon.statusCode).toBe(401);
    expect(anon.headers['www-authenticate']).toBe('Bearer');
  });
});

describe('the client address of each entry', () => {
  it('records the address of the request that made the change; a trusted proxy\'s client, not the proxy; none for background work', async () => {
    const t = await makeApp();
    const create = (id: string, headers: Record<string, string>, remoteAddress: string) =>
      t.app.inject({ method: 'POST', url: '/api/admin/applications', payload: appBody({ id, audience: `https://${id}.example.com` }), remoteAddress, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers } });
    expect((await create('direct', {}, '192.0.2.10')).statusCode).toBe(201);
    // Without GATEHOUSE_TRUST_PROXY a forwarded-for header is just a header.
    expect((await create('spoofed', { 'x-forwarded-for': '203.0.113.99' }, '192.0.2.11')).statusCode).toBe(201);
    await recordAudit(t.db, t.clock.now(), { actor: 'system', action: 'test.background' });
    const entries = (await t.admin('GET', `${LOG}?limit=10`)).json().entries as { action: string; target: string | null; ip: string | null }[];
    expect(entries.map((e) => [e.action, e.target, e.ip])).toEqual([
      ['test.background', null, null],
      ['application.created', 'spoofed', '192.0.2.11'],
      ['application.created', 'direct', '192.0.2.10'],
    ]);

    const proxied = await makeApp({ config: { trustProxy: ['10.0.0.0/8'] } });
    const res = await proxied.app.inject({
      method: 'POST', url: '/api/admin/applications', payload: appBody(), remoteAddress: '10.0.0.5',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-forwarded-for': '198.51.100.7' },
    });
    expect(res.statusCode).toBe(201);
    expect((await proxied.admin('GET', LOG)).json().entries[0]).toMatchObject({ action: 'application.created', ip: '198.51.100.7' });
  });

  it('on the token endpoint answered before Fastify, behind a trusted proxy too (a refresh token used twice)', async () => {
    const server = await startOAuthServer({ GATEHOUSE_TRUST_PROXY: 'loopback' });
    try {
      await createClient(server, { id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: ['http://127.0.0.1:5173/callback'] });
      const cookie = await signUpCookie(server, 'ada@example.com', 'notes');
      const pkce = pkcePair();
      const query = new URLSearchParams({
        response_type: 'code', client_id: 'notes', redirect_uri: 'http://127.0.0.1:5173/callback', scope: 'openid offline_access',
        code_challenge: pkce.challenge, code_challenge_method: 'S256', state: 's',
      });
      const authorized = await fetch(`${server.url}/api/auth/oauth2/authorize?${query}`, { redirect: 'manual', headers: { cookie } });
      const code = new URL(authorized.headers.get('location')!).searchParams.get('code')!;
      const token = (form: Record<string, string>) =>
        fetch(`${server.url}/api/auth/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '198.51.100.23' },
          body: new URLSearchParams(form).toString(),
        });
      const tokens = (await (await token({ grant_type: 'authorization_code', code, client_id: 'notes', redirect_uri: 'http://127.0.0.1:5173/callback', code_verifier: pkce.verifier })).json()) as { refresh_token: string };
      expect((await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'notes' })).status).toBe(200);
      expect((await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'notes' })).status).toBe(400);
      const log = (await (await server.admin('GET', `${LOG}?action=security.refresh_token_reused`)).json()) as { entries: { ip: string | null }[] };
      expect(log.entries.map((e) => e.ip)).toEqual(['198.51.100.23']);
    } finally {
      await server.stop();
    }
  });
});

describe('GET /api/admin/audit-log/actions', () => {
  it('lists the actions the log holds, in order, one index seek each', async () => {
    const t = await makeApp();
    expect((await t.admin('GET', `${LOG}/actions`)).json()).toEqual({ actions: [] });
    await t.admin('POST', '/api/admin/applications', appBody());
    await t.admin('POST', '/api/admin/applications', appBody({ id: 'other', audience: 'https://other.example.com' }));
    await t.admin('POST', '/api/admin/applications/notes/invitations', { emails: ['a@example.com'] });
    const res = await t.admin('GET', `${LOG}/actions`);
    expect([res.statusCode, res.json()]).toEqual([200, { actions: ['application.created', 'invitation.created'] }]);
    expect((await t.admin('GET', `${LOG}/actions?x=1`)).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: `${LOG}/actions` })).statusCode).toBe(401);
    const plan = await queryPlan(t.db, 'SELECT action FROM audit_log WHERE action > ? ORDER BY action LIMIT 1', 'a');
    if (engineOf(t.db) === 'sqlite') expect(plan).toBe('SEARCH audit_log USING COVERING INDEX audit_log_action_idx (action>?)');
    else expect(usesPostgresIndex(plan, 'audit_log_action_idx'), plan).toBe(true);
  });
});
