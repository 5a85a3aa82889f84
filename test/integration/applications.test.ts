/**
 * Applications admin API (DESIGN §4.3): create, list, get, update, delete (cascading) and
 * client-secret rotation, with their validation rules and errors, on a fresh database each test.
 */
import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { appBody, makeApp, type TestApp } from '../helpers/app.js';
import { expectProblem, expectValidation } from '../helpers/problem.js';
import {
  apiKeys,
  applications,
  auditLog,
  invitations,
  memberships,
  people,
  webhookDeliveries,
} from '../../server/db/schema.js';
import { sha256 } from '../../server/util/crypto.js';
import { engineOf, exec, one, many } from '../../server/db/store.js';
import { openAtRest } from '../../server/db/secrets-at-rest.js';
import { webhookSecretPurpose } from '../../server/webhooks/sign.js';

const T0 = new Date('2026-03-01T10:00:00.000Z');
const DEFAULT_POLICY = { signup_policy: 'invite_only', allowed_providers: ['email'], profile_fields: [], mfa: 'optional' };

async function create(t: TestApp, overrides: Record<string, unknown> = {}) {
  const res = await t.admin('POST', '/api/admin/applications', appBody(overrides));
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

describe('POST /api/admin/applications', () => {
  it('creates a web application: 201, Location, the full record and a client secret shown once', async () => {
    const t = await makeApp({ clock: T0 });
    const res = await t.admin('POST', '/api/admin/applications', appBody());
    expect(res.statusCode).toBe(201);
    expect(res.headers.location).toBe('/api/admin/applications/notes');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json();
    expect(body.clientSecret).toMatch(/^ghs_[A-Za-z0-9_-]{43}$/);
    expect(body).toEqual({
      id: 'notes',
      name: 'Notes',
      audience: 'https://notes.example.com/api',
      redirectUris: ['https://notes.example.com/callback'],
      postLogoutRedirectUris: null,
      clientType: 'web',
      webhookUrl: null,
      webhookSecretSet: false,
      ssoGroupId: null,
      authPolicy: DEFAULT_POLICY,
      grantTypes: ['authorization_code', 'refresh_token'],
      backchannelLogoutUri: null,
      backchannelLogoutSessionRequired: true,
      branding: { accentColor: null, logoUrl: null },
      consent: 'implicit',
      forwardAuth: null,
      radius: null,
      saml: null,
      unknownScopes: 'reject',
      groupsFilter: null,
      customClaims: [],
      resourceServers: [],
      signingAlg: 'RS256',
      ldap: { enabled: false, bindDn: 'cn=notes,ou=services,dc=gatehouse' },
      preset: null,
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
      clientSecret: body.clientSecret,
    });

    // Stored hashed, never in the clear.
    const row = (await one(t.db.select().from(applications).where(eq(applications.id, 'notes'))))!;
    expect(row.clientSecretHash).toBe(sha256(body.clientSecret));
    expect(JSON.stringify(row)).not.toContain(body.clientSecret);

    // Never again in a read, single or list.
    const single = await t.admin('GET', '/api/admin/applications/notes');
    expect(single.statusCode).toBe(200);
    expect(single.json()).toEqual({ ...body, clientSecret: undefined });
    expect(single.body).not.toContain('clientSecret');
    const list = await t.admin('GET', '/api/admin/applications');
    expect(list.body).not.toContain('clientSecret');
    expect(list.body).not.toContain(body.clientSecret);
  });

  it('defaults clientType to web and records the creation in the audit log without secrets', async () => {
    const t = await makeApp({ clock: T0 });
    const { clientType, ...rest } = appBody();
    expect(clientType).toBe('web');
    const res = await t.admin('POST', '/api/admin/applications', rest);
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.clientType).toBe('web');
    const audit = await many(t.db.select().from(auditLog));
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: 'admin', action: 'application.created', applicationId: 'notes', target: 'notes', at: T0 });
    expect(JSON.stringify(audit)).not.toContain(body.clientSecret);
  });

  it('gives spa and native clients no client secret', async () => {
    const t = await makeApp();
    const spa = await create(t, { id: 'spa-app', audience: 'spa', clientType: 'spa' });
    expect(spa.clientType).toBe('spa');
    expect('clientSecret' in spa).toBe(false);
    const native = await create(t, { id: 'cli', audience: 'cli', clientType: 'native', redirectUris: ['com.example.cli:/callback', 'http://127.0.0.1/cb'] });
    expect(native.clientType).toBe('native');
    expect('clientSecret' in native).toBe(false);
    expect((await one(t.db.select().from(applications).where(eq(applications.id, 'cli'))))!.clientSecretHash).toBeNull();
  });

  it('stores an auth policy given at creation, filling its defaults', async () => {
    const t = await makeApp();
    const body = await create(t, {
      authPolicy: {
        signup_policy: 'open',
        profile_fields: [{ key: 'team', label: 'Team', type: 'select', options: ['a', 'b'] }],
      },
    });
    expect(body.authPolicy).toEqual({
      signup_policy: 'open',
      allowed_providers: ['email'],
      profile_fields: [{ key: 'team', label: 'Team', type: 'select', options: ['a', 'b'], required: false, user_editable: true }],
      mfa: 'optional',
    });
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ id: 'x2', audience: 'x2', authPolicy: { allowed_providers: ['myspace'] } })), [
      'body.authPolicy.allowed_providers.0',
    ]);
  });

  it('generates a webhook secret when a webhookUrl comes without one, returned only in that response', async () => {
    const t = await makeApp();
    const body = await create(t, { webhookUrl: 'https://hooks.example.com/gatehouse' });
    expect(body.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(body.webhookSecret.slice(6), 'base64')).toHaveLength(32);
    expect(body.webhookSecretSet).toBe(true);
    expect(body.webhookUrl).toBe('https://hooks.example.com/gatehouse');

    for (const url of ['/api/admin/applications/notes', '/api/admin/applications']) {
      const read = await t.admin('GET', url);
      expect(read.statusCode).toBe(200);
      expect(read.body).not.toContain('"webhookSecret"');
      expect(read.body).not.toContain(body.webhookSecret.slice(6));
      expect(read.body).toContain('"webhookSecretSet":true');
    }
  });

  it('never echoes a webhook secret the administrator chose', async () => {
    const t = await makeApp();
    const res = await t.admin('POST', '/api/admin/applications', appBody({ webhookUrl: 'https://hooks.example.com/x', webhookSecret: 'my-own-secret-value-123' }));
    expect(res.statusCode).toBe(201);
    expect(res.body).not.toContain('my-own-secret-value-123');
    expect(res.json()).toMatchObject({ webhookSecretSet: true });
    expect('webhookSecret' in res.json()).toBe(false);
  });

  it('rejects a webhook secret without a URL and a non-http webhook URL', async () => {
    const t = await makeApp();
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ webhookSecret: 'abcdefghijklmnopqrstuvwxyz' })), ['body.webhookSecret']);
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ webhookUrl: 'ftp://hooks.example.com/x' })), ['body.webhookUrl']);
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ webhookUrl: 'https://u:p@hooks.example.com/x' })), ['body.webhookUrl']);
    expect(await many(t.db.select().from(applications))).toHaveLength(0);
  });

  it('answers every rule a create or update breaks in one 400: the policy\'s, the URIs\', the accent colour\'s, together', async () => {
    const t = await makeApp();
    const broken = { authPolicy: { allowed_providers: ['myspace'] }, redirectUris: ['http://a.example.com/cb'], branding: { accentColor: '#ffff00' }, ssoGroupId: 'nope' };
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody(broken)), [
      'body.authPolicy.allowed_providers.0', 'body.redirectUris.0', 'body.branding.accentColor', 'body.ssoGroupId',
    ]);
    expect((await t.admin('POST', '/api/admin/applications', appBody())).statusCode).toBe(201);
    expectValidation(await t.admin('PATCH', `/api/admin/applications/${appBody().id}`, broken), [
      'body.authPolicy.allowed_providers.0', 'body.redirectUris.0', 'body.branding.accentColor', 'body.ssoGroupId',
    ]);
  });

  it('rejects webhook URLs at link-local, unspecified or multicast addresses, in any spelling', async () => {
    const t = await makeApp();
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://2852039166/', // 169.254.169.254 as one number
      'http://[::ffff:169.254.169.254]/',
      'http://[fe80::1]/',
      'http://0.0.0.0:8080/',
      'http://[::]/',
      'http://224.0.0.1/',
    ]) {
      const body = expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ webhookUrl: url })), ['body.webhookUrl']);
      expect(body.errors, url).toEqual([{ path: 'body.webhookUrl', message: 'must not point at a link-local, unspecified or multicast address' }]);
    }
    // The LAN stays allowed: that is where a small team's receivers live.
    for (const [i, url] of ['http://192.168.1.20/hook', 'http://10.0.0.5:9000/hook', 'http://[fd12::1]:9000/hook'].entries()) {
      const res = await t.admin('POST', '/api/admin/applications', appBody({ id: `lan${i}`, audience: `https://lan${i}.example.com`, webhookUrl: url }));
      expect(res.statusCode, url).toBe(201);
    }
  });

  it('refuses loopback webhook targets in every spelling unless GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK=1', async () => {
    const loopback = [
      'http://127.0.0.1:9000/hook', 'http://127.1.2.3/hook', 'http://2130706433/hook', 'http://0x7f000001/hook', 'http://[::1]:9000/hook',
      'http://[::ffff:127.0.0.1]/hook', 'http://[::ffff:7f00:1]/hook', 'http://[64:ff9b::7f00:1]/hook', 'http://localhost:9000/hook',
      'http://LOCALHOST./hook', 'http://hooks.localhost/hook',
    ];
    const strict = await makeApp();
    for (const url of loopback) {
      const body = expectValidation(await strict.admin('POST', '/api/admin/applications', appBody({ webhookUrl: url })), ['body.webhookUrl']);
      expect(body.errors, url).toEqual([{ path: 'body.webhookUrl', message: 'must not point at a loopback address (GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK=1 allows it)' }]);
    }
    expect((await strict.admin('POST', '/api/admin/applications', appBody())).statusCode).toBe(201);
    expectValidation(await strict.admin('PATCH', '/api/admin/applications/notes', { webhookUrl: 'http://[::1]/x' }), ['body.webhookUrl']);
    expect((await one(strict.db.select().from(applications)))!.webhookUrl).toBeNull();
    // The operator's opt-in: receivers on this machine.
    const optedIn = await makeApp({ config: { webhookAllowLoopback: true } });
    for (const [i, url] of loopback.entries()) {
      const res = await optedIn.admin('POST', '/api/admin/applications', appBody({ id: `app${i}`, audience: `https://app${i}.example.com`, webhookUrl: url }));
      expect(res.statusCode, url).toBe(201);
    }
  });

  it('rejects a whsec_ secret that is not strict base64 of 24 to 64 bytes', async () => {
    const t = await makeApp();
    const withSecret = (webhookSecret: string) => appBody({ webhookUrl: 'https://hooks.example.com/in', webhookSecret });
    const cases: [string, string][] = [
      ['whsec_!!!!!!!!!!!!!!!!!!!!', 'after whsec_ must come standard base64 (A–Z, a–z, 0–9, +, /, = padding)'],
      [`whsec_${Buffer.alloc(32, 1).toString('base64url')}`, 'after whsec_ must come standard base64 (A–Z, a–z, 0–9, +, /, = padding)'],
      [`whsec_${Buffer.alloc(18, 1).toString('base64')}`, 'a whsec_ secret must carry 24 to 64 bytes of key (this one has 18)'],
      [`whsec_${Buffer.alloc(96, 1).toString('base64')}`, 'a whsec_ secret must carry 24 to 64 bytes of key (this one has 96)'],
    ];
    for (const [secret, message] of cases) {
      const body = expectValidation(await t.admin('POST', '/api/admin/applications', withSecret(secret)), ['body.webhookSecret']);
      expect(body.errors, secret).toEqual([{ path: 'body.webhookSecret', message }]);
    }
    expect(await many(t.db.select().from(applications))).toHaveLength(0);
    expect((await t.admin('POST', '/api/admin/applications', withSecret(`whsec_${Buffer.alloc(24, 9).toString('base64')}`))).statusCode).toBe(201);
  });

  it('enforces the id pattern ^[a-z0-9][a-z0-9_-]{1,62}$', async () => {
    const t = await makeApp();
    for (const id of ['a', 'A1', '-ab', '_ab', 'has space', 'caps-ID', 'dots.no', 'x'.repeat(64), '', 'ünï']) {
      const res = await t.admin('POST', '/api/admin/applications', appBody({ id }));
      const body = expectProblem(res, 400, 'validation_failed');
      expect(body.errors?.map((e) => e.path)).toContain('body.id');
    }
    for (const [i, id] of ['a1', '0-_', 'x'.repeat(63)].entries()) {
      const res = await t.admin('POST', '/api/admin/applications', appBody({ id, audience: `aud-${i}` }));
      expect(res.statusCode, id).toBe(201);
    }
  });

  it('checks required fields, name and audience lengths and types', async () => {
    const t = await makeApp();
    expectValidation(await t.admin('POST', '/api/admin/applications', {}), ['body.id', 'body.name', 'body.audience', 'body.redirectUris']);
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ name: '' })), ['body.name']);
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ name: 'n'.repeat(201) })), ['body.name']);
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ audience: '' })), ['body.audience']);
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ clientType: 'confidential' })), ['body.clientType']);
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ redirectUris: 'https://a.example.com/cb' })), ['body.redirectUris']);
    // Types are never coerced in bodies.
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ name: 42 })), ['body.name']);
    expect(await create(t, { name: 'n'.repeat(200) })).toMatchObject({ name: 'n'.repeat(200) });
  });

  it('rejects unknown fields, naming each', async () => {
    const t = await makeApp();
    const res = await t.admin('POST', '/api/admin/applications', appBody({ colour: 'red', secret: 'x' }));
    const body = expectValidation(res, ['body.colour', 'body.secret']);
    expect(body.errors).toContainEqual({ path: 'body.colour', message: 'is not a known field' });
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ authPolicy: { signup: 'open' } })), ['body.authPolicy.signup']);
  });

  it('answers 409 application_exists for a taken id and 409 audience_in_use for a taken audience', async () => {
    const t = await makeApp();
    await create(t);
    const dupId = await t.admin('POST', '/api/admin/applications', appBody({ audience: 'other' }));
    expect(expectProblem(dupId, 409, 'application_exists').detail).toContain('"notes"');
    const dupAudience = await t.admin('POST', '/api/admin/applications', appBody({ id: 'notes2' }));
    // The other application is not named: an API key may only learn about its own.
    expect(expectProblem(dupAudience, 409, 'audience_in_use').detail).toBe('The audience "https://notes.example.com/api" is already used by another application.');
    expect(await many(t.db.select().from(applications))).toHaveLength(1);
  });

  it('answers 400 naming ssoGroupId when the group does not exist, and joins an existing group', async () => {
    const t = await makeApp();
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ ssoGroupId: 'nope' })), ['body.ssoGroupId']);
    expect((await t.admin('POST', '/api/admin/sso-groups', { id: 'suite', name: 'Suite' })).statusCode).toBe(201);
    expect(await create(t, { ssoGroupId: 'suite' })).toMatchObject({ ssoGroupId: 'suite' });
    expect((await t.admin('GET', '/api/admin/sso-groups/suite')).json().applicationIds).toEqual(['notes']);
  });
});

