/**
 * Brute force (issue 9, item 5), on buildApp with a fixed clock so lock times are exact.
 * - Per-account back-off (docs/decisions/0009-per-account-back-off.md): four wrong guesses are
 *   answered, the fifth locks the account for 30 s, and each further failure after a lock runs
 *   out doubles it (30 s, 60 s, 120 s … 15 min): the guessing rate slows geometrically. The lock
 *   holds whichever address the guesses come from, guesses during a lock neither count nor
 *   extend it, and guesses sent all at once cannot slip past it.
 *   It is kept per e-mail address, so an address without an account locks exactly like one with
 *   an account (same answers, neither runs argon2 while locked), and it survives a restart.
 * - The owner is not disturbed: the session cookie, its silent authorization and the refresh
 *   tokens keep working throughout; only new password sign-ins wait.
 * - Per-IP limiters answer 429 with `Retry-After`: `rate_limited` problem+json on the JSON
 *   endpoints, the HTML error page on the hosted form, `temporarily_unavailable` at the token
 *   endpoint (which never slows other addresses). Every route that takes a password draws on
 *   one sign-in budget per IP, every sign-up route on one sign-up budget.
 */
import { describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { eq } from 'drizzle-orm';
import { makeApp, type TestApp } from '../helpers/app.js';
import { PASSWORD, insertInvitation } from '../helpers/accounts.js';
import { authorize, expectOAuthError, location, setUpClients, spaParams, spaTokens, token } from '../helpers/oauth-inject.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { expectProblem } from '../helpers/problem.js';
import { lockDuration } from '../../server/accounts/sign-in.js';
import { BACK_OFF_IDLE_MS, sweepBackOff } from '../../server/accounts/sign-in-back-off.js';
import { auditLog, signInBackOff } from '../../server/db/schema.js';
import { decodeQuotedPrintable, startSmtp } from '../helpers/smtp.js';
import { many } from '../../server/db/store.js';

const EMAIL = 'ada@example.com';
let address = 0;
/** A new source address per guess: the attacker is spread over many machines. */
const elsewhere = () => ({ remoteAddress: `198.51.100.${(address++ % 250) + 1}` });

/** A POST from a given source address: a form when the body is URLSearchParams, JSON otherwise. */
function postFrom(t: TestApp, url: string, body: Record<string, unknown> | URLSearchParams, from: { remoteAddress: string }, cookie = '') {
  const form = body instanceof URLSearchParams;
  return t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json', ...(cookie ? { cookie } : {}) },
    payload: form ? body.toString() : JSON.stringify(body),
    ...from,
  });
}

/** A password guess against the owner's account (or `email`), from a new address each time. */
const guess = (t: TestApp, password: string, email = EMAIL) =>
  postFrom(t, '/api/auth/sign-in/email', { email, password, applicationId: 'notes' }, elsewhere());

/** An answer as far as a client can tell two apart (timing aside). */
const wire = (res: LightMyRequestResponse) => ({
  status: res.statusCode,
  retryAfter: res.headers['retry-after'],
  contentType: res.headers['content-type'],
  setCookie: res.headers['set-cookie'],
  body: res.body,
});

/** How long an answer takes, in milliseconds (inject: no network in between). */
async function timed(request: () => Promise<LightMyRequestResponse>) {
  const start = performance.now();
  const res = await request();
  return { res, ms: performance.now() - start };
}

function expectWrong(res: LightMyRequestResponse) {
  expectProblem(res, 401, 'invalid_credentials');
  expect(res.headers['set-cookie']).toBeUndefined();
}

function expectLocked(res: LightMyRequestResponse, retryAfter: number) {
  expectProblem(res, 429, 'rate_limited');
  expect(res.headers['retry-after']).toBe(String(retryAfter));
  expect(res.headers['set-cookie']).toBeUndefined();
}

/** The owner's standing access: session listing, silent authorization, a refresh rotation. */
async function expectOwnerUndisturbed(t: TestApp, cookie: string, refreshToken: string): Promise<string> {
  const sessions = await t.app.inject({ method: 'GET', url: '/api/me/sessions', headers: { cookie } });
  expect(sessions.statusCode, sessions.body).toBe(200);
  expect(sessions.json().sessions.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
  expect(location(await authorize(t, spaParams().params, cookie)).searchParams.get('code')).toBeTruthy();
  const refreshed = await token(t, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'notes' });
  expect(refreshed.statusCode, refreshed.body).toBe(200);
  return refreshed.json().refresh_token;
}

