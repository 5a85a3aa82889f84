/**
 * The "Done when" story, through the API alone: an administrator runs an invite-only
 * application end to end.
 */
import { describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.js';
import { createApplication, sessionCookieOf, signUp } from '../helpers/accounts.js';
import { authorize, expectOAuthError, location, refusedBack, SPA_REDIRECT, spaParams, spaTokens, token } from '../helpers/oauth-inject.js';

describe('running an invite-only application through the API', () => {
  it('invite, see pending, revoke one, the rest join, change a role, suspend (refresh fails), hand out a read-only key', async () => {
    const t = await makeApp({ clock: new Date('2026-03-01T10:00:00Z') });
    await createApplication(t, { id: 'notes', name: 'Notes', clientType: 'spa', redirectUris: [SPA_REDIRECT], authPolicy: { signup_policy: 'invite_only' } });
    const base = '/api/admin/applications/notes';

    // Invite several people.
    const created = await t.admin('POST', `${base}/invitations`, { emails: ['ann@example.com', 'bob@example.com', 'cyd@example.com'], message: 'Welcome to Notes' });
    expect(created.statusCode).toBe(201);
    const [ann, bob, cyd] = created.json().invitations as { id: string; email: string; acceptUrl: string }[];

    // See who is pending.
    const pending = (await t.admin('GET', `${base}/invitations?status=pending`)).json().invitations;
    expect(pending.map((i: { email: string }) => i.email)).toEqual(['ann@example.com', 'bob@example.com', 'cyd@example.com']);

    // Revoke one.
    expect((await t.admin('DELETE', `${base}/invitations/${cyd!.id}`)).statusCode).toBe(204);
    const cydTry = await signUp(t, { email: 'cyd@example.com', invitationToken: cyd!.acceptUrl.split('/invite/')[1] });
    expect(cydTry.statusCode).toBe(403);

    // The rest join through their links.
    const cookies: Record<string, string> = {};
    for (const inv of [ann!, bob!]) {
      const res = await signUp(t, { email: inv.email, invitationToken: inv.acceptUrl.split('/invite/')[1] });
      expect(res.statusCode).toBe(201);
      cookies[inv.email] = `gatehouse_session=${sessionCookieOf(res)}`;
    }
    expect((await t.admin('GET', `${base}/invitations?status=accepted`)).json().invitations).toHaveLength(2);
    const users = (await t.admin('GET', `${base}/users`)).json().users as { id: string; email: string; role: string }[];
    expect(users.map((u) => `${u.email}:${u.role}`)).toEqual(['ann@example.com:member', 'bob@example.com:member']);

    // Change a role.
    const promoted = await t.admin('PATCH', `${base}/users/${users[0]!.id}`, { role: 'admin' });
    expect(promoted.statusCode).toBe(200);
    expect(promoted.json().role).toBe('admin');

    // Suspend someone: their next refresh fails.
    const bobTokens = await spaTokens(t, cookies['bob@example.com']!);
    expect(bobTokens.refresh_token).toBeTruthy();
    const suspended = await t.admin('PATCH', `${base}/users/${users[1]!.id}`, { status: 'suspended' });
    expect(suspended.json().status).toBe('suspended');
    const refresh = await token(t, { grant_type: 'refresh_token', refresh_token: bobTokens.refresh_token, client_id: 'notes' });
    expectOAuthError(refresh, 400, 'invalid_grant');
    // …and authorize now refuses them.
    const denied = refusedBack(await authorize(t, spaParams().params, cookies['bob@example.com']!), 'suspended');
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('error_description')).toBe('Your access to Notes is suspended.');

    // Ann's refresh still works.
    const annTokens = await spaTokens(t, cookies['ann@example.com']!);
    const annRefresh = await token(t, { grant_type: 'refresh_token', refresh_token: annTokens.refresh_token, client_id: 'notes' });
    expect(annRefresh.statusCode).toBe(200);

    // Hand a backend an API key that can read members and nothing more.
    const key = (await t.admin('POST', `${base}/api-keys`, { name: 'backend', scopes: ['users:read'] })).json().key as string;
    const as = (method: 'GET' | 'PATCH' | 'POST' | 'DELETE', url: string, body?: unknown) => t.admin(method, url, body, { authorization: `Bearer ${key}` });
    const read = await as('GET', `${base}/users?status=active`);
    expect(read.statusCode).toBe(200);
    expect(read.json().users.map((u: { email: string }) => u.email)).toEqual(['ann@example.com']);
    expect((await as('GET', `${base}/users/${users[0]!.id}`)).statusCode).toBe(200);
    for (const [method, url, body] of [
      ['PATCH', `${base}/users/${users[0]!.id}`, { role: 'member' }],
      ['DELETE', `${base}/users/${users[0]!.id}`, undefined],
      ['GET', `${base}/invitations`, undefined],
      ['POST', `${base}/invitations`, { emails: ['x@example.com'] }],
      ['GET', base, undefined],
      ['GET', `${base}/api-keys`, undefined],
    ] as const) {
      const res = await as(method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json().code).toBe('insufficient_scope');
    }

    // And the audit log tells the story.
    const actions = (await t.admin('GET', '/api/admin/audit-log?applicationId=notes&limit=200')).json().entries.map((e: { action: string }) => e.action);
    for (const action of ['invitation.created', 'invitation.revoked', 'invitation.accepted', 'membership.updated', 'api_key.created']) {
      expect(actions).toContain(action);
    }
  });
});
