import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import { applications, memberships, people, type Application } from '../../server/db/schema.js';
import { readSession, realmAuthTime, realmOf } from '../../server/accounts/session.js';
import { settleMembership } from '../../server/accounts/membership.js';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication, insertInvitation, sessionCookieOf, signIn, signUp } from '../helpers/accounts.js';
import { exec, one } from '../../server/db/store.js';

const fakeRequest = (token: string) => ({ cookies: { gatehouse_session: token } }) as unknown as FastifyRequest;

async function appRow(t: TestApp, id: string): Promise<Application> {
  return (await one(t.db.select().from(applications).where(eq(applications.id, id))))!;
}

describe('SSO realms', () => {
  it('shares sign-in inside an SSO group and asks again outside it', async () => {
    const t = await makeApp();
    expect((await t.admin('POST', '/api/admin/sso-groups', { id: 'office', name: 'Office' })).statusCode).toBe(201);
    const open = { authPolicy: { signup_policy: 'open' } };
    await createApplication(t, { id: 'app-a', audience: 'a', ssoGroupId: 'office', ...open });
    await createApplication(t, { id: 'app-b', audience: 'b', ssoGroupId: 'office', ...open });
    await createApplication(t, { id: 'app-c', audience: 'c', ...open });
    const [a, b, c] = (await Promise.all(['app-a', 'app-b', 'app-c'].map((id) => appRow(t, id)))) as [Application, Application, Application];
    expect(realmOf(a)).toBe('group:office');
    expect(realmOf(c)).toBe('app:app-c');

    const res = await signUp(t, { email: 'ada@example.com', applicationId: 'app-a' });
    expect(res.statusCode).toBe(201);
    const cookie = sessionCookieOf(res);
    const { session } = (await readSession(t.app.ctx, fakeRequest(cookie)))!;
    expect(await realmAuthTime(t.app.ctx, session.id, realmOf(a))).toEqual(t.clock.now());
    expect(await realmAuthTime(t.app.ctx, session.id, realmOf(b))).toEqual(t.clock.now());
    expect(await realmAuthTime(t.app.ctx, session.id, realmOf(c))).toBeUndefined();

    t.clock.advance(5_000);
    const again = await signIn(t, { email: 'ada@example.com', applicationId: 'app-c' }, { cookie: `gatehouse_session=${cookie}` });
    expect(again.statusCode).toBe(200);
    expect(await realmAuthTime(t.app.ctx, session.id, realmOf(c))).toEqual(t.clock.now());
    expect(await realmAuthTime(t.app.ctx, session.id, realmOf(a))).toEqual(new Date(t.clock.now().getTime() - 5_000));
  });
});

describe('realms at authorize', () => {
  it('is silent for an app in the signed-in group and answers login_required outside it until signed in', async () => {
    const t = await makeApp();
    expect((await t.admin('POST', '/api/admin/sso-groups', { id: 'office', name: 'Office' })).statusCode).toBe(201);
    const make = (id: string, group?: string) =>
      createApplication(t, {
        id, audience: `https://${id}.example/api`, redirectUris: [`https://${id}.example/cb`],
        authPolicy: { signup_policy: 'open' }, ...(group ? { ssoGroupId: group } : {}),
      });
    await make('app-a', 'office');
    await make('app-b', 'office');
    await make('app-c');
    const res = await signUp(t, { email: 'ada@example.com', applicationId: 'app-a' });
    const cookie = `gatehouse_session=${sessionCookieOf(res)}`;
    const authorize = (id: string) =>
      t.app.inject({
        method: 'GET',
        url: `/api/auth/oauth2/authorize?${new URLSearchParams({
          response_type: 'code', client_id: id, redirect_uri: `https://${id}.example/cb`, scope: 'openid', state: 's', prompt: 'none',
        })}`,
        headers: { cookie },
      });
    const b = new URL(String((await authorize('app-b')).headers.location));
    expect(b.searchParams.get('code')).toBeTruthy();
    const c = new URL(String((await authorize('app-c')).headers.location));
    expect(c.searchParams.get('error')).toBe('login_required');

    expect((await signIn(t, { email: 'ada@example.com', applicationId: 'app-c' }, { cookie })).statusCode).toBe(200);
    const c2 = new URL(String((await authorize('app-c')).headers.location));
    expect(c2.searchParams.get('code')).toBeTruthy();
  });

  it('writes lastSeenAt at most once a minute', async () => {
    const t = await makeApp();
    await createApplication(t, { authPolicy: { signup_policy: 'open' } });
    const token = sessionCookieOf(await signUp(t, { email: 'ada@example.com', applicationId: 'notes' }));
    const created = t.clock.now().getTime();
    t.clock.advance(30_000);
    expect((await readSession(t.app.ctx, fakeRequest(token)))!.session.lastSeenAt.getTime()).toBe(created);
    t.clock.advance(31_000);
    await readSession(t.app.ctx, fakeRequest(token));
    t.clock.advance(1_000);
    expect((await readSession(t.app.ctx, fakeRequest(token)))!.session.lastSeenAt.getTime()).toBe(created + 61_000);
  });
});

describe('settleMembership', () => {
  async function person(t: TestApp, email: string) {
    await createApplication(t, { id: 'home', audience: 'home', authPolicy: { signup_policy: 'open' } });
    const res = await signUp(t, { email, applicationId: 'home' });
    expect(res.statusCode).toBe(201);
    return (await one(t.db.select().from(people).where(eq(people.id, res.json().user.id))))!;
  }

  it('joins open applications, accepts invitations for verified e-mails, refuses otherwise', async () => {
    const t = await makeApp();
    const ada = await person(t, 'ada@example.com');
    await createApplication(t, { id: 'open-app', audience: 'o', authPolicy: { signup_policy: 'open' } });
    await createApplication(t, { id: 'invites', audience: 'i' });
    await createApplication(t, { id: 'closed', audience: 'c', authPolicy: { signup_policy: 'closed' } });
    const ctx = t.app.ctx;

    const joined = await settleMembership(ctx, await appRow(t, 'open-app'), ada);
    expect('membership' in joined && joined.membership).toMatchObject({ status: 'active', role: 'member' });
    expect(await settleMembership(ctx, await appRow(t, 'closed'), ada)).toMatchObject({ error: 'access_denied' });
    expect(await settleMembership(ctx, await appRow(t, 'invites'), ada)).toMatchObject({ error: 'access_denied' });

    (await insertInvitation(t, 'invites', 'ada@example.com', 'admin'));
    // An unverified e-mail does not pick up the invitation.
    expect(await settleMembership(ctx, await appRow(t, 'invites'), ada)).toMatchObject({ error: 'access_denied' });
    const verified = { ...ada, emailVerified: true };
    const accepted = await settleMembership(ctx, await appRow(t, 'invites'), verified);
    expect('membership' in accepted && accepted.membership).toMatchObject({ status: 'active', role: 'admin' });

    await exec(t.db.update(memberships).set({ status: 'suspended' }).where(eq(memberships.applicationId, 'open-app')));
    expect(await settleMembership(ctx, await appRow(t, 'open-app'), ada)).toMatchObject({ error: 'access_denied' });
  });
});
