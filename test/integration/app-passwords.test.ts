/**
 * App passwords and an application's LDAP settings (spec ldap.md, "Per application" and "People
 * bind with app passwords"): the admin API's `ldap` field and service-account password, and
 * /api/me/app-passwords with the one check every protocol calls (`verifyAppPassword`).
 */
import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication } from '../helpers/accounts.js';
import { me, signedUpCookie } from '../helpers/self-service.js';
import { expectProblem } from '../helpers/problem.js';
import { applications, appPasswords, auditLog } from '../../server/db/schema.js';
import { many, one } from '../../server/db/store.js';
import { sha256 } from '../../server/util/crypto.js';
import { verifyAppPassword } from '../../server/app-passwords/verify.js';
import { appPasswordHash } from '../../server/app-passwords/secret.js';
import { APP_PASSWORDS_PER_PERSON } from '../../server/app-passwords/service.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { PASSWORD, cookieValue, postJson, sessionCookieOf } from '../helpers/accounts.js';
import { nextStep, totpCode } from '../helpers/admins.js';
import { PERSON_DN, ldapClient, startLdapFor } from '../helpers/ldap.js';

const T0 = new Date('2026-03-01T10:00:00Z');
const PASSWORD_FORMAT = /^[a-z2-7]{5}(-[a-z2-7]{5}){5}$/;

async function ldapApp(t: TestApp, id = 'media', enabled = true) {
  return createApplication(t, {
    id, name: id === 'media' ? 'Media' : id, audience: `https://${id}.example.com`, redirectUris: [`https://${id}.example.com/cb`],
    authPolicy: { signup_policy: 'open' }, ldap: { enabled },
  });
}

const auditOf = async (t: TestApp, action: string) =>
  (await many(t.db.select().from(auditLog).where(eq(auditLog.action, action)))).map((e) => ({ actor: e.actor, applicationId: e.applicationId, target: e.target, details: e.details }));

