/**
 * People management by administrators (spec administrators-and-people.md, "People"), with a real
 * SMTP server (smtp-server) for the welcome and reset e-mails: create (e-mailed link to choose a
 * password, or the password under the policy), disable (sessions end with back-channel logout;
 * no sign-in anywhere), enable, the reset e-mail, the sessions list, sign out everywhere, delete
 * (a purge; webhook person.deleted; the last owner stays).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { asc, eq } from 'drizzle-orm';
import { makeApp, type TestApp } from '../helpers/app.js';
import { decodeQuotedPrintable, startSmtp, type ReceivedMail } from '../helpers/smtp.js';
import { PASSWORD, sessionCookieOf, signIn, signUp } from '../helpers/accounts.js';
import { authorize, location, spaParams, token, SPA_REDIRECT } from '../helpers/oauth-inject.js';
import { administrator } from '../helpers/admins.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { auditLog, backchannelLogouts, memberships, people, sessions, webhookDeliveries } from '../../server/db/schema.js';
import { many } from '../../server/db/store.js';

let smtp: Awaited<ReturnType<typeof startSmtp>> | undefined;
afterEach(async () => {
  await smtp?.close();
  smtp = undefined;
});

async function withMail(): Promise<TestApp> {
  smtp = await startSmtp();
  return makeApp({ config: { smtpUrl: smtp.url, env: { GATEHOUSE_SIGN_UP_RATE_LIMIT: '100' } } });
}

const subjectOf = (mail: ReceivedMail) => /^Subject: (.*)$/m.exec(mail.raw)?.[1];

async function mailTo(address: string, subject: string): Promise<{ link: URL; text: string }> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const mail = smtp!.received.find((m) => m.to.includes(address) && subjectOf(m) === subject);
    if (mail) {
      const text = decodeQuotedPrintable(mail.raw);
      return { link: new URL(/http:\/\/127\.0\.0\.1:8787\/reset-password\?token=[A-Za-z0-9_%-]+/.exec(text)![0]), text };
    }
    if (Date.now() > deadline) throw new Error(`no "${subject}" e-mail to ${address}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function notesApp(t: TestApp) {
  const res = await t.admin('POST', '/api/admin/applications', {
    id: 'notes', name: 'Notes', audience: 'https://notes.example.com/api', clientType: 'spa', redirectUris: [SPA_REDIRECT],
    authPolicy: { signup_policy: 'open' }, backchannelLogoutUri: 'https://notes.example.com/bcl', webhookUrl: 'https://hooks.example.com/notes',
  });
  expect(res.statusCode, res.body).toBe(201);
}

describe('creating people', () => {
  it('e-mails a link to choose a password, valid a week, that works under the policy', async () => {
    const t = await withMail();
    const res = await t.admin('POST', '/api/admin/people', { email: 'Ann.Lee@Example.com', name: 'Ann Lee', sendInvitation: true });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers.location).toBe(`/api/admin/people/${res.json().id}`);
    expect(res.json()).toMatchObject({ email: 'ann.lee@example.com', name: 'Ann Lee', status: 'active', hasPassword: false, emailVerified: false });
    const { link, text } = await mailTo('ann.lee@example.com', 'Your account on Gatehouse (127.0.0.1:8787)');
    expect(text).toContain('An administrator created an account for ann.lee@example.com on Gatehouse (127.0.0.1:8787).');
    expect(text).toContain('The link works once, for 7 days.');

    t.clock.advance(6 * 24 * 3600_000); // still good after six days
    const page = await openPage(t, `${link.pathname}${link.search}`);
    expect(page.res.statusCode).toBe(200);
    expect(page.res.body).toContain('At least 10 characters. Longer is stronger: a few unrelated words work well. Rated at least “fair”. Common passwords are refused.');
    const weak = await postForm(t, '/reset-password', { csrf_token: csrfFrom(page.res), token: link.searchParams.get('token')!, password: 'password123', confirm_password: 'password123' }, page.cookie);
    expect(weak.statusCode).toBe(400);
    expect(weak.body).toContain('This password is one of the most common passwords, which attackers try first: choose another.');
    const set = await postForm(t, '/reset-password', { csrf_token: csrfFrom(page.res), token: link.searchParams.get('token')!, password: PASSWORD, confirm_password: PASSWORD }, page.cookie);
    expect(set.statusCode, set.body.slice(0, 300)).toBe(200);
    expect((await signIn(t, { email: 'ann.lee@example.com' })).statusCode).toBe(200);
  });

  it('sets a password directly under the policy, with a username and groups, and refuses clashes', async () => {
    const t = await withMail();
    const weak = await t.admin('POST', '/api/admin/people', { email: 'bo@example.com', password: 'bo@example.com1' });
    expect(weak.statusCode).toBe(400);
    expect(weak.json().code).toBe('weak_password');
    const both = await t.admin('POST', '/api/admin/people', { email: 'bo@example.com', password: PASSWORD, sendInvitation: true });
    expect(both.json()).toMatchObject({ status: 400, code: 'validation_failed', detail: 'Give either sendInvitation: true (an e-mail to choose a password) or a password, not both.' });
    const noGroup = await t.admin('POST', '/api/admin/people', { email: 'bo@example.com', password: PASSWORD, groups: ['staff'] });
    expect(noGroup.json()).toMatchObject({ code: 'validation_failed', detail: 'No such group: staff.' });

    const made = await t.admin('POST', '/api/admin/people', { email: 'bo@example.com', name: 'Bo', username: 'Bo.B', password: PASSWORD });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json()).toMatchObject({ hasPassword: true, status: 'active' });
    expect((await signIn(t, { email: 'bo@example.com' })).statusCode).toBe(200);
    expect((await t.admin('POST', '/api/admin/people', { email: 'BO@example.com', password: PASSWORD })).json()).toMatchObject({ status: 409, code: 'email_in_use' });
    expect((await t.admin('POST', '/api/admin/people', { email: 'bo2@example.com', username: 'bo.b', password: PASSWORD })).json()).toMatchObject({ status: 409, code: 'username_taken' });
    const [entry] = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'person.created')));
    expect(entry).toMatchObject({ actor: 'admin', target: made.json().id, details: { email: 'bo@example.com', username: 'bo.b', groups: [], invited: false } });

    // Groups given at creation go through the groups' own rule: each addition is audited.
    expect((await t.admin('POST', '/api/admin/groups', { id: 'staff', name: 'Staff' })).statusCode).toBe(201);
    const cy = await t.admin('POST', '/api/admin/people', { email: 'cy@example.com', password: PASSWORD, groups: ['staff'] });
    expect(cy.statusCode, cy.body).toBe(201);
    expect((await t.admin('GET', `/api/admin/people/${cy.json().id}`)).json().groups).toEqual([{ id: 'staff', name: 'Staff' }]);
    const added = await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'group.member_added')));
    expect(added.map((e) => ({ actor: e.actor, target: e.target, details: e.details }))).toEqual([
      { actor: 'admin', target: 'staff', details: { userId: cy.json().id } },
    ]);
  });
});

describe('disabling, sessions and deleting', () => {
  it('disabling ends every session with back-channel logout and refuses sign-in until enabled', async () => {
    const t = await withMail();
    await notesApp(t);
    const res = await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: 'notes' });
    const cookie = `gatehouse_session=${sessionCookieOf(res)}`;
    const id = res.json().user.id as string;
    const { pkce, params } = spaParams({ scope: 'openid offline_access' });
    const code = location(await authorize(t, params, cookie)).searchParams.get('code')!;
    const tokens = (await token(t, { grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: 'notes', code_verifier: pkce.verifier })).json();
    await signIn(t, { email: 'ada@example.com' }, { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' });

    const listed = await t.admin('GET', `/api/admin/people/${id}/sessions`);
    expect(listed.statusCode).toBe(200);
    expect(listed.json().sessions.map((s: { device: string }) => s.device)).toEqual(['Firefox 128 on Linux', 'lightMyRequest']);

    const disabled = await t.admin('PATCH', `/api/admin/people/${id}`, { status: 'disabled' });
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect(disabled.json().status).toBe('disabled');
    expect((await t.admin('GET', `/api/admin/people/${id}/sessions`)).json().sessions).toEqual([]);
    const logouts = await many(t.db.select({ app: backchannelLogouts.applicationId, reason: backchannelLogouts.reason }).from(backchannelLogouts));
    expect(logouts).toEqual([{ app: 'notes', reason: 'person_disabled' }]);
    expect((await token(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'notes' })).json().error).toBe('invalid_grant');
    const refused = await signIn(t, { email: 'ada@example.com' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'account_disabled', detail: 'This account is disabled. Ask an administrator of this Gatehouse to enable it.' });
    expect((await t.admin('POST', `/api/admin/people/${id}/password-reset`)).json().code).toBe('person_disabled');

    expect((await t.admin('PATCH', `/api/admin/people/${id}`, { status: 'active' })).json().status).toBe('active');
    expect((await signIn(t, { email: 'ada@example.com' })).statusCode).toBe(200);
    const actions = (await many(t.db.select().from(auditLog).orderBy(asc(auditLog.at), asc(auditLog.id)))).map((e) => e.action).filter((a) => a.startsWith('person.'));
    expect(actions).toEqual(['person.signed_up', 'person.disabled', 'person.enabled']);
  });

  it('sends the reset e-mail, signs out everywhere, and deletes the person with a webhook', async () => {
    const t = await withMail();
    await notesApp(t);
    const res = await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: 'notes' });
    const id = res.json().user.id as string;

    const reset = await t.admin('POST', `/api/admin/people/${id}/password-reset`);
    expect([reset.statusCode, reset.json()]).toEqual([202, { sent: true }]);
    await mailTo('ada@example.com', 'Reset your Gatehouse password');

    const out = await t.admin('POST', `/api/admin/people/${id}/sign-out`);
    expect(out.json()).toEqual({ sessionsEnded: 1 });
    expect((await t.app.inject({ method: 'GET', url: '/api/me/sessions', headers: { cookie: `gatehouse_session=${sessionCookieOf(res)}` } })).statusCode).toBe(401);

    expect((await t.admin('DELETE', `/api/admin/people/${id}`)).statusCode).toBe(204);
    expect((await t.admin('GET', `/api/admin/people/${id}`)).json().code).toBe('person_not_found');
    expect(await many(t.db.select().from(people).where(eq(people.id, id)))).toEqual([]);
    expect(await many(t.db.select().from(memberships).where(eq(memberships.personId, id)))).toEqual([]);
    expect(await many(t.db.select().from(sessions).where(eq(sessions.personId, id)))).toEqual([]);
    const events = await many(t.db.select({ type: webhookDeliveries.type, payload: webhookDeliveries.payload }).from(webhookDeliveries).where(eq(webhookDeliveries.type, 'person.deleted')));
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.payload).data).toEqual({ id, email: 'ada@example.com', username: 'ada' });
    // Gone: signing in answers as for an address nobody has.
    expect((await signIn(t, { email: 'ada@example.com' })).json().code).toBe('invalid_credentials');
  });

  it('without a mail server, hands the administrator a reset link to pass on: single use, one hour, the newest only, audited', async () => {
    const t = await makeApp({ config: { env: { GATEHOUSE_SIGN_UP_RATE_LIMIT: '100' } } });
    await notesApp(t);
    const id = (await signUp(t, { email: 'ada@example.com', name: 'Ada', applicationId: 'notes' })).json().user.id as string;
    // The e-mail cannot be sent; the panel offers the link instead.
    expect((await t.admin('POST', `/api/admin/people/${id}/password-reset`)).json().code).toBe('mail_not_configured');
    const first = await t.admin('POST', `/api/admin/people/${id}/password-reset-link`);
    expect(first.statusCode, first.body).toBe(201);
    expect(first.headers['cache-control']).toBe('no-store');
    const made = first.json() as { url: string; expiresAt: string };
    expect(made.url).toMatch(/^http:\/\/127\.0\.0\.1:8787\/reset-password\?token=[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(made.expiresAt) - Date.now()).toBeGreaterThan(59 * 60_000);
    expect(Date.parse(made.expiresAt) - Date.now()).toBeLessThanOrEqual(60 * 60_000);
    // A newer link replaces it.
    const second = (await t.admin('POST', `/api/admin/people/${id}/password-reset-link`)).json() as { url: string };
    const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;
    const confirm = (url: string, password: string) => t.app.inject({
      method: 'POST', url: '/api/auth/password-reset/confirm', headers: { 'content-type': 'application/json', origin: 'http://127.0.0.1:8787' },
      payload: { token: tokenOf(url), password },
    });
    expect((await confirm(made.url, 'a brand new passphrase')).json().code).toBe('token_invalid');
    // The link's page opens without a mail server, and the new password signs in.
    expect((await t.app.inject({ method: 'GET', url: new URL(second.url).pathname + new URL(second.url).search })).statusCode).toBe(200);
    expect((await confirm(second.url, 'a brand new passphrase')).statusCode).toBe(204);
    expect((await signIn(t, { email: 'ada@example.com', password: 'a brand new passphrase' })).statusCode).toBe(200);
    expect((await confirm(second.url, 'another new passphrase')).json().code).toBe('token_used');
    const audit = await many(t.db.select({ actor: auditLog.actor, action: auditLog.action, target: auditLog.target, details: auditLog.details }).from(auditLog).where(eq(auditLog.action, 'person.password_reset_link_made')));
    expect(audit).toEqual([
      { actor: 'admin', action: 'person.password_reset_link_made', target: id, details: { email: 'ada@example.com' } },
      { actor: 'admin', action: 'person.password_reset_link_made', target: id, details: { email: 'ada@example.com' } },
    ]);
    expect(JSON.stringify(audit)).not.toContain(tokenOf(second.url));
    // Refused: a disabled person, an unknown one.
    expect((await t.admin('PATCH', `/api/admin/people/${id}`, { status: 'disabled' })).statusCode).toBe(200);
    expect((await t.admin('POST', `/api/admin/people/${id}/password-reset-link`)).json().code).toBe('person_disabled');
    expect((await t.admin('POST', '/api/admin/people/usr_nobody/password-reset-link')).json().code).toBe('person_not_found');
  });

  it('keeps the last owner: neither disabled nor deleted', async () => {
    const t = await withMail();
    const owner = await administrator(t, 'olive@example.com', 'owner');
    for (const res of [await t.admin('PATCH', `/api/admin/people/${owner.personId}`, { status: 'disabled' }), await t.admin('DELETE', `/api/admin/people/${owner.personId}`)]) {
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('last_owner');
    }
  });
});

describe('people search', () => {
  it('matches the start of the e-mail, the username or any word of the name, through indexes', async () => {
    const t = await withMail();
    for (const [email, name, username] of [
      ['ann.lee@example.com', 'Ann Lee', 'annie'],
      ['bob@example.com', 'Robert van Leeuwen', 'bob'],
      ['carla@example.com', 'Carla Mendes', 'leeroy'],
      ['dan@example.com', 'Daniel Appleby', 'dan'],
    ] as const) {
      expect((await t.admin('POST', '/api/admin/people', { email, name, username, password: PASSWORD })).statusCode).toBe(201);
    }
    const found = async (q: string) => (await t.admin('GET', `/api/admin/people?q=${encodeURIComponent(q)}`)).json().people.map((p: { email: string }) => p.email);
    expect(await found('ann')).toEqual(['ann.lee@example.com']); // e-mail and username prefix
    expect(await found('lee')).toEqual(['ann.lee@example.com', 'bob@example.com', 'carla@example.com']); // name word, "Leeuwen", username
    expect(await found('Mend')).toEqual(['carla@example.com']); // a later word of the name
    expect(await found('pleby')).toEqual([]); // inside a word: not a word start
    expect(await found('da')).toEqual(['dan@example.com']); // short: e-mails and usernames only
    const page1 = (await t.admin('GET', '/api/admin/people?q=lee&limit=2')).json();
    expect(page1.people.map((p: { email: string }) => p.email)).toEqual(['ann.lee@example.com', 'bob@example.com']);
    const page2 = (await t.admin('GET', `/api/admin/people?q=lee&limit=2&cursor=${page1.nextCursor}`)).json();
    expect(page2).toMatchObject({ people: [{ email: 'carla@example.com' }], nextCursor: null });
  });
});