describe('per-account back-off', () => {
  it('answers four guesses, locks at the fifth for 30 s doubling per failure, and never disturbs the owner', async () => {
    const t = await makeApp();
    const { cookie } = await setUpClients(t);
    let refreshToken = (await spaTokens(t, cookie)).refresh_token!;

    for (let i = 1; i <= 5; i++) expectWrong(await guess(t, `wrong password ${i}`));
    // Locked: even the right password waits, so the lock tells the attacker nothing.
    expectLocked(await guess(t, PASSWORD), 30);
    refreshToken = await expectOwnerUndisturbed(t, cookie, refreshToken);

    // The hosted form answers the lock with the sign-in page, status 429 and Retry-After.
    const page = await openPage(t, '/sign-in?client_id=notes');
    const form = await postForm(t, '/sign-in', { csrf_token: csrfFrom(page.res), client_id: 'notes', email: EMAIL, password: PASSWORD }, page.cookie);
    expect([form.statusCode, form.headers['retry-after'], form.headers['content-type']]).toEqual([429, '30', 'text/html; charset=utf-8']);
    expect(form.body).toContain('>Too many wrong passwords. Try again in 30 seconds.</p>');

    // Guesses during a lock are not counted and do not extend it.
    t.clock.advance(20_000);
    for (let i = 0; i < 5; i++) expectLocked(await guess(t, `wrong again ${i}`), 10);
    t.clock.advance(10_000);

    // Each failure after a lock runs out locks for twice as long.
    expectWrong(await guess(t, 'sixth wrong'));
    expectLocked(await guess(t, PASSWORD), 60);
    t.clock.advance(60_000);
    expectWrong(await guess(t, 'seventh wrong'));
    expectLocked(await guess(t, PASSWORD), 120);
    refreshToken = await expectOwnerUndisturbed(t, cookie, refreshToken);
    expect([5, 6, 7, 8, 9, 10, 40].map(lockDuration)).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 900_000, 900_000]);

    // The lock runs out: the right password works and the count starts over.
    t.clock.advance(120_000);
    const back = await guess(t, PASSWORD);
    expect(back.statusCode, back.body).toBe(200);
    for (let i = 1; i <= 5; i++) expectWrong(await guess(t, `fresh wrong ${i}`));
    expectLocked(await guess(t, PASSWORD), 30);
    await expectOwnerUndisturbed(t, cookie, refreshToken);
  });

  it('guesses sent all at once cannot slip past the lock: five are checked, the rest refused', async () => {
    const t = await makeApp();
    const { cookie } = await setUpClients(t);
    const refreshToken = (await spaTokens(t, cookie)).refresh_token!;

    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => guess(t, `parallel wrong ${i}`)));
    const statuses = answers.map((a) => a.statusCode).sort();
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(15).fill(429)]);
    for (const res of answers) (res.statusCode === 401 ? expectWrong(res) : expectLocked(res, 30));
    await expectOwnerUndisturbed(t, cookie, refreshToken);

    t.clock.advance(30_000);
    expect((await guess(t, PASSWORD)).statusCode).toBe(200);
  });
});