describe('redirect URI rules', () => {
  const cases: [string, string, boolean][] = [
    ['web', 'https://app.example.com/cb', true],
    ['web', 'https://app.example.com:8443/cb?x=1', true],
    ['web', 'http://app.example.com/cb', false],
    ['web', 'http://8.8.8.8/cb', false],
    ['web', 'http://172.32.0.1/cb', false],
    ['web', 'http://localhost:3000/cb', true],
    ['web', 'http://127.0.0.1/cb', true],
    ['web', 'http://[::1]:8080/cb', true],
    ['web', 'http://10.1.2.3/cb', true],
    ['web', 'http://172.16.0.1/cb', true],
    ['web', 'http://172.31.255.1/cb', true],
    ['web', 'http://192.168.1.20/cb', true],
    ['web', 'http://nas.local/cb', true],
    ['web', 'http://wiki.lan/cb', true],
    ['web', 'http://box.home.arpa/cb', true],
    ['web', 'http://svc.internal/cb', true],
    ['web', 'http://wiki.localhost:3000/cb', true],
    ['web', 'http://local/cb', false],
    // Look-alikes of private names are public hosts.
    ['web', 'http://localhost.example.com/cb', false],
    ['web', 'http://wiki.localhost.example.com/cb', false],
    ['web', 'http://127.0.0.1.nip.io/cb', false],
    ['web', 'http://10.0.0.1.example.com/cb', false],
    ['web', 'http://nas.local.example.com/cb', false],
    ['web', 'http://192.169.1.1/cb', false],
    ['web', 'https://app.example.com/cb#frag', false],
    ['web', 'https://app.example.com/cb#', false],
    ['web', '/relative/cb', false],
    ['web', 'not a uri', false],
    ['web', 'com.example.app:/cb', false],
    ['spa', 'com.example.app:/cb', false],
    ['spa', 'http://localhost:5173/', true],
    ['native', 'com.example.app:/cb', true],
    ['native', 'myapp://callback', true],
    ['native', 'http://127.0.0.1/cb', true],
    ['native', 'javascript:alert(1)', false],
    ['native', 'data:text/html,hi', false],
    ['native', 'myapp://cb#x', false],
  ];

  it('accepts https anywhere, http only on private hosts, custom schemes only for native, no fragments', async () => {
    const t = await makeApp();
    const outcomes: string[] = [];
    for (const [i, [clientType, uri]] of cases.entries()) {
      const res = await t.admin('POST', '/api/admin/applications', appBody({ id: `app-${i}`, audience: `aud-${i}`, clientType, redirectUris: [uri] }));
      if (res.statusCode === 201) outcomes.push(`${clientType} ${uri} → true`);
      else {
        expectValidation(res, ['body.redirectUris.0']);
        outcomes.push(`${clientType} ${uri} → false`);
      }
    }
    expect(outcomes).toEqual(cases.map(([clientType, uri, ok]) => `${clientType} ${uri} → ${ok}`));
  });

  it('requires 1–20 distinct URIs and names the failing index', async () => {
    const t = await makeApp();
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ redirectUris: [] })), ['body.redirectUris']);
    const tooMany = Array.from({ length: 21 }, (_, i) => `https://a.example.com/cb${i}`);
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ redirectUris: tooMany })), ['body.redirectUris']);
    expectValidation(await t.admin('POST', '/api/admin/applications', appBody({ redirectUris: ['https://a.example.com/cb', 'https://a.example.com/cb'] })), ['body.redirectUris']);
    const mixed = await t.admin('POST', '/api/admin/applications', appBody({ redirectUris: ['https://a.example.com/ok', 'http://public.example.com/cb'] }));
    const body = expectValidation(mixed, ['body.redirectUris.1']);
    expect(body.errors?.[0]?.message).toMatch(/https/);
    expect((await t.admin('POST', '/api/admin/applications', appBody({ redirectUris: tooMany.slice(0, 20) }))).statusCode).toBe(201);
  });
});

