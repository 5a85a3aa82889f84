import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { apiKeys } from '../../server/db/schema.js';
import { sha256 } from '../../server/util/crypto.js';
import { appBody, makeApp, type TestApp } from '../helpers/app.js';
import { addMember } from '../helpers/members.js';
import { one } from '../../server/db/store.js';

const KEYS = '/api/admin/applications/notes/api-keys';
const SCOPES = [
  'application:read', 'application:write', 'users:read', 'users:write',
  'invitations:read', 'invitations:write', 'webhooks:read', 'webhooks:write',
];

async function withApps(): Promise<TestApp> {
  const t = await makeApp({ clock: new Date('2026-03-01T10:00:00Z') });
  expect((await t.admin('POST', '/api/admin/applications', appBody({ webhookUrl: 'https://hooks.example.com/in' }))).statusCode).toBe(201);
  expect((await t.admin('POST', '/api/admin/applications', appBody({ id: 'other', audience: 'https://other.example.com' }))).statusCode).toBe(201);
  return t;
}

async function newKey(t: TestApp, scopes: string[], extra: Record<string, unknown> = {}, app = 'notes') {
  const res = await t.admin('POST', `/api/admin/applications/${app}/api-keys`, { name: `key ${scopes.join(' ')}`, scopes, ...extra });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; key: string };
}

const as = (t: TestApp, key: string, method: string, url: string, body?: unknown) =>
  t.admin(method as 'GET', url, body, { authorization: `Bearer ${key}` });