describe('per-address back-off: an address without an account is no different', () => {
  const NOBODY = 'nobody@example.com';

  it('locks an unknown address exactly like a known one: same answers at every step, no argon2 for either while locked', async () => {
    const t = await makeApp();
    const { cookie } = await setUpClients(t);
    const refreshToken = (await spaTokens(t, cookie)).refresh_token!;
    const both = async (password: string, nobodyPassword = password) => {
      const known = await guess(t, password);
      const unknown = await guess(t, nobodyPassword, NOBODY.toUpperCase()); // normalised like sign-in's lookup
      expect(wire(unknown)).toEqual(wire(known));
      return known;
    };

    for (let i = 1; i <= 5; i++) expectWrong(await both(`wrong password ${i}`));
    // Locked, both: even the owner's right password waits (and says nothing about it).
    expectLocked(await both(PASSWORD, 'some other password'), 30);
    t.clock.advance(20_000);
    for (let i = 0; i < 3; i++) expectLocked(await both(`during the lock ${i}`), 10);
    t.clock.advance(10_000);
    expectWrong(await both('sixth wrong'));
    expectLocked(await both(PASSWORD, 'another one'), 60);

    // The hosted form answers both locks alike (the CSRF field aside).
    const page = await openPage(t, '/sign-in?client_id=notes');
    const form = (email: string) =>
      postForm(t, '/sign-in', { csrf_token: csrfFrom(page.res), client_id: 'notes', email, password: PASSWORD }, page.cookie);
    const knownForm = await form(EMAIL);
    const unknownForm = await form(NOBODY);
    expect([knownForm.statusCode, knownForm.headers['retry-after']]).toEqual([429, '60']);
    expect([unknownForm.statusCode, unknownForm.headers['retry-after']]).toEqual([429, '60']);
    expect(knownForm.body).toContain('>Too many wrong passwords. Try again in 60 seconds.</p>');
    const withoutFields = (body: string) => body.replace(/value="[^"]*"/g, '');
    expect(withoutFields(unknownForm.body)).toBe(withoutFields(knownForm.body));

    // Timing: a locked answer skips argon2 for both, so both come back faster than a checked
    // guess (the fastest of several tries, so a busy machine does not decide it).
    const fastest = async (request: () => Promise<LightMyRequestResponse>, status: number) => {
      let min = Infinity;
      for (let i = 0; i < 4; i++) {
        const { res, ms } = await timed(request);
        expect(res.statusCode).toBe(status);
        min = Math.min(min, ms);
      }
      return min;
    };
    const checked = await fastest(() => guess(t, 'a checked guess', 'someone-else@example.com'), 401); // four free guesses
    const lockedKnown = await fastest(() => guess(t, 'locked guess'), 429);
    const lockedUnknown = await fastest(() => guess(t, 'locked guess', NOBODY), 429);
    expect(lockedKnown).toBeLessThan(checked);
    expect(lockedUnknown).toBeLessThan(checked);

    // Only the person's locks are audited; the store holds hashes, never the addresses.
    expect(await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'security.sign_in_locked')))).toHaveLength(2);
    expect(JSON.stringify(await many(t.db.select().from(signInBackOff)))).not.toContain('example.com');
    await expectOwnerUndisturbed(t, cookie, refreshToken);
  });

  it('guesses at an unknown address sent all at once cannot slip past the lock either', async () => {
    const t = await makeApp();
    await setUpClients(t);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => guess(t, `parallel wrong ${i}`, NOBODY)));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([...Array(5).fill(401), ...Array(15).fill(429)]);
    for (const res of answers) (res.statusCode === 401 ? expectWrong(res) : expectLocked(res, 30));
  });

  it('a lock survives a restart, and a count idle for a day is forgotten', async () => {
    const t = await makeApp();
    await setUpClients(t);
    for (let i = 1; i <= 5; i++) expectWrong(await guess(t, `wrong ${i}`, NOBODY));
    t.clock.advance(10_000);
    // The same database under a new app (a restart): still locked, for the time that is left.
    const restarted = await makeApp({ deps: { db: t.db, clock: t.clock } });
    expectLocked(await guess(restarted, 'after the restart', NOBODY), 20);
    expect((await guess(restarted, PASSWORD)).statusCode).toBe(200); // another address is not held by it

    t.clock.advance(20_000);
    expectWrong(await guess(restarted, 'sixth', NOBODY));
    expectLocked(await guess(restarted, 'locked for 60 s', NOBODY), 60);
    // Idle for a day after the lock ran out: the count starts over (four free guesses again).
    t.clock.advance(60_000 + BACK_OFF_IDLE_MS);
    for (let i = 1; i <= 5; i++) expectWrong(await guess(restarted, `a day later ${i}`, NOBODY));
    expectLocked(await guess(restarted, 'locked again', NOBODY), 30);
  });

  it('the sweep keeps at most the given number of addresses, dropping the longest idle first', async () => {
    const t = await makeApp();
    await setUpClients(t);
    for (const [i, email] of ['a@example.com', 'b@example.com', 'c@example.com'].entries()) {
      t.clock.advance(1_000);
      expectWrong(await guess(t, `wrong ${i}`, email));
    }
    expect(await many(t.db.select().from(signInBackOff))).toHaveLength(3);
    await sweepBackOff(t.db, t.clock.now(), 2);
    const kept = (await many(t.db.select({ at: signInBackOff.lastFailureAt }).from(signInBackOff))).map((r) => r.at.getTime()).sort();
    expect(kept).toEqual([t.clock.now().getTime() - 1_000, t.clock.now().getTime()]);
  });
});

