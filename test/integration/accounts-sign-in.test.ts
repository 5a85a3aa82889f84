import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import {
  auditLog,
  invitations,
  linkedAccounts,
  memberships,
  people,
  refreshTokenFamilies,
  sessions,
  signInBackOff,
  webhookDeliveries,
} from '../../server/db/schema.js';
import { readSession } from '../../server/accounts/session.js';
import { newId } from '../../server/util/ids.js';
import { makeApp, makeInstance, type TestApp } from '../helpers/app.js';
import {
  PASSWORD,
  createApplication,
  insertInvitation,
  postJson,
  sessionCookieOf,
  signIn,
  signUp,
} from '../helpers/accounts.js';
import { exec, one, many } from '../../server/db/store.js';

const fakeRequest = (token: string) => ({ cookies: { gatehouse_session: token } }) as unknown as FastifyRequest;

async function openApp(t: TestApp, overrides: Record<string, unknown> = {}) {
  return createApplication(t, { authPolicy: { signup_policy: 'open' }, ...overrides });
}

describe('POST /api/auth/sign-up/email', () => {
  it('creates the person, credential account, membership and session for an open application', async () => {
    // The stored hash is the subject here: the server's argon2id cost, not the tests' cheaper one.
    const t = await makeApp({ passwordHashing: 'production' });
    await openApp(t);
    const res = await signUp(t, { email: 'Ada@Example.com', name: 'Ada', applicationId: 'notes' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const { user } = res.json();
    expect(user).toMatchObject({ email: 'ada@example.com', name: 'Ada', emailVerified: false });
    expect(user.id).toMatch(/^usr_/);
    const [session, device] = res.headers['set-cookie'] as string[];
    expect(session).toMatch(/^gatehouse_session=[A-Za-z0-9_-]{43}; Max-Age=2592000; Path=\/; HttpOnly; SameSite=Lax$/);
    // This browser has proved itself for the address (lock-out exemption, accounts/device-cookie.ts).
    expect(device).toMatch(/^gatehouse_device=[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}; Max-Age=15552000; Path=\/; HttpOnly; SameSite=Lax$/);

    const person = (await one(t.db.select().from(people).where(eq(people.id, user.id))))!;
    expect(person.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    const account = (await one(t.db.select().from(linkedAccounts).where(eq(linkedAccounts.personId, user.id))))!;
    expect(account).toMatchObject({ provider: 'credential', email: 'ada@example.com' });
    const membership = (await one(t.db.select().from(memberships).where(eq(memberships.personId, user.id))))!;
    expect(membership).toMatchObject({ applicationId: 'notes', status: 'active', role: 'member' });
    const current = await readSession(t.app.ctx, fakeRequest(sessionCookieOf(res)));
    expect(current?.person.id).toBe(user.id);
  });

  it('sets a __Host- Secure cookie when the issuer is https', async () => {
    const t = await makeApp({ config: { issuer: 'https://id.example.com' } });
    await openApp(t);
    const res = await signUp(t, { email: 'ada@example.com', applicationId: 'notes' }, { origin: 'https://id.example.com' });
    expect(res.statusCode).toBe(201);
    const [session, device] = res.headers['set-cookie'] as string[];
    expect(session).toMatch(/^__Host-gatehouse_session=[^;]+; Max-Age=2592000; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    expect(device).toMatch(/^__Host-gatehouse_device=[^;]+; Max-Age=15552000; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
  });

  it('refuses sign-up without an open application or invitation', async () => {
    const t = await makeApp();
    await createApplication(t, { id: 'invites', audience: 'a1' });
    await createApplication(t, { id: 'closed', audience: 'a2', authPolicy: { signup_policy: 'closed' } });
    for (const body of [{ applicationId: 'invites' }, { applicationId: 'closed' }, {}]) {
      const res = await signUp(t, { email: 'ada@example.com', ...body });
      expect(res.statusCode).toBe(403);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(res.json().code).toBe('signup_not_allowed');
    }
    const unknown = await signUp(t, { email: 'ada@example.com', applicationId: 'nope' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('application_not_found');
    expect(await many(t.db.select().from(people))).toHaveLength(0);
  });

  it('refuses an open application that does not allow e-mail and password', async () => {
    const t = await makeApp();
    await openApp(t, { authPolicy: { signup_policy: 'open', allowed_providers: ['github'] } });
    const res = await signUp(t, { email: 'ada@example.com', applicationId: 'notes' });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('provider_not_allowed');
  });

  it('accepts a pending invitation whose e-mail matches, verifying the e-mail', async () => {
    const t = await makeApp();
    await createApplication(t);
    // Delivered by e-mail: accepting it proves the address (a link only shown to the admin would not).
    const token = (await insertInvitation(t, 'notes', 'bob@example.com', 'admin', { emailSent: true }));
    const wrong = await signUp(t, { email: 'eve@example.com', invitationToken: token });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().code).toBe('signup_not_allowed');
    const bogus = await signUp(t, { email: 'bob@example.com', invitationToken: 'not-a-token' });
    expect(bogus.statusCode).toBe(403);
    expect(bogus.json().code).toBe('signup_not_allowed');

    const res = await signUp(t, { email: 'bob@example.com', invitationToken: token });
    expect(res.statusCode).toBe(201);
    const { user } = res.json();
    expect(user.emailVerified).toBe(true);
    const membership = (await one(t.db.select().from(memberships).where(eq(memberships.personId, user.id))))!;
    expect(membership).toMatchObject({ applicationId: 'notes', role: 'admin', status: 'active' });
    expect(await one(t.db.select().from(invitations))).toMatchObject({ state: 'accepted', acceptedBy: user.id });

    const again = await signUp(t, { email: 'bob@example.com', invitationToken: token });
    expect(again.statusCode).toBe(403);
    expect(again.json().code).toBe('signup_not_allowed');
  });

  it('answers 409 email_in_use for an existing e-mail', async () => {
    const t = await makeApp();
    await openApp(t);
    expect((await signUp(t, { email: 'ada@example.com', applicationId: 'notes' })).statusCode).toBe(201);
    const res = await signUp(t, { email: 'ADA@example.com', applicationId: 'notes' });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('email_in_use');
  });

  it('rejects passwords shorter than 8 or longer than 256 characters', async () => {
    const t = await makeApp();
    await openApp(t);
    for (const password of ['short12', 'x'.repeat(257)]) {
      const res = await signUp(t, { email: 'ada@example.com', password, applicationId: 'notes' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: 'body.password' }] });
    }
    const badEmail = await signUp(t, { email: 'not-an-email', applicationId: 'notes' });
    expect(badEmail.statusCode).toBe(400);
    expect(badEmail.json().errors[0].path).toBe('body.email');
  });
});

describe('POST /api/auth/sign-in/email', () => {
  async function withPerson() {
    const t = await makeApp();
    await openApp(t, { webhookUrl: 'http://10.0.0.9:9/hook' });
    const res = await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: 'notes' });
    expect(res.statusCode).toBe(201);
    return { t, userId: res.json().user.id as string, cookie: sessionCookieOf(res) };
  }

  it('signs in, sets a new session cookie, and records membership activity', async () => {
    const { t, userId } = await withPerson();
    t.clock.advance(60_000);
    const res = await signIn(t, { email: 'ADA@example.com', applicationId: 'notes' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ user: expect.objectContaining({ id: userId, email: 'ada@example.com', name: 'Ada' }) });
    expect(sessionCookieOf(res)).toBeTruthy();
    expect(await many(t.db.select().from(sessions))).toHaveLength(2);
    const membership = (await one(t.db.select().from(memberships)))!;
    expect(membership.lastActiveAt.getTime()).toBe(t.clock.now().getTime());
    const types = (await many(t.db.select({ type: webhookDeliveries.type }).from(webhookDeliveries))).map((r) => r.type);
    expect(types).toContain('membership.signed_in');
  });

  it('signs a suspended member in without touching lastActiveAt or emitting membership.signed_in', async () => {
    const { t, userId } = await withPerson();
    const membership = (await one(t.db.select().from(memberships)))!;
    const suspended = await t.admin('PATCH', `/api/admin/applications/notes/users/${membership.id}`, { status: 'suspended' });
    expect(suspended.statusCode, suspended.body).toBe(200);
    const signedInEvents = async () => await many(t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.type, 'membership.signed_in')));
    const before = (await signedInEvents()).length;
    const lastActiveAt = (await one(t.db.select().from(memberships)))!.lastActiveAt;

    t.clock.advance(60_000);
    const res = await signIn(t, { email: 'ada@example.com', applicationId: 'notes' });
    expect(res.statusCode).toBe(200);
    expect(res.json().user.id).toBe(userId);
    expect(await one(t.db.select().from(memberships))).toMatchObject({ status: 'suspended', lastActiveAt });
    expect(await signedInEvents()).toHaveLength(before);

    // Active again: the next sign-in counts as activity once more.
    expect((await t.admin('PATCH', `/api/admin/applications/notes/users/${membership.id}`, { status: 'active' })).statusCode).toBe(200);
    t.clock.advance(60_000);
    expect((await signIn(t, { email: 'ada@example.com', applicationId: 'notes' })).statusCode).toBe(200);
    expect((await one(t.db.select().from(memberships)))!.lastActiveAt).toEqual(t.clock.now());
    expect(await signedInEvents()).toHaveLength(before + 1);
  });

  it('keeps the browser session when the same person signs in again', async () => {
    const { t, cookie } = await withPerson();
    const res = await signIn(t, { email: 'ada@example.com' }, { cookie: `gatehouse_session=${cookie}` });
    expect(res.statusCode).toBe(200);
    // No new session cookie; only a fresh device cookie.
    expect(res.cookies.map((c) => c.name)).toEqual(['gatehouse_device']);
    expect(await many(t.db.select().from(sessions))).toHaveLength(1);
  });

  it('answers wrong password and unknown e-mail the same way', async () => {
    const { t } = await withPerson();
    const wrong = await signIn(t, { email: 'ada@example.com', password: 'wrong password' });
    const unknown = await signIn(t, { email: 'nobody@example.com', password: 'wrong password' });
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json()).toEqual(unknown.json());
    expect(wrong.json().code).toBe('invalid_credentials');
    expect(wrong.headers['set-cookie']).toBeUndefined();
  });

  it('locks the account after 5 failures with Retry-After, without ending existing sessions', async () => {
    const { t, cookie, userId } = await withPerson();
    for (let i = 0; i < 5; i++) {
      const res = await signIn(t, { email: 'ada@example.com', password: `wrong password ${i}` });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('invalid_credentials');
    }
    const locked = await signIn(t, { email: 'ada@example.com' });
    expect(locked.statusCode).toBe(429);
    expect(locked.headers['retry-after']).toBe('30');
    expect(locked.json().code).toBe('rate_limited');
    expect((await readSession(t.app.ctx, fakeRequest(cookie)))?.person.id).toBe(userId);
    const audit = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'security.sign_in_locked')));
    expect(audit).toHaveLength(1);
    expect(audit[0]!.target).toBe(userId);

    // The next failure after the lock runs out locks for twice as long.
    t.clock.advance(31_000);
    expect((await signIn(t, { email: 'ada@example.com', password: 'wrong again' })).statusCode).toBe(401);
    const longer = await signIn(t, { email: 'ada@example.com' });
    expect(longer.statusCode).toBe(429);
    expect(longer.headers['retry-after']).toBe('60');

    t.clock.advance(61_000);
    expect((await signIn(t, { email: 'ada@example.com' })).statusCode).toBe(200);
    expect(await many(t.db.select().from(signInBackOff))).toEqual([]);
  });

  it('keeps the lock in the database: failures on one instance lock the address on another (issue 26)', async () => {
    const { t, userId } = await withPerson();
    const other = await makeInstance(t);
    for (let i = 0; i < 5; i++) expect((await signIn(t, { email: 'ada@example.com', password: `wrong password ${i}` })).statusCode).toBe(401);
    const locked = await signIn(other, { email: 'ada@example.com' });
    expect(locked.statusCode).toBe(429);
    expect(locked.headers['retry-after']).toBe('30');
    expect(locked.json().code).toBe('rate_limited');

    // The count goes on across them: the next failure, on the other one, locks for twice as long on both.
    t.clock.advance(31_000);
    expect((await signIn(other, { email: 'ada@example.com', password: 'wrong again' })).statusCode).toBe(401);
    expect((await signIn(t, { email: 'ada@example.com' })).headers['retry-after']).toBe('60');
    const audit = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'security.sign_in_locked')));
    expect(audit.map((a) => [a.target, a.details])).toEqual([
      [userId, { failedSignIns: 5, lockedUntil: new Date(t.clock.now().getTime() - 31_000 + 30_000).toISOString() }],
      [userId, { failedSignIns: 6, lockedUntil: new Date(t.clock.now().getTime() + 60_000).toISOString() }],
    ]);

    // A right password on either clears the count for both.
    t.clock.advance(61_000);
    expect((await signIn(other, { email: 'ada@example.com' })).statusCode).toBe(200);
    expect(await many(t.db.select().from(signInBackOff))).toEqual([]);
    expect((await signIn(t, { email: 'ada@example.com', password: 'wrong once more' })).statusCode).toBe(401);
    expect((await signIn(t, { email: 'ada@example.com' })).statusCode).toBe(200);
  });

  it('counts guesses sent at once to two instances exactly: five are checked, the rest refused', async () => {
    const { t } = await withPerson();
    const other = await makeInstance(t);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => signIn(i % 2 ? other : t, { email: 'ada@example.com', password: `guess ${i}` })),
    );
    expect(answers.map((r) => r.statusCode).sort()).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    expect(await many(t.db.select({ failures: signInBackOff.failures }).from(signInBackOff))).toEqual([{ failures: 5 }]);
  });

  it('rate-limits sign-in per IP with 429 and Retry-After', async () => {
    const t = await makeApp();
    for (let i = 0; i < 30; i++) {
      const res = await postJson(t, '/api/auth/sign-in/email', {});
      expect(res.statusCode).toBe(400);
    }
    const res = await postJson(t, '/api/auth/sign-in/email', {});
    expect(res.statusCode).toBe(429);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.json().code).toBe('rate_limited');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('rate-limits sign-up per IP', async () => {
    const t = await makeApp();
    for (let i = 0; i < 10; i++) expect((await postJson(t, '/api/auth/sign-up/email', {})).statusCode).toBe(400);
    const res = await postJson(t, '/api/auth/sign-up/email', {});
    expect(res.statusCode).toBe(429);
    expect(res.json().code).toBe('rate_limited');
  });
});

