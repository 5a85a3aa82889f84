/**
 * The administrator's view and reset of a member's second factors, and the self-service rules
 * around removing one (spec second-factor.md, "Admin", "Self-service"): the summary on a member
 * (counts and dates, never secrets), `DELETE …/users/:uid/second-factor` (admin token only,
 * audited, every session of the person ended, a `second_factor.removed` webhook), removal needing
 * a recent sign-in, the last factor kept while an application requires MFA, and other sessions
 * ending when a factor goes. Webhook events are read from the outbox they are written to.
 */
import { describe, expect, it } from 'vitest';
import { Secret, TOTP } from 'otpauth';
import { and, eq } from 'drizzle-orm';
import { makeApp, type TestApp } from '../helpers/app.js';
import { PASSWORD, cookieValue, createApplication, postJson } from '../helpers/accounts.js';
import { me, secondDeviceCookie, signedUpCookie } from '../helpers/self-service.js';
import { expectProblem } from '../helpers/problem.js';
import { auditLog, totpCredentials, webhookDeliveries } from '../../server/db/schema.js';
import { engineOf, one, many } from '../../server/db/store.js';
import { queryPlan, usesPostgresIndex } from '../helpers/query-plan.js';

const START = new Date('2026-04-01T08:00:05Z');
const code = (secret: string, at: Date) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at.getTime() });

async function withTotp(t: TestApp, policy: Record<string, unknown> = {}) {
  await createApplication(t, { authPolicy: { signup_policy: 'open', ...policy }, webhookUrl: 'http://192.168.1.20:9/hook' /* never called: no delivery worker in these tests */ });
  const cookie = await signedUpCookie(t, 'ada@example.com', 'notes');
  // Another device signed in before the factor existed (an MFA-required application allows none).
  const phone = policy.mfa === 'required' ? '' : await secondDeviceCookie(t, 'ada@example.com', 'notes', 'Phone');
  const { secret } = (await me(t, 'POST', '/api/me/totp', cookie)).json() as { secret: string };
  expect((await me(t, 'POST', '/api/me/totp/confirm', cookie, { code: code(secret, t.clock.now()) })).statusCode).toBe(200);
  const member = (await t.admin('GET', '/api/admin/applications/notes/users')).json().users[0] as { id: string; userId: string };
  return { cookie, phone, secret, member };
}

const events = async (t: TestApp, type: string) =>
  (await many(t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.type, type)))).map((d) => JSON.parse(d.payload) as { data: unknown; applicationId: string });

