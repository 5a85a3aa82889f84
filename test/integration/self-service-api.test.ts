/**
 * Self-service API (spec §4.3): authentication and CSRF for every route, memberships, profile
 * edits against `profile_fields` (each rule), linked accounts and unlinking.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { linkedAccounts, people } from '../../server/db/schema.js';
import { createMembership } from '../../server/members/create.js';
import { makeApp, type TestApp } from '../helpers/app.js';
import { PASSWORD, createApplication, signIn } from '../helpers/accounts.js';
import { expectProblem, expectValidation } from '../helpers/problem.js';
import { me, signedUpCookie } from '../helpers/self-service.js';
import { exec, one } from '../../server/db/store.js';

const FIELDS = [
  { key: 'team', label: 'Team', type: 'select', options: ['red', 'blue'], required: true, user_editable: true },
  { key: 'age', label: 'Age', type: 'integer', min: 1, max: 150, required: false, user_editable: true },
  { key: 'newsletter', label: 'Newsletter', type: 'boolean', required: false, user_editable: true },
  { key: 'employeeId', label: 'Employee id', type: 'string', required: false, user_editable: false },
];

let shared: TestApp;
let people_n = 0;

// One app for the file (building one costs more than these tests); each test signs up its own person.
beforeAll(async () => {
  shared = await makeApp({ perFile: true, config: { env: { GATEHOUSE_SIGN_UP_RATE_LIMIT: '100' } } });
  await createApplication(shared, { id: 'notes', name: 'Notes', authPolicy: { signup_policy: 'open', profile_fields: FIELDS } });
  await createApplication(shared, { id: 'wiki', name: 'Wiki', audience: 'https://wiki.example.com/api', authPolicy: { signup_policy: 'open' } });
});

/** A new person, a member of Notes only, signed in: their cookie, id and e-mail. */
async function setUp() {
  const t = shared;
  const email = `ada${++people_n}@example.com`;
  const cookie = await signedUpCookie(t, email, 'notes');
  const userId = (await one(t.db.select().from(people).where(eq(people.email, email))))!.id;
  return { t, cookie, userId, email };
}

/** Ada joins the second application a second later (through the one membership-creating path). */
async function joinWiki(t: TestApp, userId: string) {
  const person = (await one(t.db.select().from(people).where(eq(people.id, userId))))!;
  t.clock.advance(1000);
  return createMembership(t.db, t.clock.now(), 'wiki', person);
}

const ROUTES: [string, string][] = [
  ['GET', '/api/me/memberships'],
  ['PATCH', '/api/me/applications/notes/profile'],
  ['GET', '/api/me/sessions'],
  ['DELETE', '/api/me/sessions/ses_x'],
  ['POST', '/api/me/sessions/sign-out-all'],
  ['GET', '/api/me/linked-accounts'],
  ['DELETE', '/api/me/linked-accounts/github'],
  ['POST', '/api/me/password'],
];