describe('API key management', () => {
  it('creates a key shown once, stored hashed, listed without the key', async () => {
    const t = await withApps();
    const res = await t.admin('POST', KEYS, { name: 'backend', scopes: ['users:read', 'users:read'], expiresAt: '2026-06-01T00:00:00Z' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(res.headers.location).toBe(`${KEYS}/${body.id}`);
    expect(body).toEqual({
      id: expect.stringMatching(/^key_/),
      name: 'backend',
      scopes: ['users:read'],
      prefix: body.key.slice(0, 12),
      createdAt: '2026-03-01T10:00:00.000Z',
      expiresAt: '2026-06-01T00:00:00.000Z',
      lastUsedAt: null,
      key: expect.stringMatching(/^ghk_[A-Za-z0-9_-]{43}$/),
    });
    const row = (await one(t.db.select().from(apiKeys).where(eq(apiKeys.id, body.id))))!;
    expect(row.keyHash).toBe(sha256(body.key));
    const list = await t.admin('GET', KEYS);
    expect(list.statusCode).toBe(200);
    const { key: _key, ...record } = body;
    expect(list.json()).toEqual({ apiKeys: [record], nextCursor: null });
    const single = await t.admin('GET', res.headers.location as string);
    expect(single.statusCode).toBe(200);
    expect(single.json()).toEqual(record);
    expect((await t.admin('GET', `${KEYS}/key_nope`)).json().code).toBe('api_key_not_found');
    const audit = (await t.admin('GET', '/api/admin/audit-log?action=api_key.created')).json();
    expect(audit.entries[0]).toMatchObject({ actor: 'admin', applicationId: 'notes', target: body.id, details: { name: 'backend', scopes: ['users:read'] } });
    expect(JSON.stringify(audit)).not.toContain(body.key);
  });

  it('rejects unknown scopes, empty scopes, past expiry and unknown fields', async () => {
    const t = await withApps();
    const res = await t.admin('POST', KEYS, { name: 'x', scopes: ['users:read', 'admin', 'users:delete'] });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('validation_failed');
    expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(['body.scopes.1', 'body.scopes.2']);
    expect((await t.admin('POST', KEYS, { name: 'x', scopes: [] })).statusCode).toBe(400);
    const past = await t.admin('POST', KEYS, { name: 'x', scopes: ['users:read'], expiresAt: '2026-02-01T00:00:00Z' });
    expect(past.statusCode).toBe(400);
    expect(past.json().errors).toEqual([{ path: 'body.expiresAt', message: 'must be in the future' }]);
    const leap = await t.admin('POST', KEYS, { name: 'x', scopes: ['users:read'], expiresAt: '2030-06-30T23:59:60Z' });
    expect(leap.statusCode).toBe(400);
    expect(leap.json().errors).toEqual([{ path: 'body.expiresAt', message: 'must be a date-time without a leap second' }]);
    const extra = await t.admin('POST', KEYS, { name: 'x', scopes: ['users:read'], owner: 'me' });
    expect(extra.statusCode).toBe(400);
    expect(extra.json().errors).toEqual([{ path: 'body.owner', message: 'is not a known field' }]);
    const missing = await t.admin('POST', '/api/admin/applications/nope/api-keys', { name: 'x', scopes: ['users:read'] });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('application_not_found');
  });

  it('revokes a key (204): it stops working at once and leaves the list; revoking again is 404', async () => {
    const t = await withApps();
    const key = await newKey(t, ['users:read']);
    expect((await as(t, key.key, 'GET', '/api/admin/applications/notes/users')).statusCode).toBe(200);
    const res = await t.admin('DELETE', `${KEYS}/${key.id}`);
    expect(res.statusCode).toBe(204);
    const after = await as(t, key.key, 'GET', '/api/admin/applications/notes/users');
    expect(after.statusCode).toBe(401);
    expect(after.headers['www-authenticate']).toBe('Bearer');
    expect(after.json().code).toBe('unauthorized');
    expect((await t.admin('GET', KEYS)).json().apiKeys).toEqual([]);
    const again = await t.admin('DELETE', `${KEYS}/${key.id}`);
    expect(again.statusCode).toBe(404);
    expect(again.json().code).toBe('api_key_not_found');
    const elsewhere = await newKey(t, ['users:read'], {}, 'other');
    expect((await t.admin('DELETE', `${KEYS}/${elsewhere.id}`)).statusCode).toBe(404);
  });

  it('expired and unknown keys are 401', async () => {
    const t = await withApps();
    const key = await newKey(t, ['users:read'], { expiresAt: '2026-03-01T11:00:00Z' });
    expect((await as(t, key.key, 'GET', '/api/admin/applications/notes/users')).statusCode).toBe(200);
    t.clock.advance(3600 * 1000);
    const expired = await as(t, key.key, 'GET', '/api/admin/applications/notes/users');
    expect(expired.statusCode).toBe(401);
    expect(expired.json().code).toBe('unauthorized');
    for (const bogus of [`ghk_${'A'.repeat(43)}`, 'not-a-key']) {
      const res = await as(t, bogus, 'GET', '/api/admin/applications/notes/users');
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('keeps lastUsedAt, written at most once a minute', async () => {
    const t = await withApps();
    const key = await newKey(t, ['users:read']);
    const lastUsed = async () => (await t.admin('GET', KEYS)).json().apiKeys[0].lastUsedAt;
    await as(t, key.key, 'GET', '/api/admin/applications/notes/users');
    expect(await lastUsed()).toBe('2026-03-01T10:00:00.000Z');
    t.clock.advance(30_000);
    await as(t, key.key, 'GET', '/api/admin/applications/notes/users');
    expect(await lastUsed()).toBe('2026-03-01T10:00:00.000Z');
    t.clock.advance(31_000);
    await as(t, key.key, 'GET', '/api/admin/applications/notes/users');
    expect(await lastUsed()).toBe('2026-03-01T10:01:01.000Z');
  });
});

describe('API key scope matrix', () => {
  const A = '/api/admin/applications/notes';
  // [method, path, body, scope it needs]
  const endpoints: [string, string, unknown, string][] = [
    ['GET', A, undefined, 'application:read'],
    ['PATCH', A, { name: 'Notes 2' }, 'application:write'],
    ['GET', `${A}/auth-policy`, undefined, 'application:read'],
    ['PATCH', `${A}/auth-policy`, { signup_policy: 'invite_only' }, 'application:write'],
    ['GET', `${A}/users`, undefined, 'users:read'],
    ['GET', `${A}/users/MEMBER`, undefined, 'users:read'],
    ['PATCH', `${A}/users/MEMBER`, { role: 'member' }, 'users:write'],
    ['GET', `${A}/invitations`, undefined, 'invitations:read'],
    ['POST', `${A}/invitations`, { emails: ['someone@example.com'] }, 'invitations:write'],
    ['GET', `${A}/webhook-deliveries`, undefined, 'webhooks:read'],
    ['POST', `${A}/webhook-test`, undefined, 'webhooks:write'],
  ];

  it('each scope opens exactly its area and method on its own application', async () => {
    const t = await withApps();
    const { membership } = (await addMember(t, 'notes', 'member@example.com'));
    const keys = new Map<string, string>();
    for (const scope of SCOPES) keys.set(scope, (await newKey(t, [scope])).key);
    const outcomes: string[] = [];
    for (const scope of SCOPES) {
      for (const [method, rawPath, body, needed] of endpoints) {
        const path = rawPath.replace('MEMBER', membership.id);
        const res = await as(t, keys.get(scope)!, method, path, body);
        if (scope === needed) {
          expect(res.statusCode, `${scope} ${method} ${path}`).toBeLessThan(300);
        } else {
          expect(res.statusCode, `${scope} ${method} ${path}`).toBe(403);
          expect(res.json().code).toBe('insufficient_scope');
        }
        outcomes.push(`${scope} ${method} ${rawPath} ${res.statusCode}`);
      }
    }
    expect(outcomes.filter((o) => / 2\d\d$/.test(o))).toHaveLength(endpoints.length);
  });

  it('a key with every scope still cannot reach other apps, key or SSO-group management, app creation or the audit log', async () => {
    const t = await withApps();
    const { key, id } = await newKey(t, SCOPES);
    const denied: [string, string, unknown?][] = [
      ['GET', '/api/admin/applications/other'],
      ['GET', '/api/admin/applications/other/users'],
      ['POST', '/api/admin/applications/other/invitations', { emails: ['x@example.com'] }],
      ['GET', '/api/admin/applications'],
      ['POST', '/api/admin/applications', appBody({ id: 'third', audience: 'https://third.example.com' })],
      ['GET', '/api/admin/applications/notes/api-keys'],
      ['POST', '/api/admin/applications/notes/api-keys', { name: 'child', scopes: ['users:read'] }],
      ['DELETE', `/api/admin/applications/notes/api-keys/${id}`],
      ['POST', '/api/admin/applications/notes/client-secret'],
      ['GET', '/api/admin/sso-groups'],
      ['POST', '/api/admin/sso-groups', { id: 'grp', name: 'Group' }],
      ['POST', '/api/admin/sso-groups/grp/apps', { appId: 'notes' }],
      ['GET', '/api/admin/audit-log'],
      ['GET', '/api/admin/auth/providers'],
    ];
    for (const [method, path, body] of denied) {
      const res = await as(t, key, method, path, body);
      expect(res.statusCode, `${method} ${path}`).toBe(403);
      expect(res.json().code, `${method} ${path}`).toBe('insufficient_scope');
    }
    expect((await t.admin('GET', '/api/admin/applications/notes/api-keys')).json().apiKeys).toHaveLength(1);
  });

  it('application:write cannot reach past its scopes through the application record', async () => {
    const t = await withApps();
    expect((await t.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: 'Suite' })).statusCode).toBe(201);
    const { key } = await newKey(t, ['application:read', 'application:write']);
    const before = (await t.admin('GET', A)).json();
    const refused: [string, unknown, string][] = [
      ['PATCH', { ssoGroupId: 'suite' }, 'An API key may not move an application between SSO groups; that needs the admin token.'],
      ['PATCH', { clientType: 'spa' }, 'An API key may not change the client type (it creates or removes the client secret); that needs the admin token.'],
      ['PATCH', { webhookUrl: 'https://hooks.example.com/other' }, 'This API key lacks the webhooks:write scope, needed to change the webhook settings.'],
      ['PATCH', { name: 'Renamed', webhookUrl: null }, 'This API key lacks the webhooks:write scope, needed to change the webhook settings.'],
      ['DELETE', undefined, 'An API key may not call DELETE /api/admin/applications/:id; that needs the admin token.'],
      // Where codes and tokens go and whom tokens are for (issue 22, item 1): admin only.
      ['PATCH', { redirectUris: ['https://attacker.example/callback'] }, 'An API key may not change where sign-ins are sent (redirect URIs); that needs the admin token.'],
      ['PATCH', { redirectUris: [...before.redirectUris, 'https://attacker.example/callback'] }, 'An API key may not change where sign-ins are sent (redirect URIs); that needs the admin token.'],
      ['PATCH', { audience: 'https://attacker.example/api' }, 'An API key may not change the audience of its tokens; that needs the admin token.'],
      ['PATCH', { postLogoutRedirectUris: ['https://attacker.example/bye'] }, 'An API key may not change where sign-outs are sent (post-logout redirect URIs); that needs the admin token.'],
    ];
    for (const [method, body, detail] of refused) {
      const res = await as(t, key, method, A, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(403);
      expect(res.json()).toMatchObject({ code: 'insufficient_scope', detail });
    }
    expect((await t.admin('GET', A)).json()).toEqual(before);
    // Unchanged values are not a change; webhooks:write opens the webhook fields.
    expect((await as(t, key, 'PATCH', A, {
      clientType: before.clientType, ssoGroupId: null, webhookUrl: before.webhookUrl, redirectUris: before.redirectUris, audience: before.audience, name: 'Notes 2',
    })).statusCode).toBe(200);
    const { key: hooks } = await newKey(t, ['application:write', 'webhooks:write']);
    const res = await as(t, hooks, 'PATCH', A, { webhookUrl: 'https://hooks.example.com/other' });
    expect(res.statusCode).toBe(200);
    expect(res.json().webhookUrl).toBe('https://hooks.example.com/other');
  });

  it('application:write may tighten but not loosen how its members sign in: MFA required → optional and explicit → implicit consent are admin only', async () => {
    const t = await withApps();
    const { key } = await newKey(t, ['application:read', 'application:write']);
    // A key may raise the bar itself.
    expect((await as(t, key, 'PATCH', A, { authPolicy: { mfa: 'required' }, consent: 'explicit' })).statusCode).toBe(200);
    const before = (await t.admin('GET', A)).json();
    expect(before).toMatchObject({ authPolicy: { mfa: 'required' }, consent: 'explicit' });
    const mfa = 'An API key may not let members sign in without a second factor (MFA policy optional); that needs the admin token.';
    const consent = 'An API key may not turn explicit consent into implicit consent; that needs the admin token.';
    const refused: [string, string, unknown, string][] = [
      ['PATCH', A, { authPolicy: { mfa: 'optional' } }, mfa],
      ['PATCH', A, { name: 'Renamed', authPolicy: { signup_policy: 'open', mfa: 'optional' } }, mfa],
      ['PATCH', `${A}/auth-policy`, { mfa: 'optional' }, mfa],
      ['PATCH', A, { consent: 'implicit' }, consent],
    ];
    for (const [method, path, body, detail] of refused) {
      const res = await as(t, key, method, path, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(403);
      expect(res.json()).toMatchObject({ code: 'insufficient_scope', detail });
    }
    expect((await t.admin('GET', A)).json()).toEqual(before);
    // The same values again are no change; the admin token may loosen.
    expect((await as(t, key, 'PATCH', `${A}/auth-policy`, { mfa: 'required', signup_policy: 'open' })).statusCode).toBe(200);
    expect((await as(t, key, 'PATCH', A, { consent: 'explicit', authPolicy: { mfa: 'required' } })).statusCode).toBe(200);
    const loosened = await t.admin('PATCH', A, { consent: 'implicit', authPolicy: { mfa: 'optional' } });
    expect(loosened.statusCode).toBe(200);
    expect(loosened.json()).toMatchObject({ authPolicy: { mfa: 'optional' }, consent: 'implicit' });
  });

  it('audits writes made with a key under api_key:<id>', async () => {
    const t = await withApps();
    const { membership } = (await addMember(t, 'notes', 'member@example.com'));
    const { key, id } = await newKey(t, ['users:write']);
    const res = await as(t, key, 'PATCH', `${A}/users/${membership.id}`, { role: 'admin' });
    expect(res.statusCode).toBe(200);
    const audit = (await t.admin('GET', `/api/admin/audit-log?actor=api_key:${id}`)).json();
    expect(audit.entries).toHaveLength(1);
    expect(audit.entries[0]).toMatchObject({ action: 'membership.updated', actor: `api_key:${id}`, target: membership.id });
  });
});