describe('admin: a member\'s second factors', () => {
  it('shows a summary of counts and dates, never a secret', async () => {
    const t = await makeApp({ clock: START });
    const { member, secret } = await withTotp(t);
    const res = await t.admin('GET', `/api/admin/applications/notes/users/${member.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().secondFactor).toEqual({
      totp: { enabled: true, confirmedAt: START.toISOString() },
      passkeys: { count: 0, lastUsedAt: null },
      recoveryCodes: { remaining: 10, createdAt: START.toISOString() },
    });
    expect(res.body).not.toContain(secret);
    // The enrolment told the application.
    expect((await events(t, 'second_factor.enrolled')).map((e) => e.data)).toEqual([{ userId: member.userId, email: 'ada@example.com', method: 'totp' }]);
  });

  it('the member list says who has no second factor yet (an application that requires one makes them enrol at their next sign-in)', async () => {
    const t = await makeApp({ clock: START });
    await withTotp(t, { mfa: 'optional' });
    await signedUpCookie(t, 'bob@example.com', 'notes');
    const list = (await t.admin('GET', '/api/admin/applications/notes/users')).json().users as { email: string; hasSecondFactor: boolean }[];
    expect(list.map((u) => [u.email, u.hasSecondFactor])).toEqual([['ada@example.com', true], ['bob@example.com', false]]);
    // One member read alone has the summary instead.
    expect(Object.keys((await t.admin('GET', `/api/admin/applications/notes/users/${(list[0] as unknown as { id: string }).id}`)).json())).not.toContain('hasSecondFactor');
    // Two index lookups per page, whatever the number of people.
    const ids = ['usr_a', 'usr_b'];
    const totpPlan = await queryPlan(t.db, 'SELECT person_id FROM totp_credentials WHERE person_id IN (?, ?) AND secret IS NOT NULL', ...ids);
    const keysPlan = await queryPlan(t.db, 'SELECT DISTINCT person_id FROM passkeys WHERE person_id IN (?, ?)', ...ids);
    if (engineOf(t.db) === 'sqlite') {
      expect(totpPlan).toMatch(/^SEARCH totp_credentials USING INDEX sqlite_autoindex_totp_credentials_1 \(person_id=\?\)/);
      expect(keysPlan).toMatch(/^SEARCH passkeys USING COVERING INDEX passkeys_person_idx \(person_id=\?\)/);
    } else {
      expect(usesPostgresIndex(totpPlan, 'totp_credentials_pkey'), totpPlan).toBe(true);
      expect(usesPostgresIndex(keysPlan, 'passkeys_person_idx'), keysPlan).toBe(true);
    }
  });

  it('resets them for a lost device: 204, every session ended, audited, and the application told', async () => {
    const t = await makeApp({ clock: START });
    const { cookie, phone, member } = await withTotp(t);
    const key = await t.admin('POST', '/api/admin/applications/notes/api-keys', { name: 'ops', scopes: ['users:read', 'users:write'] });
    const byKey = await t.admin('DELETE', `/api/admin/applications/notes/users/${member.id}/second-factor`, undefined, { authorization: `Bearer ${key.json().key}` });
    expectProblem(byKey, 403, 'insufficient_scope');
    expectProblem(await t.admin('DELETE', '/api/admin/applications/notes/users/mem_nope/second-factor'), 404, 'user_not_found');

    const reset = await t.admin('DELETE', `/api/admin/applications/notes/users/${member.id}/second-factor`);
    expect(reset.statusCode).toBe(204);
    expect(await many(t.db.select().from(totpCredentials))).toEqual([]);
    for (const c of [cookie, phone]) expectProblem(await me(t, 'GET', '/api/me/security', c), 401, 'unauthorized');
    const audit = (await one(t.db.select().from(auditLog).where(eq(auditLog.action, 'second_factor.reset'))))!;
    expect(audit).toMatchObject({ actor: 'admin', applicationId: 'notes', target: member.userId });
    expect(audit.details).toEqual({ totp: true, passkeys: 0, recoveryCodes: 10, sessionsEnded: 2 });
    expect((await events(t, 'second_factor.removed')).map((e) => e.data)).toEqual([{ userId: member.userId, email: 'ada@example.com', method: 'all' }]);
    expect((await t.admin('GET', `/api/admin/applications/notes/users/${member.id}`)).json().secondFactor).toEqual({
      totp: { enabled: false, confirmedAt: null }, passkeys: { count: 0, lastUsedAt: null }, recoveryCodes: { remaining: 0, createdAt: null },
    });
    // She signs in with her password alone again.
    const again = await postJson(t, '/api/auth/sign-in/email', { email: 'ada@example.com', password: PASSWORD });
    expect(again.json()).toMatchObject({ user: { email: 'ada@example.com' } });
  });
});

describe('self-service: removing a factor', () => {
  it('needs a recent sign-in, ends the other sessions, and is audited', async () => {
    const t = await makeApp({ clock: START });
    const { cookie, phone } = await withTotp(t);
    t.clock.advance(11 * 60_000);
    expectProblem(await me(t, 'DELETE', '/api/me/totp', cookie), 403, 'reauthentication_required');
    // A fresh sign-in on this device (both steps) makes it recent.
    const first = await postJson(t, '/api/auth/sign-in/email', { email: 'ada@example.com', password: PASSWORD }, { cookie });
    const mfa = `gatehouse_mfa=${cookieValue(first, 'gatehouse_mfa')}`;
    const secret = (await import('../../server/accounts/second-factor/secret-box.js')).secretBox(t).decrypt((await one(t.db.select().from(totpCredentials)))!.secret!);
    const done = await postJson(t, '/api/auth/second-factor/totp', { code: code(secret, t.clock.now()) }, { cookie: `${cookie}; ${mfa}` });
    expect(done.statusCode).toBe(200);
    expect(cookieValue(done, 'gatehouse_session')).toBeUndefined(); // the same session was kept

    expect((await me(t, 'DELETE', '/api/me/totp', cookie)).statusCode).toBe(204);
    expectProblem(await me(t, 'GET', '/api/me/security', phone), 401, 'unauthorized');
    expect((await me(t, 'GET', '/api/me/security', cookie)).json()).toEqual({ totp: { enabled: false, confirmedAt: null }, passkeys: [], recoveryCodes: { remaining: 0 } });
    const removed = (await one(t.db.select().from(auditLog).where(and(eq(auditLog.action, 'second_factor.removed')))))!;
    expect(removed.details).toEqual({ method: 'totp', sessionsEnded: 1 });
    expectProblem(await me(t, 'DELETE', '/api/me/passkeys/pky_nope', cookie), 404, 'passkey_not_found');
    expectProblem(await me(t, 'PATCH', '/api/me/passkeys/pky_nope', cookie, { name: 'x' }), 404, 'passkey_not_found');
  });

  it('keeps the last factor while an application the person belongs to requires one', async () => {
    const t = await makeApp({ clock: START });
    const { cookie } = await withTotp(t, { mfa: 'required' });
    const res = expectProblem(await me(t, 'DELETE', '/api/me/totp', cookie), 409, 'second_factor_required');
    expect(res.detail).toBe('Notes requires a second factor: add another one before removing this one.');
    expect((await me(t, 'GET', '/api/me/security', cookie)).json().totp.enabled).toBe(true);
  });
});
