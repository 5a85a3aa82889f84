/**
 * The application's group rule, `allowedGroups` (issue 44 item 5, decision 0450), over OpenID
 * Connect through `inject`: who may set it (not an API key), the groups it names (existing, not
 * deletable from under it), authorize (the hosted refusal page naming the rule, no code), the
 * code exchange and every refresh (re-checked: a removed member's refresh fails), and an
 * invitation-only application joined by a person in an allowed group without an invitation.
 * Forward auth's check and hand-over are in forward-auth.test.ts, LDAP binds in ldap-binds.test.ts,
 * RADIUS in radius.test.ts. One app for the file.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication, sessionCookieOf, signIn, signUp } from '../helpers/accounts.js';
import { authorize, spaParams, spaTokens, token, SPA_REDIRECT } from '../helpers/oauth-inject.js';
import { expectProblem } from '../helpers/problem.js';

const REFUSED_SENTENCE = 'is open only to members of certain groups (its group rule), and you are in none of them.';
const GRANT_ERROR = { error: 'invalid_grant', error_description: 'The person is not in any of the groups this application allows.' };

let t: TestApp;
let ada: { id: string; cookie: string; refresh: string };
let bob: { id: string; cookie: string; refresh: string };

async function person(email: string) {
  const res = await signUp(t, { email, applicationId: 'notes' });
  expect(res.statusCode, res.body).toBe(201);
  const cookie = `gatehouse_session=${sessionCookieOf(res)}`;
  const tokens = await spaTokens(t, cookie);
  const users = (await t.admin('GET', '/api/admin/applications/notes/users')).json().users as { userId: string; email: string }[];
  return { id: users.find((u) => u.email === email)!.userId, cookie, refresh: tokens.refresh_token! };
}

const refresh = (refreshToken: string) => token(t, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'notes' });
const reasonOf = (body: string) => /data-reason="([a-z_]+)"/.exec(body)?.[1];

beforeAll(async () => {
  t = await makeApp({ perFile: true });
  await createApplication(t, {
    id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: [SPA_REDIRECT],
    authPolicy: { signup_policy: 'open' },
  });
  // Both join while Notes has no rule; then Ada is put in staff and Bob in nothing.
  ada = await person('ada@example.com');
  bob = await person('bob@example.com');
  expect((await t.admin('POST', '/api/admin/groups', { id: 'staff', name: 'Staff' })).statusCode).toBe(201);
  expect((await t.admin('PUT', `/api/admin/groups/staff/members/${ada.id}`)).statusCode).toBe(204);
});

describe('allowedGroups on the application', () => {
  it('is null by default, names existing groups only, and may not be changed by an API key', async () => {
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().allowedGroups).toBeNull();
    const unknown = await t.admin('PATCH', '/api/admin/applications/notes', { allowedGroups: ['staff', 'nobody'] });
    expect([unknown.statusCode, unknown.json().errors]).toEqual([400, [{ path: 'body.allowedGroups.1', message: 'there is no group "nobody"' }]]);
    expectProblem(await t.admin('PATCH', '/api/admin/applications/notes', { allowedGroups: [] }), 400, 'validation_failed');
    const key = (await t.admin('POST', '/api/admin/applications/notes/api-keys', { name: 'ci', scopes: ['application:read', 'application:write'] })).json().key as string;
    const byKey = await t.admin('PATCH', '/api/admin/applications/notes', { allowedGroups: ['staff'] }, { authorization: `Bearer ${key}` });
    expectProblem(byKey, 403, 'insufficient_scope');
    expect((await t.admin('GET', '/api/admin/applications/notes')).json().allowedGroups).toBeNull();

    const set = await t.admin('PATCH', '/api/admin/applications/notes', { allowedGroups: ['staff'] });
    expect([set.statusCode, set.json().allowedGroups]).toEqual([200, ['staff']]);
    // The key may still send the value the application has (no change).
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { allowedGroups: ['staff'], name: 'Notes' }, { authorization: `Bearer ${key}` })).statusCode).toBe(200);
    const inUse = await t.admin('DELETE', '/api/admin/groups/staff');
    expect([inUse.statusCode, inUse.json().code, inUse.json().detail]).toEqual([409, 'group_in_use', 'The group "staff" is named by Notes (allowedGroups); remove it there first.']);
  });
});

describe('OpenID Connect under the rule', () => {
  it('refuses a member outside the groups at authorize with the hosted page naming the rule, and gives no code', async () => {
    const { params } = spaParams();
    const refused = await authorize(t, params, bob.cookie);
    expect([refused.statusCode, refused.headers['content-type'], refused.headers.location, reasonOf(refused.body)])
      .toEqual([403, 'text/html; charset=utf-8', undefined, 'group_missing']);
    expect(refused.body).toContain(`Notes ${REFUSED_SENTENCE}`);
    expect(refused.body).not.toMatch(/[?&]code=/);
    // Their refresh token stops working too.
    const res = await refresh(bob.refresh);
    expect([res.statusCode, res.json()]).toEqual([400, GRANT_ERROR]);
  });

  it('lets a member of an allowed group sign in and refresh, until they are taken out of it', async () => {
    const tokens = await spaTokens(t, ada.cookie);
    expect(tokens.refresh_token).toBeTruthy();
    const first = await refresh(ada.refresh);
    expect(first.statusCode, first.body).toBe(200);
    expect((await t.admin('DELETE', `/api/admin/groups/staff/members/${ada.id}`)).statusCode).toBe(204);
    const after = await refresh(first.json().refresh_token as string);
    expect([after.statusCode, after.headers['cache-control'], after.json()]).toEqual([400, 'no-store', GRANT_ERROR]);
    const { params } = spaParams();
    expect(reasonOf((await authorize(t, params, ada.cookie)).body)).toBe('group_missing');
    // Back in the group, back in (with a new sign-in: the refused family is not revived).
    expect((await t.admin('PUT', `/api/admin/groups/staff/members/${ada.id}`)).statusCode).toBe(204);
    expect((await spaTokens(t, ada.cookie)).access_token).toBeTruthy();
  });

  it('lifts with allowedGroups: null', async () => {
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { allowedGroups: null })).json().allowedGroups).toBeNull();
    expect((await spaTokens(t, bob.cookie)).access_token).toBeTruthy();
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { allowedGroups: ['staff'] })).statusCode).toBe(200);
  });
});

describe('an invitation-only application with a rule', () => {
  it('admits a person in an allowed group without an invitation, and refuses anyone else by the rule', async () => {
    await createApplication(t, {
      id: 'club', name: 'Club', audience: 'https://club.example.com/api', clientType: 'spa', redirectUris: [SPA_REDIRECT],
      authPolicy: { signup_policy: 'invite_only' }, allowedGroups: ['staff'],
    });
    // Each application signs in on its own (a session of Notes is not one of Club).
    const adaIn = await signIn(t, { email: 'ada@example.com', applicationId: 'club' });
    expect(adaIn.statusCode, adaIn.body).toBe(200);
    const bobIn = await signIn(t, { email: 'bob@example.com', applicationId: 'club' });
    expect(bobIn.statusCode, bobIn.body).toBe(200);
    const adaClub = `gatehouse_session=${sessionCookieOf(adaIn)}`;
    const bobClub = `gatehouse_session=${sessionCookieOf(bobIn)}`;
    const { pkce, params } = spaParams({ client_id: 'club' });
    const joined = await authorize(t, params, adaClub);
    expect(joined.statusCode, joined.body).toBe(302);
    const code = new URL(String(joined.headers.location)).searchParams.get('code');
    expect(code).toBeTruthy();
    const exchanged = await token(t, { grant_type: 'authorization_code', code: code!, redirect_uri: SPA_REDIRECT, client_id: 'club', code_verifier: pkce.verifier });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    const members = (await t.admin('GET', '/api/admin/applications/club/users')).json().users as { email: string; role: string; status: string }[];
    expect(members.map((m) => [m.email, m.role, m.status])).toEqual([['ada@example.com', 'member', 'active']]);

    const refused = await authorize(t, spaParams({ client_id: 'club' }).params, bobClub);
    expect([refused.statusCode, reasonOf(refused.body)]).toEqual([403, 'group_missing']);
    expect(refused.body).toContain(`Club ${REFUSED_SENTENCE}`);
  });
});