describe('GET /api/admin/applications', () => {
  it('returns an empty page on a fresh database', async () => {
    const t = await makeApp();
    const res = await t.admin('GET', '/api/admin/applications');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ applications: [], nextCursor: null });
  });

  it('pages in creation order (then id) with limit and an opaque cursor', async () => {
    const t = await makeApp({ clock: T0 });
    // b and a share a creation time: id breaks the tie.
    await create(t, { id: 'b-app', audience: 'b' });
    await create(t, { id: 'a-app', audience: 'a' });
    t.clock.advance(1000);
    await create(t, { id: 'c-app', audience: 'c' });
    t.clock.advance(1000);
    await create(t, { id: '0-app', audience: '0' });
    await create(t, { id: 'z-app', audience: 'z' });

    const all = (await t.admin('GET', '/api/admin/applications')).json();
    expect(all.applications.map((a: { id: string }) => a.id)).toEqual(['a-app', 'b-app', 'c-app', '0-app', 'z-app']);
    expect(all.nextCursor).toBeNull();

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/api/admin/applications?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await t.admin('GET', url);
      expect(res.statusCode).toBe(200);
      const page = res.json();
      expect(page.applications.length).toBeLessThanOrEqual(2);
      seen.push(...page.applications.map((a: { id: string }) => a.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(['a-app', 'b-app', 'c-app', '0-app', 'z-app']);

    // A page that ends exactly at the last row has no next cursor.
    const exact = (await t.admin('GET', '/api/admin/applications?limit=5')).json();
    expect(exact.applications).toHaveLength(5);
    expect(exact.nextCursor).toBeNull();
    expect((await t.admin('GET', '/api/admin/applications?limit=1')).json().applications).toHaveLength(1);
  });

  it('defaults to 50 per page and allows up to 200', async () => {
    const t = await makeApp({ clock: T0 });
    const now = T0;
    await exec(t.db
      .insert(applications)
      .values(
        Array.from({ length: 201 }, (_, i) => ({
          id: `app-${String(i).padStart(3, '0')}`,
          name: `App ${i}`,
          audience: `aud-${i}`,
          redirectUris: ['https://a.example.com/cb'],
          clientType: 'spa' as const,
          authPolicy: { signup_policy: 'invite_only' as const, allowed_providers: ['email'], profile_fields: [], mfa: 'optional' as const },
          createdAt: now,
          updatedAt: now,
        })),
      ));
    const first = (await t.admin('GET', '/api/admin/applications')).json();
    expect(first.applications).toHaveLength(50);
    expect(typeof first.nextCursor).toBe('string');
    const big = (await t.admin('GET', '/api/admin/applications?limit=200')).json();
    expect(big.applications).toHaveLength(200);
    const rest = (await t.admin('GET', `/api/admin/applications?limit=200&cursor=${big.nextCursor}`)).json();
    expect(rest).toMatchObject({ applications: [{ id: 'app-200' }], nextCursor: null });
  });

  it('rejects limit out of range, non-numeric limit, unknown query fields and foreign cursors', async () => {
    const t = await makeApp();
    for (const limit of ['0', '201', '-1', 'abc', '1.5']) {
      expectValidation(await t.admin('GET', `/api/admin/applications?limit=${limit}`), ['querystring.limit']);
    }
    expectValidation(await t.admin('GET', '/api/admin/applications?sort=name'), ['querystring.sort']);
    for (const cursor of ['zzz', 'bm90LWpzb24', Buffer.from('{"t":1}').toString('base64url'), Buffer.from('["x","y"]').toString('base64url')]) {
      const body = expectProblem(await t.admin('GET', `/api/admin/applications?cursor=${cursor}`), 400, 'invalid_cursor');
      expect(body.errors).toEqual([{ path: 'querystring.cursor', message: 'is not a valid cursor' }]);
    }
    expectValidation(await t.admin('GET', `/api/admin/applications?cursor=${'x'.repeat(201)}`), ['querystring.cursor']);
  });
});