describe('authentication and CSRF', () => {
  it('answers 401 unauthorized without a cookie, with a bad cookie and with a signed-out session', async () => {
    const { t, cookie } = await setUp();
    const signedOut = (await setUp()).cookie;
    expect((await me(t, 'POST', '/api/auth/sign-out', signedOut)).statusCode).toBe(204);
    for (const [method, url] of ROUTES) {
      for (const c of [undefined, 'gatehouse_session=not-a-session-token', signedOut]) {
        const res = await me(t, method, url, c, method === 'PATCH' ? { profile: {} } : undefined);
        expectProblem(res, 401, 'unauthorized');
        expect(res.headers['www-authenticate']).toBe('Cookie');
      }
    }
    // The good cookie still works, and answers are never cached.
    const ok = await me(t, 'GET', '/api/me/memberships', cookie);
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['cache-control']).toBe('no-store');
  });

  it('refuses writes that are not JSON or come from another origin (403 csrf_failed)', async () => {
    const { t, cookie } = await setUp();
    for (const [method, url] of ROUTES.filter(([m]) => m !== 'GET')) {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', undefined]) {
        const res = await t.app.inject({ method: method as 'POST', url, headers: { cookie, ...(type ? { 'content-type': type } : {}) }, payload: 'x=1' });
        expectProblem(res, 403, 'csrf_failed');
      }
      const foreign = await me(t, method, url, cookie, method === 'PATCH' ? { profile: {} } : undefined, { origin: 'https://evil.example' });
      expectProblem(foreign, 403, 'csrf_failed');
      // A browser that names no origin but says the request is cross-site is refused as well.
      const crossSite = await me(t, method, url, cookie, method === 'PATCH' ? { profile: {} } : undefined, { 'sec-fetch-site': 'cross-site' });
      expectProblem(crossSite, 403, 'csrf_failed');
    }
    // POST is a CORS-simple method (a cross-site form can send it): JSON even without a body.
    for (const [method, url] of ROUTES.filter(([m]) => m === 'POST')) {
      expectProblem(await t.app.inject({ method: method as 'POST', url, headers: { cookie } }), 403, 'csrf_failed');
    }
    // The issuer's own origin is fine.
    const same = await me(t, 'PATCH', '/api/me/applications/notes/profile', cookie, { profile: { team: 'red' } }, { origin: 'http://127.0.0.1:8787' });
    expect(same.statusCode, same.body).toBe(200);
  });

  it('takes a bodyless DELETE without any Content-Type (DESIGN §5: not CORS-simple, so a cross-site page cannot send one)', async () => {
    const { t, cookie } = await setUp();
    const other = await signIn(t, { email: `ada${people_n}@example.com` });
    expect(other.statusCode, other.body).toBe(200);
    const sid = (await me(t, 'GET', '/api/me/sessions', cookie)).json().sessions.find((s: { current: boolean }) => !s.current).id;
    const ended = await t.app.inject({ method: 'DELETE', url: `/api/me/sessions/${sid}`, headers: { cookie } });
    expect(ended.statusCode, ended.body).toBe(204);
    expect(ended.body).toBe('');
    // The Origin rule still holds for bodyless DELETEs, and the answer comes before anything is ended.
    const foreign = await t.app.inject({ method: 'DELETE', url: `/api/me/sessions/${sid}`, headers: { cookie, origin: 'https://evil.example' } });
    expectProblem(foreign, 403, 'csrf_failed');
    const unlink = await t.app.inject({ method: 'DELETE', url: '/api/me/linked-accounts/github', headers: { cookie, origin: 'http://127.0.0.1:8787' } });
    expectProblem(unlink, 404, 'linked_account_not_found');
  });

  it('lists every route in the OpenAPI document and rejects unknown query parameters', async () => {
    const { t, cookie } = await setUp();
    const paths = Object.keys((await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json().paths).filter((p) => p.startsWith('/api/me'));
    expect(paths.sort()).toEqual([
      '/api/me', '/api/me/app-passwords', '/api/me/app-passwords/{id}', '/api/me/applications/{id}/profile', '/api/me/linked-accounts', '/api/me/linked-accounts/{provider}', '/api/me/memberships',
      '/api/me/network-certificates', '/api/me/network-certificates/{id}',
      '/api/me/passkeys', '/api/me/passkeys/options', '/api/me/passkeys/{id}', '/api/me/password', '/api/me/recovery-codes',
      '/api/me/security', '/api/me/sessions', '/api/me/sessions/sign-out-all', '/api/me/sessions/{sid}', '/api/me/totp', '/api/me/totp/confirm',
    ]);
    expectValidation(await me(t, 'GET', '/api/me/memberships?limit=5', cookie), ['querystring.limit']);
  });
});