describe('an application\'s LDAP settings (admin API)', () => {
  it('turning LDAP on answers the service account\'s password once; reads never show it; off removes it', async () => {
    const t = await makeApp({ clock: T0 });
    const created = await ldapApp(t);
    expect(created.ldap).toEqual({ enabled: true, bindDn: 'cn=media,ou=services,dc=gatehouse' });
    expect(created.ldapPassword).toMatch(/^ghl_[A-Za-z0-9_-]{43}$/);
    const row = (await one(t.db.select().from(applications).where(eq(applications.id, 'media'))))!;
    expect(row.ldapPasswordHash).toBe(sha256(created.ldapPassword));

    const read = await t.admin('GET', '/api/admin/applications/media');
    expect(read.statusCode).toBe(200);
    expect(read.json().ldap).toEqual({ enabled: true, bindDn: 'cn=media,ou=services,dc=gatehouse' });
    expect(read.body).not.toContain('ldapPassword');

    // Unchanged: no new password. Off: the hash goes. On again: a new one, shown once.
    const same = await t.admin('PATCH', '/api/admin/applications/media', { ldap: { enabled: true } });
    expect(same.statusCode).toBe(200);
    expect(same.json().ldapPassword).toBeUndefined();
    const off = await t.admin('PATCH', '/api/admin/applications/media', { ldap: { enabled: false } });
    expect(off.json().ldap.enabled).toBe(false);
    expect((await one(t.db.select().from(applications).where(eq(applications.id, 'media'))))!.ldapPasswordHash).toBeNull();
    const on = await t.admin('PATCH', '/api/admin/applications/media', { ldap: { enabled: true } });
    expect(on.json().ldapPassword).toMatch(/^ghl_/);
    expect(on.json().ldapPassword).not.toBe(created.ldapPassword);
    expect((await auditOf(t, 'application.updated')).at(-1)).toEqual({
      actor: 'admin', applicationId: 'media', target: 'media', details: { fields: ['ldap'], ldapPasswordIssued: true },
    });
  });

  it('rotates the password: 200 {bindDn, password}, audited; 409 while LDAP is off; 404 for an unknown application', async () => {
    const t = await makeApp({ clock: T0, config: { issuer: 'https://auth.home.example' } });
    const created = await ldapApp(t);
    const rotated = await t.admin('POST', '/api/admin/applications/media/ldap/password');
    expect(rotated.statusCode).toBe(200);
    expect(rotated.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(rotated.json()).toEqual({ bindDn: 'cn=media,ou=services,dc=auth,dc=home,dc=example', password: expect.stringMatching(/^ghl_[A-Za-z0-9_-]{43}$/) });
    expect(rotated.json().password).not.toBe(created.ldapPassword);
    const row = (await one(t.db.select().from(applications).where(eq(applications.id, 'media'))))!;
    expect(row.ldapPasswordHash).toBe(sha256(rotated.json().password));
    expect(await auditOf(t, 'application.ldap_password_rotated')).toEqual([{ actor: 'admin', applicationId: 'media', target: 'media', details: {} }]);

    await ldapApp(t, 'notes', false);
    expectProblem(await t.admin('POST', '/api/admin/applications/notes/ldap/password'), 409, 'ldap_not_enabled');
    expectProblem(await t.admin('POST', '/api/admin/applications/nope/ldap/password'), 404, 'application_not_found');
  });

  it('is admin-only: an API key may neither turn LDAP on nor make a password; bad settings name the field', async () => {
    const t = await makeApp({ clock: T0 });
    await ldapApp(t, 'notes', false);
    const key = (await t.admin('POST', '/api/admin/applications/notes/api-keys', { name: 'ci', scopes: ['application:read', 'application:write'] })).json().key;
    const asKey = { authorization: `Bearer ${key}` };
    expectProblem(await t.admin('PATCH', '/api/admin/applications/notes', { ldap: { enabled: true } }, asKey), 403, 'insufficient_scope');
    expectProblem(await t.admin('POST', '/api/admin/applications/notes/ldap/password', undefined, asKey), 403, 'insufficient_scope');
    // Sending the value it already has changes nothing, so a key may.
    expect((await t.admin('PATCH', '/api/admin/applications/notes', { ldap: { enabled: false } }, asKey)).statusCode).toBe(200);

    const bad = await t.admin('PATCH', '/api/admin/applications/notes', { ldap: { enabled: 'yes', port: 389 } });
    expectProblem(bad, 400, 'validation_failed');
    expect(bad.json().errors.map((e: { path: string }) => e.path).sort()).toEqual(['body.ldap.enabled', 'body.ldap.port']);
  });
});

describe('/api/me/app-passwords', () => {
  async function member(t: TestApp, email = 'ada@example.com', appId = 'media') {
    return signedUpCookie(t, email, appId);
  }

  it('makes one shown once (201, Location), lists it without the secret, and revokes it (204, then 404)', async () => {
    const t = await makeApp({ clock: T0 });
    await ldapApp(t);
    const cookie = await member(t);
    const res = await me(t, 'POST', '/api/me/app-passwords', cookie, { applicationId: 'media', name: 'Jellyfin on the TV' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(res.headers.location).toBe(`/api/me/app-passwords/${body.id}`);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(body).toEqual({
      id: expect.stringMatching(/^apw_/), name: 'Jellyfin on the TV', applicationId: 'media', applicationName: 'Media',
      createdAt: T0.toISOString(), lastUsedAt: null, password: expect.stringMatching(PASSWORD_FORMAT),
    });
    const stored = (await one(t.db.select().from(appPasswords).where(eq(appPasswords.id, body.id))))!;
    expect(stored.secretHash).toBe(appPasswordHash(body.password));
    expect(JSON.stringify(stored)).not.toContain(body.password);

    const list = await me(t, 'GET', '/api/me/app-passwords', cookie);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({ appPasswords: [{ ...body, password: undefined }] });
    expect(list.body).not.toContain(body.password);

    expect((await me(t, 'DELETE', `/api/me/app-passwords/${body.id}`, cookie)).statusCode).toBe(204);
    expectProblem(await me(t, 'DELETE', `/api/me/app-passwords/${body.id}`, cookie), 404, 'app_password_not_found');
    expect((await me(t, 'GET', '/api/me/app-passwords', cookie)).json()).toEqual({ appPasswords: [] });
    expect(await verifyAppPassword(t.app.ctx, { login: 'ada@example.com', password: body.password })).toBeNull();

    const person = stored.personId;
    expect(await auditOf(t, 'app_password.created')).toEqual([{ actor: `person:${person}`, applicationId: 'media', target: body.id, details: { name: 'Jellyfin on the TV' } }]);
    expect(await auditOf(t, 'app_password.revoked')).toEqual([{ actor: `person:${person}`, applicationId: 'media', target: body.id, details: { name: 'Jellyfin on the TV' } }]);
  });

  it('verifies by username or e-mail in any case and with or without dashes; the same null for every refusal', async () => {
    const t = await makeApp({ clock: T0 });
    await ldapApp(t);
    await ldapApp(t, 'photos');
    const cookie = await member(t);
    const { password, id } = (await me(t, 'POST', '/api/me/app-passwords', cookie, { applicationId: 'media', name: 'NAS' })).json();
    const ctx = t.app.ctx;

    const match = await verifyAppPassword(ctx, { login: 'ADA@example.com', password: password.toUpperCase().replaceAll('-', ' ') });
    expect(match && { person: match.person.email, application: match.application.id, appPasswordId: match.appPasswordId }).toEqual({
      person: 'ada@example.com', application: 'media', appPasswordId: id,
    });
    expect(await verifyAppPassword(ctx, { applicationId: 'media', login: 'ada@example.com', password: password.replaceAll('-', '') })).not.toBeNull();
    // Wrong name, wrong application, wrong password, unknown name: all null.
    expect(await verifyAppPassword(ctx, { login: 'bob@example.com', password })).toBeNull();
    expect(await verifyAppPassword(ctx, { applicationId: 'photos', login: 'ada@example.com', password })).toBeNull();
    expect(await verifyAppPassword(ctx, { login: 'ada@example.com', password: `${password}x` })).toBeNull();
    expect(await verifyAppPassword(ctx, { login: 'nobody@example.com', password: 'x'.repeat(10_000) })).toBeNull();

    // Last use: written at the first use, then at most once a minute.
    const lastUsed = async () => (await one(t.db.select().from(appPasswords).where(eq(appPasswords.id, id))))!.lastUsedAt?.toISOString();
    expect(await lastUsed()).toBe(T0.toISOString());
    t.clock.advance(30_000);
    await verifyAppPassword(ctx, { login: 'ada@example.com', password });
    expect(await lastUsed()).toBe(T0.toISOString());
    t.clock.advance(31_000);
    await verifyAppPassword(ctx, { login: 'ada@example.com', password });
    expect(await lastUsed()).toBe(new Date(T0.getTime() + 61_000).toISOString());
    expect((await me(t, 'GET', '/api/me/app-passwords', cookie)).json().appPasswords[0].lastUsedAt).toBe(new Date(T0.getTime() + 61_000).toISOString());

    // A suspended membership, or LDAP turned off, stops it; back on, it works again.
    const userId = (await one(t.db.select().from(appPasswords).where(eq(appPasswords.id, id))))!.personId;
    const membership = (await t.admin('GET', '/api/admin/applications/media/users')).json().users.find((u: { userId: string }) => u.userId === userId);
    await t.admin('PATCH', `/api/admin/applications/media/users/${membership.id}`, { status: 'suspended' });
    expect(await verifyAppPassword(ctx, { login: 'ada@example.com', password })).toBeNull();
    await t.admin('PATCH', `/api/admin/applications/media/users/${membership.id}`, { status: 'active' });
    expect(await verifyAppPassword(ctx, { login: 'ada@example.com', password })).not.toBeNull();
    await t.admin('PATCH', '/api/admin/applications/media', { ldap: { enabled: false } });
    expect(await verifyAppPassword(ctx, { login: 'ada@example.com', password })).toBeNull();
    await t.admin('PATCH', '/api/admin/applications/media', { ldap: { enabled: true } });
    expect(await verifyAppPassword(ctx, { login: 'ada@example.com', password })).not.toBeNull();

    // A disabled person signs in nowhere, with app passwords neither.
    expect((await t.admin('PATCH', `/api/admin/people/${userId}`, { status: 'disabled' })).statusCode).toBe(200);
    expect(await verifyAppPassword(ctx, { login: 'ada@example.com', password })).toBeNull();
    expect((await t.admin('PATCH', `/api/admin/people/${userId}`, { status: 'active' })).statusCode).toBe(200);
    expect(await verifyAppPassword(ctx, { login: 'ada@example.com', password })).not.toBeNull();

    // Removing the member removes their app passwords (purge plan).
    expect((await t.admin('DELETE', `/api/admin/applications/media/users/${membership.id}`)).statusCode).toBe(204);
    await expect.poll(async () => (await many(t.db.select().from(appPasswords).where(and(eq(appPasswords.personId, userId), eq(appPasswords.applicationId, 'media'))))).length, { timeout: 30_000 }).toBe(0);
    expect(await verifyAppPassword(ctx, { login: 'ada@example.com', password })).toBeNull();
  });

  it('refuses what it must, each with its own code', async () => {
    const t = await makeApp({ clock: T0 });
    await ldapApp(t);
    await ldapApp(t, 'notes', false);
    await ldapApp(t, 'photos');
    const cookie = await member(t);
    // Not a member (photos), an unknown application, LDAP off (notes: joined by its open sign-up).
    expectProblem(await me(t, 'POST', '/api/me/app-passwords', cookie, { applicationId: 'photos', name: 'x' }), 404, 'membership_not_found');
    expectProblem(await me(t, 'POST', '/api/me/app-passwords', cookie, { applicationId: 'nope', name: 'x' }), 404, 'membership_not_found');
    const notesCookie = await signedUpCookie(t, 'bo@example.com', 'notes');
    expectProblem(await me(t, 'POST', '/api/me/app-passwords', notesCookie, { applicationId: 'notes', name: 'x' }), 409, 'app_passwords_not_accepted');
    // Bad bodies name their fields.
    const bad = await me(t, 'POST', '/api/me/app-passwords', cookie, { applicationId: 'media', name: '', colour: 'red' });
    expectProblem(bad, 400, 'validation_failed');
    expect(bad.json().errors.map((e: { path: string }) => e.path).sort()).toEqual(['body.colour', 'body.name']);
    // Without a session: 401; a cross-site write: 403.
    expectProblem(await me(t, 'POST', '/api/me/app-passwords', undefined, { applicationId: 'media', name: 'x' }), 401, 'unauthorized');
    expectProblem(await me(t, 'POST', '/api/me/app-passwords', cookie, { applicationId: 'media', name: 'x' }, { origin: 'https://evil.example' }), 403, 'csrf_failed');
    // A session whose sign-in is older than 10 minutes must sign in again first.
    t.clock.advance(11 * 60_000);
    expectProblem(await me(t, 'POST', '/api/me/app-passwords', cookie, { applicationId: 'media', name: 'x' }), 403, 'reauthentication_required');
  });

  it(`stops at ${APP_PASSWORDS_PER_PERSON} per person (409 app_password_limit)`, async () => {
    const t = await makeApp({ clock: T0 });
    await ldapApp(t);
    const cookie = await member(t);
    for (let i = 0; i < APP_PASSWORDS_PER_PERSON; i++) {
      expect((await me(t, 'POST', '/api/me/app-passwords', cookie, { applicationId: 'media', name: `device ${i}` })).statusCode).toBe(201);
    }
    expectProblem(await me(t, 'POST', '/api/me/app-passwords', cookie, { applicationId: 'media', name: 'one more' }), 409, 'app_password_limit');
    expect((await me(t, 'GET', '/api/me/app-passwords', cookie)).json().appPasswords).toHaveLength(APP_PASSWORDS_PER_PERSON);
  });
});

describe('an application that requires a second factor (H9)', () => {
  /** Vault: LDAP on, open sign-up, `mfa: "required"`; Ada signed up to it with a password only. */
  async function vault() {
    const t = await makeApp({ clock: T0 });
    await createApplication(t, {
      id: 'vault', name: 'Vault', audience: 'https://vault.example.com', redirectUris: ['https://vault.example.com/cb'],
      authPolicy: { signup_policy: 'open', mfa: 'required' }, ldap: { enabled: true },
    });
    const passwordOnly = await signedUpCookie(t, 'ada@example.com', 'vault');
    return { t, passwordOnly };
  }

  /** Ada sets up TOTP from her session (which stays password-only); its secret. */
  async function enrolTotp(t: TestApp, cookie: string): Promise<string> {
    const started = await me(t, 'POST', '/api/me/totp', cookie);
    expect(started.statusCode, started.body).toBe(200);
    const { secret } = started.json() as { secret: string };
    expect((await me(t, 'POST', '/api/me/totp/confirm', cookie, { code: totpCode(secret, t.clock.now()) })).statusCode).toBe(200);
    nextStep(t);
    return secret;
  }

  it('refuses an app password to a password-only session (403 step_up_required); signed in with the second factor, it is made and binds over LDAP', async () => {
    const { t, passwordOnly } = await vault();
    const refused = expectProblem(await me(t, 'POST', '/api/me/app-passwords', passwordOnly, { applicationId: 'vault', name: 'NAS' }), 403, 'step_up_required');
    expect(refused.detail).toBe('"Vault" requires a second factor: sign in with your second factor on this device (or set one up), then make the app password.');
    // Setting up a factor does not make this session multi-factor.
    const secret = await enrolTotp(t, passwordOnly);
    expectProblem(await me(t, 'POST', '/api/me/app-passwords', passwordOnly, { applicationId: 'vault', name: 'NAS' }), 403, 'step_up_required');
    expect(await many(t.db.select().from(appPasswords))).toEqual([]);

    // Signed in with password and TOTP: made, and it binds.
    const first = await postJson(t, '/api/auth/sign-in/email', { email: 'ada@example.com', password: PASSWORD, applicationId: 'vault' });
    expect(first.json().secondFactor.methods).toContain('totp');
    const second = await postJson(t, '/api/auth/second-factor/totp', { code: totpCode(secret, t.clock.now()) }, { cookie: `gatehouse_mfa=${cookieValue(first, 'gatehouse_mfa')}` });
    expect(second.statusCode, second.body).toBe(200);
    const multiFactor = `gatehouse_session=${sessionCookieOf(second)}`;
    const made = await me(t, 'POST', '/api/me/app-passwords', multiFactor, { applicationId: 'vault', name: 'NAS' });
    expect(made.statusCode, made.body).toBe(201);
    const { url } = await startLdapFor(t);
    const client = ldapClient(url);
    await client.bind(PERSON_DN('ada'), made.json().password);
    expect((await client.exop('1.3.6.1.4.1.4203.1.11.3')).value).toBe(`dn:${PERSON_DN('ada')}`);
    await client.unbind();
  });

  it('the account page sends a password-only session through the step-up, then makes it', async () => {
    const { t, passwordOnly } = await vault();
    const secret = await enrolTotp(t, passwordOnly);
    const { res: page, cookie } = await openPage(t, '/account', passwordOnly);
    const token = csrfFrom(page);
    const asked = await postForm(t, '/account/app-passwords', { csrf_token: token, application_id: 'vault', name: 'NAS' }, cookie);
    expect(asked.statusCode).toBe(303);
    expect(asked.headers.location).toBe('/sign-in/second-factor');
    expect(await many(t.db.select().from(appPasswords))).toEqual([]);
    // The step-up raises this session; it comes back to the section, where the form now works.
    const mfa = cookieValue(asked, 'gatehouse_mfa');
    const raised = await postJson(t, '/api/auth/second-factor/totp', { code: totpCode(secret, t.clock.now()) }, { cookie: `${cookie}; gatehouse_mfa=${mfa}` });
    expect(raised.statusCode, raised.body).toBe(200);
    const made = await postForm(t, '/account/app-passwords', { csrf_token: token, application_id: 'vault', name: 'NAS' }, cookie);
    expect(made.statusCode).toBe(200);
    expect(/<code data-app-password>([^<]+)<\/code>/.exec(made.body)?.[1]).toMatch(PASSWORD_FORMAT);
  });
});

describe('the account page\'s app passwords', () => {
  it('lists them, makes one (shown once on its own page) and revokes it; absent for people whose applications take none', async () => {
    const t = await makeApp({ clock: T0 });
    await ldapApp(t);
    await ldapApp(t, 'notes', false);
    const session = await signedUpCookie(t, 'ada@example.com', 'media');
    const { res: page, cookie } = await openPage(t, '/account', session);
    expect(page.body).toContain('<h2 id="app-passwords-h">App passwords</h2>');
    expect(page.body).toMatch(/<select name="application_id" required>\s*<option value="media">Media<\/option>\s*<\/select>/);
    const token = csrfFrom(page);

    const made = await postForm(t, '/account/app-passwords', { csrf_token: token, application_id: 'media', name: 'Jellyfin <TV>' }, cookie);
    expect(made.statusCode).toBe(200);
    expect(made.headers['cache-control']).toBe('no-store');
    const password = /<code data-app-password>([^<]+)<\/code>/.exec(made.body)?.[1];
    expect(password).toMatch(PASSWORD_FORMAT);
    expect(made.body).toContain('Use this as the password for “Jellyfin &lt;TV&gt;” (Media):');
    expect(made.body).toContain('<li><code>ada@example.com</code></li>');
    expect(await verifyAppPassword(t.app.ctx, { login: 'ada@example.com', password: password! })).not.toBeNull();

    const listed = (await openPage(t, '/account', session)).res.body;
    const id = /data-app-password="(apw_[^"]+)"/.exec(listed)?.[1];
    expect(listed).toContain('<strong>Jellyfin &lt;TV&gt;</strong><div class="muted">Media · made 2026-03-01 10:00 UTC · last used 2026-03-01 10:00 UTC</div>');
    expect(listed).not.toContain(password);

    // A refusal comes back to the section; an empty name is one.
    const refused = await postForm(t, '/account/app-passwords', { csrf_token: token, application_id: 'media', name: '  ' }, cookie);
    expect(refused.statusCode).toBe(303);
    expect(refused.headers.location).toBe('/account#app-passwords');

    const revoked = await postForm(t, `/account/app-passwords/${id}/revoke`, { csrf_token: token }, cookie);
    expect(revoked.statusCode).toBe(303);
    expect(revoked.headers.location).toBe('/account?notice=app_password_revoked#app-passwords');
    expect(await verifyAppPassword(t.app.ctx, { login: 'ada@example.com', password: password! })).toBeNull();
    // Without the CSRF token nothing happens.
    expect((await postForm(t, '/account/app-passwords', { application_id: 'media', name: 'x' }, cookie)).statusCode).toBe(403);

    const other = await signedUpCookie(t, 'bo@example.com', 'notes');
    expect((await openPage(t, '/account', other)).res.body).not.toContain('id="app-passwords"');
  });
});