describe('GET /api/admin/applications/:id', () => {
  it('answers 404 application_not_found for an unknown id', async () => {
    const t = await makeApp();
    const body = expectProblem(await t.admin('GET', '/api/admin/applications/ghost'), 404, 'application_not_found');
    expect(body).toEqual({
      type: 'https://gatehouse.dev/problems/application-not-found',
      title: 'Not Found',
      status: 404,
      detail: 'There is no application with id "ghost".',
      code: 'application_not_found',
    });
  });
});

describe('PATCH /api/admin/applications/:id', () => {
  it('updates fields, bumps updatedAt and keeps createdAt', async () => {
    const t = await makeApp({ clock: T0 });
    const created = await create(t);
    t.clock.advance(60_000);
    const res = await t.admin('PATCH', '/api/admin/applications/notes', {
      name: 'Notes 2',
      audience: 'https://notes2.example.com/api',
      redirectUris: ['https://notes2.example.com/cb', 'http://localhost:3000/cb'],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ...created,
      clientSecret: undefined,
      name: 'Notes 2',
      audience: 'https://notes2.example.com/api',
      redirectUris: ['https://notes2.example.com/cb', 'http://localhost:3000/cb'],
      updatedAt: new Date(T0.getTime() + 60_000).toISOString(),
    });
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().name).toBe('Notes 2');
    // Keeping its own audience is not a clash.
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { audience: 'https://notes2.example.com/api' })).statusCode).toBe(200);
  });

  it('answers 404, 400 for empty or unknown fields, and 409 audience_in_use', async () => {
    const t = await makeApp();
    await create(t);
    await create(t, { id: 'tasks', audience: 'tasks' });
    expectProblem(await t.admin('PATCH', '/api/admin/applications/ghost', { name: 'x' }), 404, 'application_not_found');
    expectValidation(await t.admin('PATCH', '/api/admin/applications/notes', {}), ['body']);
    expectValidation(await t.admin('PATCH', '/api/admin/applications/notes', { id: 'renamed' }), ['body.id']);
    expectValidation(await t.admin('PATCH', '/api/admin/applications/notes', { clientSecret: 'x' }), ['body.clientSecret']);
    expectProblem(await t.admin('PATCH', '/api/admin/applications/tasks', { audience: 'https://notes.example.com/api' }), 409, 'audience_in_use');
    expectValidation(await t.admin('PATCH', '/api/admin/applications/notes', { redirectUris: ['http://public.example.com/cb'] }), ['body.redirectUris.0']);
  });

  it('checks redirect URIs against the new client type', async () => {
    const t = await makeApp();
    await create(t, { clientType: 'native', redirectUris: ['myapp://cb'] });
    expectValidation(await t.admin('PATCH', '/api/admin/applications/notes', { clientType: 'spa' }), ['body.redirectUris.0']);
    const res = await t.admin('PATCH', '/api/admin/applications/notes', { clientType: 'spa', redirectUris: ['https://notes.example.com/cb'] });
    expect(res.statusCode).toBe(200);
    expect(res.json().clientType).toBe('spa');
  });

  it('gives a client that becomes web a secret once, and takes it away when it becomes public', async () => {
    const t = await makeApp();
    await create(t, { clientType: 'spa' });
    const toWeb = await t.admin('PATCH', '/api/admin/applications/notes', { clientType: 'web' });
    expect(toWeb.statusCode).toBe(200);
    const secret = toWeb.json().clientSecret;
    expect(secret).toMatch(/^ghs_/);
    expect((await one(t.db.select().from(applications)))!.clientSecretHash).toBe(sha256(secret));
    // Staying web keeps the secret and does not show it again.
    const rename = await t.admin('PATCH', '/api/admin/applications/notes', { name: 'Renamed' });
    expect('clientSecret' in rename.json()).toBe(false);
    expect((await one(t.db.select().from(applications)))!.clientSecretHash).toBe(sha256(secret));
    const toSpa = await t.admin('PATCH', '/api/admin/applications/notes', { clientType: 'spa' });
    expect('clientSecret' in toSpa.json()).toBe(false);
    expect((await one(t.db.select().from(applications)))!.clientSecretHash).toBeNull();
    // The audit trail says which change minted a secret.
    const updates = (await t.admin('GET', '/api/admin/audit-log?action=application.updated')).json().entries;
    expect(updates.map((e: { details: unknown }) => e.details)).toEqual([
      { fields: ['clientType'] },
      { fields: ['name'] },
      { fields: ['clientType'], clientSecretIssued: true },
    ]);
  });

  it('manages the webhook secret: generated once with a new URL, kept on later edits, cleared with the URL', async () => {
    const t = await makeApp();
    await create(t);
    const set = await t.admin('PATCH', '/api/admin/applications/notes', { webhookUrl: 'https://hooks.example.com/a' });
    expect(set.statusCode).toBe(200);
    const secret = set.json().webhookSecret;
    expect(secret).toMatch(/^whsec_/);
    expect(set.json().webhookSecretSet).toBe(true);

    const move = await t.admin('PATCH', '/api/admin/applications/notes', { webhookUrl: 'https://hooks.example.com/b' });
    expect(move.json()).toMatchObject({ webhookUrl: 'https://hooks.example.com/b', webhookSecretSet: true });
    expect('webhookSecret' in move.json()).toBe(false);
    // Kept as it was; in PostgreSQL mode stored sealed under the key secret (db/secrets-at-rest.ts).
    const stored = (await one(t.db.select().from(applications)))!.webhookSecret!;
    expect(openAtRest(t.db, stored, webhookSecretPurpose('notes'))).toBe(secret);
    if (engineOf(t.db) === 'postgres') expect(stored).not.toContain(secret.slice('whsec_'.length));

    const own = await t.admin('PATCH', '/api/admin/applications/notes', { webhookSecret: 'chosen-by-admin-0123456789' });
    expect(own.body).not.toContain('chosen-by-admin');
    expect('webhookSecret' in own.json()).toBe(false);

    const cleared = await t.admin('PATCH', '/api/admin/applications/notes', { webhookUrl: null });
    expect(cleared.json()).toMatchObject({ webhookUrl: null, webhookSecretSet: false });
    expect((await one(t.db.select().from(applications)))!.webhookSecret).toBeNull();

    expectValidation(await t.admin('PATCH', '/api/admin/applications/notes', { webhookSecret: 'abcdefghijklmnopqrstu' }), ['body.webhookSecret']);
  });

  it('audits a redirect-URI change and tells the application by webhook (application.redirect_uris_changed)', async () => {
    const t = await makeApp({ clock: T0 });
    await create(t, { webhookUrl: 'https://hooks.example.com/in' });
    const before = ['https://notes.example.com/callback'];
    const after = ['https://notes.example.com/callback', 'https://notes.example.com/cb2'];
    // The same list in another order, and other fields, change nothing about where codes go.
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { name: 'Notes 2', redirectUris: before })).statusCode).toBe(200);
    t.clock.advance(1000);
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { redirectUris: after })).statusCode).toBe(200);
    const audit = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'application.redirect_uris_changed')));
    expect(audit.map((e) => ({ actor: e.actor, applicationId: e.applicationId, target: e.target, details: e.details, at: e.at.toISOString() }))).toEqual([
      { actor: 'admin', applicationId: 'notes', target: 'notes', details: { redirectUris: { before, after } }, at: '2026-03-01T10:00:01.000Z' },
    ]);
    const events = await many(t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.type, 'application.redirect_uris_changed')));
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.payload)).toEqual({
      id: events[0]!.id, type: 'application.redirect_uris_changed', createdAt: '2026-03-01T10:00:01.000Z', applicationId: 'notes',
      data: { actor: 'admin', redirectUris: { before, after } },
    });
  });

  it('keeps postLogoutRedirectUris as a list of its own: null until set (redirect URIs stand in), checked like redirect URIs, audited', async () => {
    const t = await makeApp({ clock: T0 });
    expect((await create(t)).postLogoutRedirectUris).toBeNull();
    expectValidation(
      await t.admin('PATCH', '/api/admin/applications/notes', { postLogoutRedirectUris: ['http://public.example.com/bye', 'notes://bye', 'https://a.example/#x'] }),
      ['body.postLogoutRedirectUris.0', 'body.postLogoutRedirectUris.1', 'body.postLogoutRedirectUris.2'],
    );
    expectValidation(await t.admin('PATCH', '/api/admin/applications/notes', { postLogoutRedirectUris: ['https://a.example/', 'https://a.example/'] }), ['body.postLogoutRedirectUris']);
    const set = await t.admin('PATCH', '/api/admin/applications/notes', { postLogoutRedirectUris: ['https://notes.example.com/signed-out'] });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().postLogoutRedirectUris).toEqual(['https://notes.example.com/signed-out']);
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().postLogoutRedirectUris).toEqual(['https://notes.example.com/signed-out']);
    // An empty list allows none; null goes back to the redirect URIs.
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { postLogoutRedirectUris: [] })).json().postLogoutRedirectUris).toEqual([]);
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { postLogoutRedirectUris: null })).json().postLogoutRedirectUris).toBeNull();
    const created = await t.admin('POST', '/api/admin/applications', appBody({ id: 'wiki', audience: 'https://wiki.example', postLogoutRedirectUris: ['https://wiki.example/bye'] }));
    expect(created.json().postLogoutRedirectUris).toEqual(['https://wiki.example/bye']);
    const audit = (await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'application.redirect_uris_changed')))).map((e) => e.details);
    expect(audit).toEqual([
      { postLogoutRedirectUris: { before: null, after: ['https://notes.example.com/signed-out'] } },
      { postLogoutRedirectUris: { before: ['https://notes.example.com/signed-out'], after: [] } },
      { postLogoutRedirectUris: { before: [], after: null } },
    ]);
    const openapi = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    expect(openapi.components?.schemas ?? openapi.paths['/api/admin/applications/{id}'].patch.requestBody.content['application/json'].schema.properties).toBeDefined();
    expect(JSON.stringify(openapi.paths['/api/admin/applications/{id}'].patch)).toContain('postLogoutRedirectUris');
  });

  it('moves the application between SSO groups and out of them via ssoGroupId', async () => {
    const t = await makeApp();
    await create(t);
    await t.admin('POST', '/api/admin/sso-groups', { id: 'g1', name: 'One' });
    expectValidation(await t.admin('PATCH', '/api/admin/applications/notes', { ssoGroupId: 'g2' }), ['body.ssoGroupId']);
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { ssoGroupId: 'g1' })).json().ssoGroupId).toBe('g1');
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { ssoGroupId: null })).json().ssoGroupId).toBeNull();
  });
});