describe('lock-out is not a denial of service (issue 22): a browser that proved itself before still gets in', () => {
  /** The device cookie a response set (name, value and attributes), if any. */
  const deviceCookieOf = (res: LightMyRequestResponse) => res.cookies.find((c) => c.name === 'gatehouse_device');
  /** Strangers (no cookies, many addresses) lock the owner's address. */
  async function lockOut(t: TestApp) {
    for (let i = 1; i <= 5; i++) expectWrong(await guess(t, `stranger ${i}`));
    expectLocked(await guess(t, PASSWORD), 30);
  }
  const signInWith = (t: TestApp, cookie: string, password = PASSWORD, email = EMAIL) =>
    postFrom(t, '/api/auth/sign-in/email', { email, password, applicationId: 'notes' }, elsewhere(), cookie);

  it('a signed, HttpOnly device cookie set at sign-in lets that browser sign in with the right password while strangers are locked out', async () => {
    const t = await makeApp();
    await setUpClients(t);
    const first = await signInWith(t, '');
    expect(first.statusCode, first.body).toBe(200);
    const device = deviceCookieOf(first)!;
    expect(device).toMatchObject({ name: 'gatehouse_device', path: '/', httpOnly: true, sameSite: 'Lax', maxAge: 180 * 86400 });
    expect(device.value).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    expect(device.value).not.toContain('example');
    // Signed out on this device: only the device cookie is left.
    const deviceCookie = `gatehouse_device=${device.value}`;

    await lockOut(t);
    const owner = await signInWith(t, deviceCookie);
    expect(owner.statusCode, owner.body).toBe(200);
    // A new device cookie at each sign-in (the nonce changes).
    expect(deviceCookieOf(owner)!.value).not.toBe(device.value);
    // Strangers stay locked out, also with a made-up or tampered cookie, or another account's.
    expectLocked(await signInWith(t, ''), 30);
    const [nonce, signature] = device.value.split('.') as [string, string];
    for (const forged of [`gatehouse_device=${nonce}.${'A'.repeat(43)}`, `gatehouse_device=${'B'.repeat(22)}.${signature}`, 'gatehouse_device=junk']) {
      expectLocked(await signInWith(t, forged), 30);
    }
    expect((await postFrom(t, '/api/auth/sign-up/email', { email: 'eve@example.com', password: PASSWORD, applicationId: 'notes' }, elsewhere())).statusCode).toBe(201);
    const eve = deviceCookieOf(await signInWith(t, '', PASSWORD, 'eve@example.com'))!;
    expectLocked(await signInWith(t, `gatehouse_device=${eve.value}`), 30);
    // The hosted form honours it too.
    const page = await openPage(t, '/sign-in?client_id=notes');
    const form = await postForm(t, '/sign-in', { csrf_token: csrfFrom(page.res), client_id: 'notes', email: EMAIL, password: PASSWORD }, `${page.cookie}; ${deviceCookie}`);
    expect(form.statusCode, form.body).toBe(303);
  });

  it("that browser's live session proves it too: a second sign-in and a password change work through a lock", async () => {
    const t = await makeApp();
    const { cookie } = await setUpClients(t); // signed up: a live session, no device cookie sent back
    await lockOut(t);
    const again = await signInWith(t, cookie);
    expect(again.statusCode, again.body).toBe(200);
    const change = await postFrom(t, '/api/me/password', { currentPassword: PASSWORD, newPassword: 'a new password 1' }, elsewhere(), cookie);
    expect(change.statusCode, change.body).toBe(204);
    // A password change lifts the address's lock; strangers lock it again. Another person's session proves nothing about it.
    for (let i = 1; i <= 5; i++) expectWrong(await guess(t, `stranger again ${i}`));
    expect((await postFrom(t, '/api/auth/sign-up/email', { email: 'eve@example.com', password: PASSWORD, applicationId: 'notes' }, elsewhere())).statusCode).toBe(201);
    const eveSession = `gatehouse_session=${(await signInWith(t, '', PASSWORD, 'eve@example.com')).cookies.find((c) => c.name === 'gatehouse_session')!.value}`;
    expectLocked(await signInWith(t, eveSession, 'a new password 1'), 30);
  });

  it('a trusted browser that guesses gets its own lock, then counts as a stranger', async () => {
    const t = await makeApp();
    await setUpClients(t);
    const deviceCookie = `gatehouse_device=${deviceCookieOf(await signInWith(t, ''))!.value}`;
    // Its own five failures, then its cookie is locked and it is a stranger: four more, then the address locks.
    for (let i = 1; i <= 5; i++) expectWrong(await signInWith(t, deviceCookie, `stolen cookie ${i}`));
    for (let i = 1; i <= 5; i++) expectWrong(await signInWith(t, deviceCookie, `as a stranger ${i}`));
    expectLocked(await signInWith(t, deviceCookie), 30);
    // The trusted lock runs out with its 30 s too, and then the right password works from it again.
    t.clock.advance(30_000);
    expect((await signInWith(t, deviceCookie)).statusCode).toBe(200);
  });

  it('tells the person by e-mail when their account is being guessed at, once a day, never for an address without an account', async () => {
    const smtp = await startSmtp();
    try {
      const t = await makeApp({ config: { smtpUrl: smtp.url, smtpFrom: 'Gatehouse <gatehouse@example.com>' } });
      await setUpClients(t);
      await lockOut(t);
      for (let i = 1; i <= 5; i++) expectWrong(await guess(t, `nobody ${i}`, 'nobody@example.com'));
      const SUBJECT = 'Subject: Someone is trying to sign in to your Gatehouse account';
      // Sign-up sent its verification e-mail first; the notices are the ones with this subject.
      const notices = () => smtp.received.filter((m) => m.raw.includes(SUBJECT));
      await smtp.waitFor(2);
      const [mail] = notices();
      expect(mail!.to).toEqual([EMAIL]);
      const text = decodeQuotedPrintable(mail!.raw);
      expect(text).toContain(`5 wrong passwords were tried for ${EMAIL}`);
      expect(text).toContain('Browsers you have signed in with before can still sign in');
      expect(text).not.toContain('stranger');
      expect(text).not.toMatch(/https?:\/\//);
      // Another lock the same day (the sixth failure locks for 60 s): no second e-mail; a lock a day later, a new one.
      t.clock.advance(30_000);
      expectWrong(await guess(t, 'sixth'));
      t.clock.advance(24 * 3600_000);
      expectWrong(await guess(t, 'a day later'));
      await smtp.waitFor(3);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(notices().map((m) => m.to)).toEqual([[EMAIL], [EMAIL]]);
      expect(smtp.received).toHaveLength(3);
    } finally {
      await smtp.close();
    }
  });
});

describe('per-IP rate limits', () => {
  const limits = { GATEHOUSE_SIGN_IN_RATE_LIMIT: '3', GATEHOUSE_SIGN_UP_RATE_LIMIT: '2', GATEHOUSE_TOKEN_FAILURE_LIMIT: '3' };
  const attacker = { remoteAddress: '203.0.113.7' };

  function expectRetryAfterWithinAMinute(res: LightMyRequestResponse) {
    const seconds = Number(res.headers['retry-after']);
    expect(Number.isInteger(seconds) && seconds >= 1 && seconds <= 60, String(res.headers['retry-after'])).toBe(true);
  }

  it('JSON sign-in and sign-up answer 429 rate_limited with Retry-After, per address', async () => {
    const t = await makeApp({ config: { env: limits } });
    await setUpClients(t); // one sign-up from 127.0.0.1
    const signIn = (body: Record<string, unknown>, from = attacker) =>
      postFrom(t, '/api/auth/sign-in/email', { password: PASSWORD, ...body }, from);
    for (let i = 0; i < 3; i++) expectWrong(await signIn({ email: 'nobody@example.com' }));
    const limited = await signIn({ email: EMAIL, applicationId: 'notes' });
    expectProblem(limited, 429, 'rate_limited');
    expectRetryAfterWithinAMinute(limited);
    // The owner, elsewhere, is not limited.
    expect((await signIn({ email: EMAIL, applicationId: 'notes' }, { remoteAddress: '192.0.2.1' })).statusCode).toBe(200);

    const signUp = (email: string) => postFrom(t, '/api/auth/sign-up/email', { email, password: PASSWORD, applicationId: 'notes' }, attacker);
    for (let i = 0; i < 2; i++) expect((await signUp(`new${i}@example.com`)).statusCode).toBe(201);
    const signUpLimited = await signUp('new2@example.com');
    expectProblem(signUpLimited, 429, 'rate_limited');
    expectRetryAfterWithinAMinute(signUpLimited);
  });

  it('the hosted sign-in form answers 429 with the error page and Retry-After', async () => {
    const t = await makeApp({ config: { env: limits } });
    await setUpClients(t);
    const page = await openPage(t, '/sign-in?client_id=notes');
    const fields = { csrf_token: csrfFrom(page.res), client_id: 'notes', email: 'nobody@example.com', password: 'wrong password' };
    const post = () => postFrom(t, '/sign-in', new URLSearchParams(fields), attacker, page.cookie);
    for (let i = 0; i < 3; i++) expect((await post()).statusCode).toBe(401);
    const limited = await post();
    expect([limited.statusCode, limited.headers['content-type']]).toEqual([429, 'text/html; charset=utf-8']);
    expect(limited.body).toContain('Too many attempts');
    expectRetryAfterWithinAMinute(limited);
  });

  it('one sign-in budget per address across every route that takes a password, and one sign-up budget', async () => {
    const t = await makeApp({ config: { env: limits } });
    const { cookie } = await setUpClients(t);
    const invitation = (await insertInvitation(t, 'notes', 'invitee@example.com'));
    const page = await openPage(t, '/sign-in?client_id=notes');
    const csrf = csrfFrom(page.res);
    const formFrom = (url: string, fields: Record<string, string>, from = attacker, cookies = page.cookie) =>
      postFrom(t, url, new URLSearchParams({ csrf_token: csrf, ...fields }), from, cookies);
    const expectLimitedPage = (res: LightMyRequestResponse) => {
      expect([res.statusCode, res.headers['content-type']], res.body).toEqual([429, 'text/html; charset=utf-8']);
      expect(res.body).toContain('Too many attempts');
      expectRetryAfterWithinAMinute(res);
    };

    // The JSON endpoint spends the whole budget (3 a minute here)…
    for (let i = 0; i < 3; i++) {
      expectWrong(await postFrom(t, '/api/auth/sign-in/email', { email: 'nobody@example.com', password: 'wrong password' }, attacker));
    }
    // …so the hosted form is refused too, before any password is checked, and so is every other
    // route that takes one: invitation sign-in, account-link proof, password change (page, JSON).
    expectLimitedPage(await formFrom('/sign-in', { client_id: 'notes', email: EMAIL, password: PASSWORD }));
    expectLimitedPage(await formFrom(`/invite/${invitation}/sign-in`, { email: EMAIL, password: PASSWORD }));
    expectLimitedPage(await formFrom('/link-account', { password: PASSWORD }));
    expectLimitedPage(
      await formFrom('/account/password', { current_password: PASSWORD, new_password: 'x'.repeat(12), confirm_password: 'x'.repeat(12) }, attacker, `${page.cookie}; ${cookie}`),
    );
    const change = await postFrom(t, '/api/me/password', { currentPassword: PASSWORD, newPassword: 'x'.repeat(12) }, attacker, cookie);
    expectProblem(change, 429, 'rate_limited');
    expectRetryAfterWithinAMinute(change);
    // Another address still signs in through the form.
    const owner = await formFrom('/sign-in', { client_id: 'notes', email: EMAIL, password: PASSWORD }, { remoteAddress: '192.0.2.1' });
    expect(owner.statusCode, owner.body).toBe(303);

    // Sign-up has its own budget (2 here), untouched by the sign-ins, shared by its routes.
    const signUp = (email: string) => postFrom(t, '/api/auth/sign-up/email', { email, password: PASSWORD, applicationId: 'notes' }, attacker);
    for (let i = 0; i < 2; i++) expect((await signUp(`new${i}@example.com`)).statusCode).toBe(201);
    expectLimitedPage(await formFrom('/sign-up', { client_id: 'notes', email: 'new2@example.com', password: PASSWORD }));
    expectLimitedPage(await formFrom(`/invite/${invitation}/sign-up`, { name: 'Invitee', password: PASSWORD }));
  });

  it('the token endpoint refuses an address with too many failures (temporarily_unavailable), not the others', async () => {
    const t = await makeApp({ config: { env: limits } });
    const { cookie } = await setUpClients(t);
    const refresh = (refreshToken: string, from = attacker) =>
      postFrom(t, '/api/auth/oauth2/token', new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'notes' }), from);
    for (let i = 0; i < 3; i++) expectOAuthError(await refresh(`ghr_guess${i}`), 400, 'invalid_grant');
    const limited = await refresh(`ghr_guess3`);
    expectOAuthError(limited, 429, 'temporarily_unavailable');
    expect(limited.headers['retry-after']).toBe('60');

    // Another address refreshes as usual.
    const owner = (await spaTokens(t, cookie)).refresh_token!;
    expect((await refresh(owner, { remoteAddress: '192.0.2.1' })).statusCode).toBe(200);

    t.clock.advance(45_000);
    expect((await refresh('ghr_guess4')).headers['retry-after']).toBe('15');
    t.clock.advance(15_000);
    expectOAuthError(await refresh('ghr_guess5'), 400, 'invalid_grant');
  });
});