describe('memberships and profiles', () => {
  it('lists every membership with the spec fields, suspended ones included', async () => {
    const { t, cookie, userId } = await setUp();
    const wiki = (await joinWiki(t, userId));
    expect((await t.admin('PATCH', `/api/admin/applications/wiki/users/${wiki.id}`, { status: 'suspended', role: 'admin' })).statusCode).toBe(200);
    const res = await me(t, 'GET', '/api/me/memberships', cookie);
    expect(res.statusCode).toBe(200);
    const joined = t.clock.now();
    expect(res.json()).toEqual({
      memberships: [
        {
          applicationId: 'notes', applicationName: 'Notes', status: 'active', role: 'member', profile: {},
          joinedAt: new Date(joined.getTime() - 1000).toISOString(), lastActiveAt: new Date(joined.getTime() - 1000).toISOString(),
        },
        { applicationId: 'wiki', applicationName: 'Wiki', status: 'suspended', role: 'admin', profile: {}, joinedAt: joined.toISOString(), lastActiveAt: joined.toISOString() },
      ],
    });
  });

  it('saves user-editable fields, merges, clears optional ones with null, and audits as the person', async () => {
    const { t, cookie, userId, email } = await setUp();
    const first = await me(t, 'PATCH', '/api/me/applications/notes/profile', cookie, { profile: { team: 'red', age: 36, newsletter: true } });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ applicationId: 'notes', applicationName: 'Notes', status: 'active', profile: { team: 'red', age: 36, newsletter: true } });
    const second = await me(t, 'PATCH', '/api/me/applications/notes/profile', cookie, { profile: { age: null, team: 'blue' } });
    expect(second.json().profile).toEqual({ team: 'blue', newsletter: true });
    const listed = await me(t, 'GET', '/api/me/memberships', cookie);
    expect(listed.json().memberships[0].profile).toEqual({ team: 'blue', newsletter: true });
    const audit = await t.admin('GET', `/api/admin/audit-log?actor=${encodeURIComponent(`person:${userId}`)}&action=membership.updated`);
    expect(audit.json().entries).toHaveLength(2);
    expect(audit.json().entries[0]).toMatchObject({ actor: `person:${userId}`, applicationId: 'notes', details: { userId, changed: ['profile'] } });
    // An administrator sees the same profile.
    const admin = await t.admin('GET', `/api/admin/applications/notes/users?q=${encodeURIComponent(email)}`);
    expect(admin.json().users[0].profile).toEqual({ team: 'blue', newsletter: true });
  });

  it('names the field for each rule: unknown, wrong type, out of range, not editable, required missing or cleared', async () => {
    const { t, cookie } = await setUp();
    const patch = (profile: Record<string, unknown>) => me(t, 'PATCH', '/api/me/applications/notes/profile', cookie, { profile });
    expectValidation(await patch({ team: 'red', colour: 'x' }), ['body.profile.colour']);
    expectValidation(await patch({ team: 'red', age: 'old' }), ['body.profile.age']);
    expectValidation(await patch({ team: 'red', age: 1.5 }), ['body.profile.age']);
    expectValidation(await patch({ team: 'red', age: 200 }), ['body.profile.age']);
    expectValidation(await patch({ team: 'green' }), ['body.profile.team']);
    expectValidation(await patch({ team: 'red', newsletter: 'yes' }), ['body.profile.newsletter']);
    const locked = expectValidation(await patch({ team: 'red', employeeId: 'E1' }), ['body.profile.employeeId']);
    expect(locked.errors![0]!.message).toBe('cannot be changed by the user');
    const missing = expectValidation(await patch({ age: 30 }), ['body.profile.team']);
    expect(missing.errors![0]!.message).toBe('is required');
    expect((await patch({ team: 'red' })).statusCode).toBe(200);
    const cleared = expectValidation(await patch({ team: null }), ['body.profile.team']);
    expect(cleared.errors![0]!.message).toBe('is required and cannot be cleared');
    // Several failures come back together; nothing was written.
    expectValidation(await patch({ age: 0, colour: 1 }), ['body.profile.age', 'body.profile.colour']);
    expect((await me(t, 'GET', '/api/me/memberships', cookie)).json().memberships[0].profile).toEqual({ team: 'red' });
  });

  it('validates the body shape: unknown fields, missing profile, non-object, bad JSON', async () => {
    const { t, cookie } = await setUp();
    const url = '/api/me/applications/notes/profile';
    expectValidation(await me(t, 'PATCH', url, cookie, { profile: { team: 'red' }, role: 'admin' }), ['body.role']);
    expectValidation(await me(t, 'PATCH', url, cookie, {}), ['body.profile']);
    expectValidation(await me(t, 'PATCH', url, cookie, { profile: ['red'] }), ['body.profile']);
    expectValidation(await me(t, 'PATCH', url, cookie, { profile: { team: { nested: true } } }), ['body.profile.team']);
    const bad = await t.app.inject({ method: 'PATCH', url, headers: { cookie, 'content-type': 'application/json' }, payload: '{"profile":' });
    expectProblem(bad, 400, 'invalid_json');
  });

  it('answers 404 when not a member or the application is unknown, 403 when suspended', async () => {
    const { t, cookie, userId } = await setUp();
    expectProblem(await me(t, 'PATCH', '/api/me/applications/wiki/profile', cookie, { profile: {} }), 404, 'membership_not_found');
    expectProblem(await me(t, 'PATCH', '/api/me/applications/nope/profile', cookie, { profile: {} }), 404, 'membership_not_found');
    const member = (await t.admin('GET', '/api/admin/applications/notes/users?limit=200')).json().users.find((u: { userId: string }) => u.userId === userId);
    await t.admin('PATCH', `/api/admin/applications/notes/users/${member.id}`, { status: 'suspended' });
    expectProblem(await me(t, 'PATCH', '/api/me/applications/notes/profile', cookie, { profile: { team: 'red' } }), 403, 'membership_suspended');
  });
});

