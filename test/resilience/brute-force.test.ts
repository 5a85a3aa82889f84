/**
 * Brute force (issue 9, item 5), on buildApp with a fixed clock so lock times are exact.
 * - Per-account back-off (docs/decisions.md "Per-account back-off"): four wrong guesses are
 *   answered, the fifth locks the account for 30 s, and each further failure after a lock runs
 *   out doubles it (30 s, 60 s, 120 s … 15 min): the guessing rate slows geometrically. The lock
 *   holds whichever address the guesses come from, guesses during a lock neither count nor
 *   extend it, and guesses sent all at once cannot slip past it.
 * - The owner is not disturbed: the session cookie, its silent authorization and the refresh
 *   tokens keep working throughout; only new password sign-ins wait.
 * - Per-IP limiters answer 429 with `Retry-After`: `rate_limited` problem+json on the JSON
 *   endpoints, the HTML error page on the hosted form, `temporarily_unavailable` at the token
 *   endpoint (which never slows other addresses).
 */
import { describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { makeApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/accounts.js';
import { authorize, expectOAuthError, location, setUpClients, spaParams, spaTokens, token } from '../helpers/oauth-inject.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { expectProblem } from '../helpers/problem.js';
import { lockDuration } from '../../server/accounts/sign-in.js';

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

/** A password guess against the owner's account, from a new address each time. */
const guess = (t: TestApp, password: string) =>
  postFrom(t, '/api/auth/sign-in/email', { email: EMAIL, password, applicationId: 'notes' }, elsewhere());

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
    expect(form.body).toContain('Too many failed sign-ins for this account');

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