describe('DELETE /api/admin/applications/:id', () => {
  it('answers 204 with no body, cascades to everything the application owns, and keeps the audit trail', async () => {
    const t = await makeApp({ clock: T0 });
    await create(t);
    await create(t, { id: 'keep', audience: 'keep' });
    const now = T0;
    await exec(t.db.insert(people).values({ id: 'usr_1', email: 'ann@example.com', username: 'ann', updatedAt: now }));
    for (const appId of ['notes', 'keep']) {
      await exec(t.db.insert(memberships).values({ id: `mem_${appId}`, applicationId: appId, personId: 'usr_1', joinedAt: now, lastActiveAt: now, updatedAt: now }));
      await exec(t.db.insert(invitations).values({ id: `inv_${appId}`, applicationId: appId, email: 'bob@example.com', role: 'member', tokenHash: sha256(`inv-${appId}`), invitedBy: 'admin', expiresAt: now }));
      await exec(t.db.insert(apiKeys).values({ id: `key_${appId}`, applicationId: appId, name: 'k', prefix: 'ghk_x', keyHash: sha256(`key-${appId}`), scopes: [] }));
      await exec(t.db.insert(webhookDeliveries).values({ id: `msg_${appId}`, applicationId: appId, type: 'webhook.test', payload: '{}', nextAttemptAt: now }));
    }

    const res = await t.admin('DELETE', '/api/admin/applications/notes');
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(res.headers['content-type']).toBeUndefined();

    expectProblem(await t.admin('GET', '/api/admin/applications/notes'), 404, 'application_not_found');
    for (const table of [memberships, invitations, apiKeys, webhookDeliveries]) {
      expect((await many(t.db.select().from(table))).map((r) => r.applicationId)).toEqual(['keep']);
    }
    expect(await many(t.db.select().from(people))).toHaveLength(1);
    // A small application is purged before the answer: the second entry says what went with it.
    expect((await many(t.db.select().from(auditLog))).map((a) => a.action)).toEqual(['application.created', 'application.created', 'application.deleted', 'application.purged']);
    expect((await t.admin('GET', '/api/admin/audit-log?action=application.deleted')).json().entries[0]).toMatchObject({ actor: 'admin', applicationId: 'notes', target: 'notes', details: {} });
    expect((await t.admin('GET', '/api/admin/audit-log?action=application.purged')).json().entries[0]).toMatchObject({
      actor: 'system', applicationId: 'notes', target: 'notes',
      details: { removed: { members: 1, invitations: 1, apiKeys: 1, webhookDeliveries: 1 }, requestedBy: 'admin', requestedAt: T0.toISOString() },
    });
    expectProblem(await t.admin('DELETE', '/api/admin/applications/notes'), 404, 'application_not_found');
    // The audience and id are free again.
    expect((await t.admin('POST', '/api/admin/applications', appBody())).statusCode).toBe(201);
  });

  it('takes the application out of its SSO group', async () => {
    const t = await makeApp();
    await t.admin('POST', '/api/admin/sso-groups', { id: 'g1', name: 'One' });
    await create(t, { ssoGroupId: 'g1' });
    expect((await t.admin('DELETE', '/api/admin/applications/notes')).statusCode).toBe(204);
    expect((await t.admin('GET', '/api/admin/sso-groups/g1')).json().applicationIds).toEqual([]);
  });
});