describe('JSON CSRF rule', () => {
  it('refuses a foreign Origin and a non-JSON content type with 403 csrf_failed', async () => {
    const t = await makeApp();
    await openApp(t);
    const foreign = await signUp(t, { email: 'ada@example.com', applicationId: 'notes' }, { origin: 'https://evil.example' });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().code).toBe('csrf_failed');
    const form = await t.app.inject({
      method: 'POST',
      url: '/api/auth/sign-in/email',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `email=ada%40example.com&password=${encodeURIComponent(PASSWORD)}`,
    });
    expect(form.statusCode).toBe(403);
    expect(form.json().code).toBe('csrf_failed');
    const signOut = await t.app.inject({ method: 'POST', url: '/api/auth/sign-out', headers: { 'content-type': 'text/plain' }, payload: '' });
    expect(signOut.statusCode).toBe(403);
    expect(signOut.json().code).toBe('csrf_failed');
    const same = await signUp(t, { email: 'ada@example.com', applicationId: 'notes' }, { origin: 'http://127.0.0.1:8787' });
    expect(same.statusCode).toBe(201);
  });
});

describe('POST /api/auth/sign-out', () => {
  it('ends the session, revokes its refresh families and clears the cookie', async () => {
    const t = await makeApp();
    await openApp(t);
    const res = await signUp(t, { email: 'ada@example.com', applicationId: 'notes' });
    const cookie = sessionCookieOf(res);
    const session = (await readSession(t.app.ctx, fakeRequest(cookie)))!.session;
    const now = t.clock.now();
    await exec(t.db.insert(refreshTokenFamilies)
      .values({
        id: newId('fam'), applicationId: 'notes', personId: session.personId, sessionId: session.id,
        scope: 'openid offline_access', resource: 'https://notes.example.com/api', authTime: now, createdAt: now,
        expiresAt: new Date(now.getTime() + 3600_000),
      }));

    const out = await postJson(t, '/api/auth/sign-out', undefined, { cookie: `gatehouse_session=${cookie}` });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^gatehouse_session=; Max-Age=0; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax$/);
    expect(await readSession(t.app.ctx, fakeRequest(cookie))).toBeUndefined();
    expect(await one(t.db.select().from(refreshTokenFamilies))).toMatchObject({ revokedReason: 'session_ended' });

    const again = await postJson(t, '/api/auth/sign-out', {}, { cookie: `gatehouse_session=${cookie}` });
    expect(again.statusCode).toBe(204);
  });
});
