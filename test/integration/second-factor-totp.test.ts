/**
 * TOTP and recovery codes over the JSON API (spec second-factor.md), on `buildApp` with a fixed
 * clock; every code is computed by otpauth in the test, as an authenticator app would:
 * enrolment with a QR-able URI, a secret stored encrypted, the password step answering
 * `secondFactor` with a short-lived `gatehouse_mfa` cookie and no session, right / wrong / replayed
 * codes, the ±1-step clock window, the lock-out after 5 wrong codes with `Retry-After`, and
 * recovery codes that work once.
 */
import { describe, expect, it } from 'vitest';
import { Secret, TOTP } from 'otpauth';
import { eq } from 'drizzle-orm';
import { makeApp, type TestApp } from '../helpers/app.js';
import { PASSWORD, cookieValue, createApplication, postJson } from '../helpers/accounts.js';
import { me, signedUpCookie } from '../helpers/self-service.js';
import { expectProblem } from '../helpers/problem.js';
import { auditLog, secondFactorBackOff, totpCredentials } from '../../server/db/schema.js';
import { sweep } from '../../server/data-lifecycle/sweeper.js';
import { fixedClock } from '../../server/util/clock.js';

const START = new Date('2026-03-02T10:00:05Z');

function codeAt(secret: string, at: Date): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at.getTime() });
}

async function enrolled(t: TestApp) {
  await createApplication(t, { authPolicy: { signup_policy: 'open' } });
  const cookie = await signedUpCookie(t, 'ada@example.com', 'notes');
  const started = await me(t, 'POST', '/api/me/totp', cookie);
  expect(started.statusCode).toBe(200);
  const { secret, uri } = started.json() as { secret: string; uri: string };
  return { cookie, secret, uri };
}

/** A password sign-in that stops at the second step; returns the `gatehouse_mfa` cookie header. */
async function passwordStep(t: TestApp, headers: Record<string, string> = {}) {
  const res = await postJson(t, '/api/auth/sign-in/email', { email: 'ada@example.com', password: PASSWORD }, headers);
  expect(res.statusCode, res.body).toBe(200);
  return { res, cookie: `gatehouse_mfa=${cookieValue(res, 'gatehouse_mfa')}` };
}

const totpStep = (t: TestApp, cookie: string, code: string) => postJson(t, '/api/auth/second-factor/totp', { code }, { cookie });

describe('TOTP enrolment', () => {
  it('starts with a secret and an otpauth URI, confirms with a code, and returns recovery codes once', async () => {
    const t = await makeApp({ clock: START });
    const { cookie, secret, uri } = await enrolled(t);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/); // 160 bits of base32
    const parsed = new URL(uri);
    expect(parsed.protocol).toBe('otpauth:');
    expect(parsed.host).toBe('totp');
    expect(decodeURIComponent(parsed.pathname)).toBe('/Gatehouse:ada@example.com');
    expect(Object.fromEntries(parsed.searchParams)).toEqual({ issuer: 'Gatehouse', secret, algorithm: 'SHA1', digits: '6', period: '30' });

    // Stored encrypted (the key lives in a file, not the database), and not confirmed yet.
    const row = t.db.select().from(totpCredentials).get()!;
    expect(row.secret).toBeNull();
    expect(row.pendingSecret).toMatch(/^v1\./);
    expect(row.pendingSecret).not.toContain(secret);
    expect((await me(t, 'GET', '/api/me/security', cookie)).json()).toEqual({
      totp: { enabled: false, confirmedAt: null }, passkeys: [], recoveryCodes: { remaining: 0 },
    });

    expectProblem(await me(t, 'POST', '/api/me/totp/confirm', cookie, { code: '000000' === codeAt(secret, START) ? '111111' : '000000' }), 400, 'invalid_code');
    const confirmed = await me(t, 'POST', '/api/me/totp/confirm', cookie, { code: codeAt(secret, START) });
    expect(confirmed.statusCode).toBe(200);
    const codes = (confirmed.json() as { recoveryCodes: string[] }).recoveryCodes;
    expect(codes).toHaveLength(10);
    for (const code of codes) expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}$/);
    expect(new Set(codes).size).toBe(10);
    expect((await me(t, 'GET', '/api/me/security', cookie)).json()).toEqual({
      totp: { enabled: true, confirmedAt: START.toISOString() }, passkeys: [], recoveryCodes: { remaining: 10 },
    });
    // Audited, without the secret or codes.
    const entries = t.db.select().from(auditLog).where(eq(auditLog.action, 'second_factor.enrolled')).all();
    expect(entries.map((e) => e.details)).toEqual([{ method: 'totp' }]);
    expect(JSON.stringify(t.db.select().from(auditLog).all())).not.toContain(secret);

    // The code that confirmed it was spent: it does not sign in a second time in its step.
    const { cookie: mfa } = await passwordStep(t);
    expectProblem(await totpStep(t, mfa, codeAt(secret, START)), 401, 'invalid_code');
  });
});