describe('linked accounts', () => {
  it('lists the credential account with the spec fields', async () => {
    const { t, cookie, email } = await setUp();
    const res = await me(t, 'GET', '/api/me/linked-accounts', cookie);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ accounts: [{ provider: 'credential', email, linked_at: t.clock.now().toISOString() }] });
  });

  it('refuses to unlink the last way in (409), answers 404 for an unlinked provider, and unlinks otherwise', async () => {
    const { t, cookie, userId, email } = await setUp();
    expectProblem(await me(t, 'DELETE', '/api/me/linked-accounts/credential', cookie), 409, 'last_sign_in_method');
    expectProblem(await me(t, 'DELETE', '/api/me/linked-accounts/github', cookie), 404, 'linked_account_not_found');

    t.clock.advance(1000);
    await exec(t.db.insert(linkedAccounts).values({ id: `acc_gh${people_n}`, personId: userId, provider: 'github', providerAccountId: String(people_n), email: 'ada@users.github.example', linkedAt: t.clock.now() }));
    const both = await me(t, 'GET', '/api/me/linked-accounts', cookie);
    expect(both.json().accounts.map((a: { provider: string }) => a.provider)).toEqual(['credential', 'github']);

    // Unlinking the password leaves GitHub as the only way in; the password no longer signs in.
    expect((await me(t, 'DELETE', '/api/me/linked-accounts/credential', cookie)).statusCode).toBe(204);
    expectProblem(await signIn(t, { email, password: PASSWORD }), 401, 'invalid_credentials');
    expectProblem(await me(t, 'DELETE', '/api/me/linked-accounts/github', cookie), 409, 'last_sign_in_method');
    expect((await me(t, 'GET', '/api/me/linked-accounts', cookie)).json().accounts).toEqual([
      { provider: 'github', email: 'ada@users.github.example', linked_at: t.clock.now().toISOString() },
    ]);
    // Without a password there is nothing to change.
    expectProblem(await me(t, 'POST', '/api/me/password', cookie, { currentPassword: PASSWORD, newPassword: 'another long one' }), 409, 'password_not_set');
    const audit = await t.admin('GET', `/api/admin/audit-log?action=person.account_unlinked&actor=person:${userId}`);
    expect(audit.json().entries.map((e: { actor: string; details: unknown }) => [e.actor, e.details])).toEqual([[`person:${userId}`, { provider: 'credential' }]]);
  });

  it('is per person: another person cannot see or unlink these', async () => {
    const { t, cookie, email } = await setUp();
    const bob = await setUp();
    const res = await me(t, 'GET', '/api/me/linked-accounts', cookie);
    expect(res.json().accounts.map((a: { email: string }) => a.email)).toEqual([email]);
    expectProblem(await me(t, 'DELETE', '/api/me/linked-accounts/credential', bob.cookie), 409, 'last_sign_in_method');
    expect((await me(t, 'GET', '/api/me/linked-accounts', cookie)).json().accounts).toHaveLength(1);
  });
});
