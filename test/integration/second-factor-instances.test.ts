/**
 * The second step behind a load balancer without sticky sessions (issue 26): two instances on one
 * database (`makeInstance`), on SQLite and, in the `unit-postgres` project, on PostgreSQL. A
 * password checked by one instance is finished with a TOTP code by the other; passkey challenges
 * (registration, passkey-first sign-in, the second step) issued by one are answered on the other,
 * with the software authenticator the benchmarks use (test/helpers/soft-authenticator.ts); wrong codes count across
 * both; and a pending step or challenge spent on one cannot be spent again on the other, even when
 * both answer at the same moment.
 */
import { describe, expect, it } from 'vitest';
import { Secret, TOTP } from 'otpauth';
import { eq } from 'drizzle-orm';
import { makeApp, makeInstance, type TestApp } from '../helpers/app.js';
import { PASSWORD, cookieValue, createApplication, postJson, sessionCookieOf } from '../helpers/accounts.js';
import { me, signedUpCookie } from '../helpers/self-service.js';
import { expectProblem } from '../helpers/problem.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { pendingSignIns, people, sessions, webauthnChallenges } from '../../server/db/schema.js';
import { sweep } from '../../server/data-lifecycle/sweeper.js';
import { many, one } from '../../server/db/store.js';
import { sha256 } from '../../server/util/crypto.js';

const START = new Date('2026-03-02T10:00:05Z');
const ISSUER = 'http://localhost:8787';
/** Ada's passkey, answering as a platform authenticator on the issuer's origin would. */
const passkey = () => new SoftAuthenticator(ISSUER, 'localhost');

const codeAt = (secret: string, at: Date) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at.getTime() });

/** Two instances on one database; Ada signed up on the first. */
async function pair() {
  const one = await makeApp({ clock: START, config: { issuer: ISSUER } });
  const two = await makeInstance(one);
  await createApplication(one, { authPolicy: { signup_policy: 'open' } });
  const cookie = await signedUpCookie(one, 'ada@example.com', 'notes');
  return { one, two, cookie };
}

/** Ada with TOTP set up (on the first instance); her secret and recovery codes. */
async function withTotp(t: TestApp, cookie: string) {
  const { secret } = (await me(t, 'POST', '/api/me/totp', cookie)).json() as { secret: string };
  const confirmed = await me(t, 'POST', '/api/me/totp/confirm', cookie, { code: codeAt(secret, t.clock.now()) });
  expect(confirmed.statusCode, confirmed.body).toBe(200);
  return { secret, recoveryCodes: confirmed.json().recoveryCodes as string[] };
}

async function passwordStep(t: TestApp) {
  const res = await postJson(t, '/api/auth/sign-in/email', { email: 'ada@example.com', password: PASSWORD });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toMatchObject({ secondFactor: { methods: expect.any(Array) } });
  return `gatehouse_mfa=${cookieValue(res, 'gatehouse_mfa')}`;
}

const sessionsOfAda = async (t: TestApp) => {
  const ada = (await one(t.db.select().from(people).where(eq(people.email, 'ada@example.com'))))!;
  return (await many(t.db.select().from(sessions).where(eq(sessions.personId, ada.id)))).length;
};