describe('adding a factor', () => {
  it('needs a recent sign-in: a session cookie alone cannot add one the owner does not have', async () => {
    const t = await makeApp({ clock: START });
    await createApplication(t, { authPolicy: { signup_policy: 'open' } });
    const cookie = await signedUpCookie(t, 'ada@example.com', 'notes');
    t.clock.advance(11 * 60_000);
    expectProblem(await me(t, 'POST', '/api/me/totp', cookie), 403, 'reauthentication_required');
    expectProblem(await me(t, 'POST', '/api/me/passkeys/options', cookie), 403, 'reauthentication_required');
    expectProblem(await me(t, 'POST', '/api/me/totp/confirm', cookie, { code: '123456' }), 409, 'totp_not_started');
    expect(t.db.select().from(totpCredentials).all()).toEqual([]);
  });
});

describe('sign-in with TOTP', () => {
  async function ready() {
    const t = await makeApp({ clock: START });
    const { cookie, secret } = await enrolled(t);
    await me(t, 'POST', '/api/me/totp/confirm', cookie, { code: codeAt(secret, START) });
    t.clock.advance(30_000); // the next step: its code is fresh
    return { t, secret };
  }

  it('answers the password with secondFactor, a short-lived cookie and no session; the right code signs in', async () => {
    const { t, secret } = await ready();
    const { res, cookie } = await passwordStep(t);
    expect(res.json()).toEqual({ secondFactor: { methods: ['totp', 'recovery_code'] } });
    expect(cookieValue(res, 'gatehouse_session')).toBeUndefined();
    const mfaCookie = res.cookies.find((c) => c.name === 'gatehouse_mfa')!;
    expect(mfaCookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/', maxAge: 300 });
    expect(res.headers['cache-control']).toBe('no-store');

    expectProblem(await totpStep(t, 'gatehouse_mfa=nope', codeAt(secret, t.clock.now())), 401, 'second_factor_expired');
    expectProblem(await postJson(t, '/api/auth/second-factor/totp', { code: '123456' }), 401, 'second_factor_expired');
    // Bound to the device: another User-Agent with the same cookie is refused.
    expectProblem(await postJson(t, '/api/auth/second-factor/totp', { code: codeAt(secret, t.clock.now()) }, { cookie, 'user-agent': 'other' }), 401, 'second_factor_expired');

    const ok = await totpStep(t, cookie, codeAt(secret, t.clock.now()));
    expect(ok.statusCode).toBe(200);
    expect(ok.json().user).toMatchObject({ email: 'ada@example.com' });
    expect(cookieValue(ok, 'gatehouse_session')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The pending sign-in is over.
    expectProblem(await totpStep(t, cookie, codeAt(secret, t.clock.now())), 401, 'second_factor_expired');
    // It expires after 5 minutes.
    const late = await passwordStep(t);
    t.clock.advance(5 * 60_000 + 1);
    expectProblem(await totpStep(t, late.cookie, codeAt(secret, t.clock.now())), 401, 'second_factor_expired');
  });

  it('refuses a wrong code and a replayed one; accepts one step either side of now and no further', async () => {
    const { t, secret } = await ready();
    const base = t.clock.now();
    const first = await passwordStep(t);
    const wrong = codeAt(secret, new Date(base.getTime() + 10 * 60_000));
    expectProblem(await totpStep(t, first.cookie, wrong), 401, 'invalid_code');
    expect((await totpStep(t, first.cookie, codeAt(secret, base))).statusCode).toBe(200);

    // The same code again, still in its step: replay.
    const again = await passwordStep(t);
    expectProblem(await totpStep(t, again.cookie, codeAt(secret, base)), 401, 'invalid_code');

    // Three steps later: the previous step's code is accepted (clock drift), two steps away is not.
    t.clock.advance(90_000);
    const now = t.clock.now().getTime();
    expectProblem(await totpStep(t, again.cookie, codeAt(secret, new Date(now - 60_000))), 401, 'invalid_code');
    expectProblem(await totpStep(t, again.cookie, codeAt(secret, new Date(now + 60_000))), 401, 'invalid_code');
    expect((await totpStep(t, again.cookie, codeAt(secret, new Date(now - 30_000)))).statusCode).toBe(200);
    // An older step than one already used is refused too.
    const older = await passwordStep(t);
    expectProblem(await totpStep(t, older.cookie, codeAt(secret, new Date(now - 30_000))), 401, 'invalid_code');
    expect((await totpStep(t, older.cookie, codeAt(secret, new Date(now)))).statusCode).toBe(200);
  });

  it('locks out after 5 wrong codes with Retry-After: the pending sign-in is void and the person waits', async () => {
    const { t, secret } = await ready();
    const right = () => codeAt(secret, t.clock.now());
    const bad = codeAt(secret, new Date(t.clock.now().getTime() + 3_600_000));
    const { cookie } = await passwordStep(t);
    for (let i = 1; i <= 4; i++) expectProblem(await totpStep(t, cookie, bad), 401, 'invalid_code');
    const fifth = await totpStep(t, cookie, bad);
    expectProblem(fifth, 429, 'rate_limited');
    expect(fifth.headers['retry-after']).toBe('30');
    // Void: even the right code is refused now.
    const sixth = await totpStep(t, cookie, right());
    expectProblem(sixth, 429, 'rate_limited');
    expect(Number(sixth.headers['retry-after'])).toBe(30);
    // A new pending sign-in for the same person waits out the lock too.
    const next = await passwordStep(t);
    const locked = await totpStep(t, next.cookie, right());
    expectProblem(locked, 429, 'rate_limited');
    t.clock.advance(31_000);
    expect((await totpStep(t, next.cookie, right())).statusCode).toBe(200);
    const audits = t.db.select().from(auditLog).all().map((e) => JSON.stringify(e.details));
    expect(audits.join()).not.toContain(bad);
    // The success cleared the person's count; a count left alone is swept after a day.
    expect(t.db.select().from(secondFactorBackOff).all()).toEqual([]);
    const again = await passwordStep(t);
    expectProblem(await totpStep(t, again.cookie, bad), 401, 'invalid_code');
    expect(t.db.select().from(secondFactorBackOff).all()).toHaveLength(1);
    expect((await sweep(t.db, t.config, t.clock)).pruned['second-factor back-off (idle)']).toBeUndefined();
    const dayLater = fixedClock(new Date(t.clock.now().getTime() + 24 * 3600_000 + 1));
    expect((await sweep(t.db, t.config, dayLater)).pruned['second-factor back-off (idle)']).toBe(1);
    expect(t.db.select().from(secondFactorBackOff).all()).toEqual([]);
  });
});

describe('recovery codes', () => {
  it('sign in once each, then are used up; a new set replaces the old one', async () => {
    const t = await makeApp({ clock: START });
    const { cookie, secret } = await enrolled(t);
    const codes = (await me(t, 'POST', '/api/me/totp/confirm', cookie, { code: codeAt(secret, START) })).json().recoveryCodes as string[];

    const first = await passwordStep(t);
    // Typed loosely: upper case, no dashes.
    const used = await postJson(t, '/api/auth/second-factor/recovery-code', { code: codes[0]!.replaceAll('-', '').toUpperCase() }, { cookie: first.cookie });
    expect(used.statusCode).toBe(200);
    expect(used.json().user.email).toBe('ada@example.com');
    const session = `gatehouse_session=${cookieValue(used, 'gatehouse_session')}`;
    expect((await me(t, 'GET', '/api/me/security', session)).json().recoveryCodes).toEqual({ remaining: 9 });

    const second = await passwordStep(t);
    expect(second.res.json()).toEqual({ secondFactor: { methods: ['totp', 'recovery_code'] } });
    expectProblem(await postJson(t, '/api/auth/second-factor/recovery-code', { code: codes[0]! }, { cookie: second.cookie }), 401, 'invalid_code');
    expectProblem(await postJson(t, '/api/auth/second-factor/recovery-code', { code: 'not-a-code' }, { cookie: second.cookie }), 401, 'invalid_code');

    // Regenerating needs a recent sign-in (this session's is fresh) and replaces the set.
    const fresh = await me(t, 'POST', '/api/me/recovery-codes', session);
    expect(fresh.statusCode).toBe(200);
    const replaced = fresh.json().recoveryCodes as string[];
    expect(replaced).toHaveLength(10);
    expectProblem(await postJson(t, '/api/auth/second-factor/recovery-code', { code: codes[1]! }, { cookie: second.cookie }), 401, 'invalid_code');
    expect((await postJson(t, '/api/auth/second-factor/recovery-code', { code: replaced[0]! }, { cookie: second.cookie })).statusCode).toBe(200);

    t.clock.advance(11 * 60_000);
    expectProblem(await me(t, 'POST', '/api/me/recovery-codes', session), 403, 'reauthentication_required');
  });
});
