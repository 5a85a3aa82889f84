/**
 * A stolen session must not become lasting access (audit item 2): adding or removing a way to
 * sign in needs a sign-in on this session within the last 10 minutes. Over JSON that is 403
 * `reauthentication_required`; on the hosted pages the person is sent through the sign-in page
 * (`/sign-in?reauth=1`) and back to the account page, where the same action then goes through.
 */
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { linkedAccounts, people, providerLogins, sessionRealms } from '../../server/db/schema.js';
import { makeApp, type TestApp } from '../helpers/app.js';
import { PASSWORD, cookieValue, createApplication, signIn } from '../helpers/accounts.js';
import { expectPage } from '../helpers/browser-jar.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { expectProblem } from '../helpers/problem.js';
import { me, signedUpCookie } from '../helpers/self-service.js';
import { exec, many, one } from '../../server/db/store.js';

const TEN_MINUTES = 10 * 60_000;
const GITHUB = { GITHUB_CLIENT_ID: 'gh-client', GITHUB_CLIENT_SECRET: 'gh-secret' };

/** Ada, signed up (so signed in) at the clock's start, with `credential` and a `github` account. */
async function ada(): Promise<{ t: TestApp; cookie: string; personId: string }> {
  const t = await makeApp({ config: { env: { ...GITHUB } } });
  await createApplication(t, { authPolicy: { signup_policy: 'open' } });
  const cookie = await signedUpCookie(t, 'ada@example.com', 'notes');
  const personId = (await one(t.db.select().from(people)))!.id;
  await exec(t.db.insert(linkedAccounts).values({ id: 'acc_gh', personId, provider: 'github', providerAccountId: '42', email: 'ada@example.com', linkedAt: t.clock.now() }));
  return { t, cookie, personId };
}

const providersOf = async (t: TestApp, personId: string) =>
  (await many(t.db.select({ p: linkedAccounts.provider }).from(linkedAccounts).where(eq(linkedAccounts.personId, personId)))).map((a) => a.p).sort();

describe('DELETE /api/me/linked-accounts/:provider needs a recent sign-in', () => {
  it('answers 403 reauthentication_required after 10 minutes, and goes through once the session signs in again', async () => {
    const { t, cookie, personId } = await ada();
    t.clock.advance(TEN_MINUTES + 1);
    const refused = await me(t, 'DELETE', '/api/me/linked-accounts/github', cookie);
    const body = expectProblem(refused, 403, 'reauthentication_required');
    expect(body).toEqual({
      type: 'https://gatehouse.dev/problems/reauthentication-required',
      title: 'Forbidden',
      status: 403,
      detail: 'Changing how you sign in needs a recent sign-in: sign in again on this device (within 10 minutes), then retry.',
      code: 'reauthentication_required',
    });
    expect(refused.headers['cache-control']).toBe('no-store');
    // Checked before anything else about the request: an unlinked provider gets the same answer.
    expectProblem(await me(t, 'DELETE', '/api/me/linked-accounts/discord', cookie), 403, 'reauthentication_required');
    expect((await providersOf(t, personId))).toEqual(['credential', 'github']);

    // Signing in again on the same session (its cookie kept) counts, by any method.
    const again = await signIn(t, { email: 'ada@example.com' }, { cookie });
    expect(again.statusCode).toBe(200);
    expect(cookieValue(again, 'gatehouse_session')).toBeUndefined(); // the same session
    t.clock.advance(TEN_MINUTES); // exactly 10 minutes later is still recent
    expect((await me(t, 'DELETE', '/api/me/linked-accounts/github', cookie)).statusCode).toBe(204);
    expect((await providersOf(t, personId))).toEqual(['credential']);
    expectProblem(await me(t, 'DELETE', '/api/me/linked-accounts/discord', cookie), 404, 'linked_account_not_found');
  });

  it('treats a session with no record of its sign-in time (from before the rule) as not recent', async () => {
    const { t, cookie } = await ada();
    await exec(t.db.delete(sessionRealms).where(eq(sessionRealms.realm, 'gatehouse')));
    expectProblem(await me(t, 'DELETE', '/api/me/linked-accounts/github', cookie), 403, 'reauthentication_required');
  });

  it('signing in for an application also counts (every sign-in marks the session)', async () => {
    const { t, cookie } = await ada();
    t.clock.advance(TEN_MINUTES + 1);
    expect((await signIn(t, { email: 'ada@example.com', applicationId: 'notes' }, { cookie })).statusCode).toBe(200);
    expect((await me(t, 'DELETE', '/api/me/linked-accounts/github', cookie)).statusCode).toBe(204);
  });
});

