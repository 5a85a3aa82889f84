import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import { memberships, people, type Application } from '../../server/db/schema.js';
import { readSession, realmAuthTime, realmOf } from '../../server/accounts/session.js';
import { settleMembership } from '../../server/accounts/membership.js';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication, insertInvitation, sessionCookieOf, signIn, signUp } from '../helpers/accounts.js';

const fakeRequest = (token: string) => ({ cookies: { gatehouse_session: token } }) as unknown as FastifyRequest;

function appRow(t: TestApp, id: string): Application {
  return t.app.ctx.db.query.applications.findFirst({ where: (a, { eq: e }) => e(a.id, id) }).sync()!;
}

describe('SSO realms', () => {
  it('shares sign-in inside an SSO group and asks again outside it', async () => {
    const t = await makeApp();
    expect((await t.admin('POST', '/api/admin/sso-groups', { id: 'office', name: 'Office' })).statusCode).toBe(201);
    const open = { authPolicy: { signup_policy: 'open' } };
    await createApplication(t, { id: 'app-a', audience: 'a', ssoGroupId: 'office', ...open });
    await createApplication(t, { id: 'app-b', audience: 'b', ssoGroupId: 'office', ...open });
    await createApplication(t, { id: 'app-c', audience: 'c', ...open });
    const [a, b, c] = ['app-a', 'app-b', 'app-c'].map((id) => appRow(t, id)) as [Application, Application, Application];
    expect(realmOf(a)).toBe('group:office');
    expect(realmOf(c)).toBe('app:app-c');

    const res = await signUp(t, { email: 'ada@example.com', applicationId: 'app-a' });
    expect(res.statusCode).toBe(201);
    const cookie = sessionCookieOf(res);
    const { session } = readSession(t.app.ctx, fakeRequest(cookie))!;
    expect(realmAuthTime(t.app.ctx, session.id, realmOf(a))).toEqual(t.clock.now());
    expect(realmAuthTime(t.app.ctx, session.id, realmOf(b))).toEqual(t.clock.now());
    expect(realmAuthTime(t.app.ctx, session.id, realmOf(c))).toBeUndefined();

    t.clock.advance(5_000);
    const again = await signIn(t, { email: 'ada@example.com', applicationId: 'app-c' }, { cookie: `gatehouse_session=${cookie}` });
    expect(again.statusCode).toBe(200);
    expect(realmAuthTime(t.app.ctx, session.id, realmOf(c))).toEqual(t.clock.now());
    expect(realmAuthTime(t.app.ctx, session.id, realmOf(a))).toEqual(new Date(t.clock.now().getTime() - 5_000));
  });
});

describe('settleMembership', () => {
  async function person(t: TestApp, email: string) {
    await createApplication(t, { id: 'home', audience: 'home', authPolicy: { signup_policy: 'open' } });
    const res = await signUp(t, { email, applicationId: 'home' });
    expect(res.statusCode).toBe(201);
    return t.db.select().from(people).where(eq(people.id, res.json().user.id)).get()!;
  }

  it('joins open applications, accepts invitations for verified e-mails, refuses otherwise', async () => {
    const t = await makeApp();
    const ada = await person(t, 'ada@example.com');
    await createApplication(t, { id: 'open-app', audience: 'o', authPolicy: { signup_policy: 'open' } });
    await createApplication(t, { id: 'invites', audience: 'i' });
    await createApplication(t, { id: 'closed', audience: 'c', authPolicy: { signup_policy: 'closed' } });
    const ctx = t.app.ctx;

    const joined = settleMembership(ctx, appRow(t, 'open-app'), ada);
    expect('membership' in joined && joined.membership).toMatchObject({ status: 'active', role: 'member' });
    expect(settleMembership(ctx, appRow(t, 'closed'), ada)).toMatchObject({ error: 'access_denied' });
    expect(settleMembership(ctx, appRow(t, 'invites'), ada)).toMatchObject({ error: 'access_denied' });

    insertInvitation(t, 'invites', 'ada@example.com', 'admin');
    // An unverified e-mail does not pick up the invitation.
    expect(settleMembership(ctx, appRow(t, 'invites'), ada)).toMatchObject({ error: 'access_denied' });
    const verified = { ...ada, emailVerified: true };
    const accepted = settleMembership(ctx, appRow(t, 'invites'), verified);
    expect('membership' in accepted && accepted.membership).toMatchObject({ status: 'active', role: 'admin' });

    t.db.update(memberships).set({ status: 'suspended' }).where(eq(memberships.applicationId, 'open-app')).run();
    expect(settleMembership(ctx, appRow(t, 'open-app'), ada)).toMatchObject({ error: 'access_denied' });
  });
});