describe('the second step on another instance', () => {
  it('finishes a password from instance 1 with a TOTP code on instance 2, once; the pending step is stored hashed', async () => {
    const { one: a, two: b, cookie } = await pair();
    const { secret } = await withTotp(a, cookie);
    a.clock.advance(30_000); // past the step the set-up used (a used step is refused)
    const mfa = await passwordStep(a);
    const token = mfa.slice('gatehouse_mfa='.length);
    // Only the SHA-256 of the cookie's token is stored, with what finishing needs (no callback).
    const [row] = await many(a.db.select().from(pendingSignIns));
    expect(row).toMatchObject({ tokenHash: sha256(token), next: '/account', finishLink: false, failures: 0, challengeHash: null, firstFactor: ['pwd'] });
    expect(JSON.stringify(row)).not.toContain(token);
    const before = await sessionsOfAda(a);

    const done = await postJson(b, '/api/auth/second-factor/totp', { code: codeAt(secret, b.clock.now()) }, { cookie: mfa });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ user: { email: 'ada@example.com' } });
    expect(sessionCookieOf(done)).toMatch(/.+/);
    expect(await sessionsOfAda(a)).toBe(before + 1);
    expect(await many(a.db.select().from(pendingSignIns))).toEqual([]);

    // Spent on instance 2: instance 1 no longer knows it, with any factor.
    b.clock.advance(30_000);
    expectProblem(await postJson(a, '/api/auth/second-factor/totp', { code: codeAt(secret, a.clock.now()) }, { cookie: mfa }), 401, 'second_factor_expired');
    expect(await sessionsOfAda(a)).toBe(before + 1);
  });

  it('counts wrong codes across instances: the 5th, wherever it lands, voids the pending sign-in', async () => {
    const { one: a, two: b, cookie } = await pair();
    const { secret } = await withTotp(a, cookie);
    const mfa = await passwordStep(a);
    const bad = codeAt(secret, new Date(a.clock.now().getTime() + 3_600_000));
    for (const t of [a, b, a, b]) expectProblem(await postJson(t, '/api/auth/second-factor/totp', { code: bad }, { cookie: mfa }), 401, 'invalid_code');
    expect((await one(a.db.select().from(pendingSignIns)))!.failures).toBe(4);
    const fifth = await postJson(a, '/api/auth/second-factor/totp', { code: bad }, { cookie: mfa });
    expectProblem(fifth, 429, 'rate_limited');
    expectProblem(await postJson(b, '/api/auth/second-factor/totp', { code: codeAt(secret, b.clock.now()) }, { cookie: mfa }), 429, 'rate_limited');
  });

  it('lets exactly one of two instances finish the same pending step when both answer at once', async () => {
    const { one: a, two: b, cookie } = await pair();
    const { secret, recoveryCodes } = await withTotp(a, cookie);
    for (let round = 0; round < 3; round++) {
      a.clock.advance(30_000); // a fresh TOTP step each round (a used step is refused)
      const mfa = await passwordStep(a);
      const before = await sessionsOfAda(a);
      const answers = await Promise.all([
        postJson(a, '/api/auth/second-factor/totp', { code: codeAt(secret, a.clock.now()) }, { cookie: mfa }),
        postJson(b, '/api/auth/second-factor/recovery-code', { code: recoveryCodes[round]! }, { cookie: mfa }),
      ]);
      const statuses = answers.map((r) => r.statusCode).sort();
      expect(statuses, answers.map((r) => r.body).join('\n')).toEqual([200, 401]);
      expectProblem(answers.find((r) => r.statusCode === 401)!, 401, 'second_factor_expired');
      expect(await sessionsOfAda(a)).toBe(before + 1);
    }
  });

  it('answers passkey challenges on the other instance: registration, passkey-first sign-in and the second step, each once', async () => {
    const { one: a, two: b, cookie } = await pair();
    const authenticator = passkey();

    // Registration: options from instance 1, the answer to instance 2 (same session).
    const creation = await me(a, 'POST', '/api/me/passkeys/options', cookie);
    expect(creation.statusCode, creation.body).toBe(200);
    const created = creation.json() as { challenge: string; user: { id: string } };
    const stored = (await one(a.db.select().from(webauthnChallenges)))!;
    expect(stored.challengeHash).toBe(sha256(created.challenge));
    expect(JSON.stringify(stored)).not.toContain(created.challenge);
    const registration = authenticator.register(created);
    const registered = await me(b, 'POST', '/api/me/passkeys', cookie, { name: 'Laptop', response: registration });
    expect(registered.statusCode, registered.body).toBe(201);
    expect(registered.json()).toMatchObject({ name: 'Laptop' });
    // The challenge was spent on instance 2.
    expectProblem(await me(a, 'POST', '/api/me/passkeys', cookie, { name: 'Again', response: registration }), 400, 'passkey_invalid');

    // Passkey-first sign-in: options from instance 1, the assertion to instance 2, and not again on 1.
    const request = (await postJson(a, '/api/auth/passkey/options', {})).json() as { challenge: string };
    const assertion = authenticator.assert(request.challenge, created.user.id);
    const first = await postJson(b, '/api/auth/passkey', { response: assertion });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ user: { email: 'ada@example.com' } });
    expectProblem(await postJson(a, '/api/auth/passkey', { response: assertion }), 400, 'passkey_invalid');

    // The second step after a password: password and options on instance 1, the passkey on 2.
    const mfa = await passwordStep(a);
    const stepOptions = await postJson(a, '/api/auth/second-factor/passkey/options', {}, { cookie: mfa });
    expect(stepOptions.statusCode, stepOptions.body).toBe(200);
    const stepAssertion = authenticator.assert(stepOptions.json().challenge, created.user.id);
    expect((await one(a.db.select().from(pendingSignIns)))!.challengeHash).toBe(sha256(stepOptions.json().challenge));
    const step = await postJson(b, '/api/auth/second-factor/passkey', { response: stepAssertion }, { cookie: mfa });
    expect(step.statusCode, step.body).toBe(200);
    expect(step.json()).toMatchObject({ user: { email: 'ada@example.com' } });
    expectProblem(await postJson(a, '/api/auth/second-factor/passkey', { response: stepAssertion }, { cookie: mfa }), 401, 'second_factor_expired');
  });

  it('spends a passkey-first challenge once when two instances receive its answer at the same moment', async () => {
    const { one: a, two: b, cookie } = await pair();
    const authenticator = passkey();
    const created = (await me(a, 'POST', '/api/me/passkeys/options', cookie)).json() as { challenge: string; user: { id: string } };
    expect((await me(a, 'POST', '/api/me/passkeys', cookie, { name: 'Laptop', response: authenticator.register(created) })).statusCode).toBe(201);
    const assertion = authenticator.assert((await postJson(a, '/api/auth/passkey/options', {})).json().challenge, created.user.id);
    const answers = await Promise.all([postJson(a, '/api/auth/passkey', { response: assertion }), postJson(b, '/api/auth/passkey', { response: assertion })]);
    expect(answers.map((r) => r.statusCode).sort(), answers.map((r) => r.body).join('\n')).toEqual([200, 400]);
    expectProblem(answers.find((r) => r.statusCode === 400)!, 400, 'passkey_invalid');
  });

  it('sweeps expired pending steps and challenges', async () => {
    const { one: a, cookie } = await pair();
    await withTotp(a, cookie);
    await passwordStep(a);
    await postJson(a, '/api/auth/passkey/options', {});
    expect(await many(a.db.select().from(pendingSignIns))).toHaveLength(1);
    expect(await many(a.db.select().from(webauthnChallenges))).toHaveLength(1);
    a.clock.advance(4 * 60_000);
    expect((await sweep(a.db, a.config, a.clock)).pruned['pending second steps']).toBeUndefined();
    expect(await many(a.db.select().from(pendingSignIns))).toHaveLength(1);
    a.clock.advance(2 * 60_000);
    const run = await sweep(a.db, a.config, a.clock);
    expect(run.error).toBeNull();
    expect(run.pruned).toMatchObject({ 'pending second steps': 1, 'WebAuthn challenges': 1 });
    expect(await many(a.db.select().from(pendingSignIns))).toEqual([]);
    expect(await many(a.db.select().from(webauthnChallenges))).toEqual([]);
  });
});