describe('the account page sends a stale session through sign-in first', () => {
  it('unlink: 303 to /sign-in?reauth=1, "Continue as" there, back to /account, then the unlink works', async () => {
    const { t, cookie, personId } = await ada();
    t.clock.advance(TEN_MINUTES + 1);
    const page = await openPage(t, '/account', cookie);
    const unlink = await postForm(t, '/account/linked-accounts/github/unlink', { csrf_token: csrfFrom(page.res) }, page.cookie);
    expect({ status: unlink.statusCode, location: unlink.headers.location, cache: unlink.headers['cache-control'], body: unlink.body })
      .toEqual({ status: 303, location: '/sign-in?reauth=1', cache: 'no-store', body: '' });
    expect((await providersOf(t, personId))).toEqual(['credential', 'github']);

    const signInPage = await openPage(t, '/sign-in?reauth=1', page.cookie);
    await expectPage(signInPage.res, 200, '<p class="notice" role="status">To change how you sign in, please sign in again first.</p>');
    expect(signInPage.res.body).toContain('Continue as ada');
    const signedIn = await postForm(t, '/sign-in', {
      csrf_token: csrfFrom(signInPage.res), client_id: '', return_to: '/account', email: 'ada@example.com', password: PASSWORD,
    }, signInPage.cookie);
    expect({ status: signedIn.statusCode, location: signedIn.headers.location }).toEqual({ status: 303, location: '/account' });
    expect(cookieValue(signedIn, 'gatehouse_session')).toBeUndefined();

    const retried = await postForm(t, '/account/linked-accounts/github/unlink', { csrf_token: csrfFrom(page.res) }, page.cookie);
    expect({ status: retried.statusCode, location: retried.headers.location }).toEqual({ status: 303, location: '/account?notice=account_unlinked#sign-in-methods' });
    expect((await providersOf(t, personId))).toEqual(['credential']);
  });

  it('link: 303 to /sign-in?reauth=1 without starting a login; after signing in again it starts', async () => {
    const { t, cookie } = await ada();
    await exec(t.db.delete(linkedAccounts).where(eq(linkedAccounts.provider, 'github')));
    t.clock.advance(TEN_MINUTES + 1);
    const page = await openPage(t, '/account', cookie);
    const link = await postForm(t, '/account/link/github', { csrf_token: csrfFrom(page.res) }, page.cookie);
    expect({ status: link.statusCode, location: link.headers.location }).toEqual({ status: 303, location: '/sign-in?reauth=1' });
    expect(cookieValue(link, 'gatehouse_provider_login')).toBeUndefined();
    expect(await many(t.db.select().from(providerLogins))).toEqual([]);

    expect((await signIn(t, { email: 'ada@example.com' }, { cookie })).statusCode).toBe(200);
    await expectPage(await postForm(t, '/account/link/github', { csrf_token: csrfFrom(page.res) }, page.cookie), 200, 'Taking you to GitHub');
    expect(await many(t.db.select().from(providerLogins))).toHaveLength(1);
  });

  it('offers a person without a password their own linked providers to sign in again', async () => {
    const { t, cookie } = await ada();
    expect((await me(t, 'DELETE', '/api/me/linked-accounts/credential', cookie)).statusCode).toBe(204);
    t.clock.advance(TEN_MINUTES + 1);
    const page = await openPage(t, '/sign-in?reauth=1', cookie);
    await expectPage(page.res, 200, 'To change how you sign in, please sign in again first.');
    expect(page.res.body).toContain('<a class="button secondary" href="/api/auth/sign-in/github">Continue with GitHub</a>');
    expect(page.res.body).not.toContain('Continue as');
    // Without a session the flag changes nothing: the plain sign-in page.
    const anonymous = await t.app.inject({ method: 'GET', url: '/sign-in?reauth=1' });
    expect(anonymous.statusCode).toBe(200);
    expect(anonymous.body).not.toContain('please sign in again');
    expect(anonymous.body).not.toContain('/api/auth/sign-in/github');
  });
});