describe('POST /api/admin/applications/:id/client-secret', () => {
  it('rotates the secret of a web client: the new one is shown once and replaces the old hash', async () => {
    const t = await makeApp({ clock: T0 });
    const created = await create(t);
    t.clock.advance(5000);
    const res = await t.admin('POST', '/api/admin/applications/notes/client-secret');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['clientSecret']);
    expect(body.clientSecret).toMatch(/^ghs_[A-Za-z0-9_-]{43}$/);
    expect(body.clientSecret).not.toBe(created.clientSecret);
    const row = (await one(t.db.select().from(applications)))!;
    expect(row.clientSecretHash).toBe(sha256(body.clientSecret));
    expect(row.updatedAt).toEqual(new Date(T0.getTime() + 5000));
    const audit = (await many(t.db.select().from(auditLog))).map((a) => a.action);
    expect(audit).toEqual(['application.created', 'application.client_secret_rotated']);
    expect(JSON.stringify(await many(t.db.select().from(auditLog)))).not.toContain(body.clientSecret);
  });

  it('answers 409 not_confidential_client for spa and native clients, 404 for unknown ones', async () => {
    const t = await makeApp();
    await create(t, { id: 'spa', audience: 'spa', clientType: 'spa' });
    await create(t, { id: 'nat', audience: 'nat', clientType: 'native', redirectUris: ['myapp://cb'] });
    for (const id of ['spa', 'nat']) {
      expectProblem(await t.admin('POST', `/api/admin/applications/${id}/client-secret`), 409, 'not_confidential_client');
    }
    expectProblem(await t.admin('POST', '/api/admin/applications/ghost/client-secret'), 404, 'application_not_found');
  });
});
