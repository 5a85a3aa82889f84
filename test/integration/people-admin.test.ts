/**
 * A person's username and names (spec claims-and-groups.md, "People"): what the admin API shows,
 * `PATCH /api/admin/people/:id` (username, names, emailVerified) with its exact errors, audit
 * entry and `person.updated` events, `PATCH /api/me`, and the account page's form. Usernames of
 * people created by an external provider too. SQLite here, PostgreSQL in unit-postgres.
 */
import { describe, expect, it } from 'vitest';
import { asc, eq } from 'drizzle-orm';
import { appBody, makeApp, type TestApp } from '../helpers/app.js';
import { expectProblem, expectValidation } from '../helpers/problem.js';
import { addMember, addPerson } from '../helpers/members.js';
import { createApplication } from '../helpers/accounts.js';
import { insertApiKey } from '../helpers/webhook-fixtures.js';
import { me, signedUpCookie } from '../helpers/self-service.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { auditLog, webhookDeliveries } from '../../server/db/schema.js';
import { many } from '../../server/db/store.js';

const T0 = new Date('2026-03-01T10:00:00.000Z');
const P = '/api/admin/people';

async function personEvents(t: TestApp) {
  const rows = await many(t.db.select({ applicationId: webhookDeliveries.applicationId, type: webhookDeliveries.type, payload: webhookDeliveries.payload }).from(webhookDeliveries).where(eq(webhookDeliveries.type, 'person.updated')).orderBy(asc(webhookDeliveries.id)));
  return rows.map((r) => ({ app: r.applicationId, data: (JSON.parse(r.payload) as { data: unknown }).data }));
}

async function audit(t: TestApp, target: string) {
  return many(t.db.select({ actor: auditLog.actor, action: auditLog.action, details: auditLog.details }).from(auditLog).where(eq(auditLog.target, target)).orderBy(asc(auditLog.at), asc(auditLog.id)));
}

describe('PATCH /api/admin/people/:id', () => {
  it('changes the username (case-insensitive, stored lower-case), names and emailVerified; answers the person', async () => {
    const t = await makeApp({ clock: T0 });
    const ann = await addPerson(t, 'ann@example.com', 'Ann');
    t.clock.advance(60_000);
    const res = await t.admin('PATCH', `${P}/${ann.id}`, { username: ' Ann.Smith ', givenName: ' Ann ', familyName: 'Smith', emailVerified: false });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: ann.id, status: 'active', email: 'ann@example.com', username: 'ann.smith', emailVerified: false, name: 'Ann', givenName: 'Ann', familyName: 'Smith',
      createdAt: T0.toISOString(), updatedAt: '2026-03-01T10:01:00.000Z', hasPassword: false, source: null, memberships: [], linkedAccounts: [], groups: [],
      secondFactor: { totp: { enabled: false, confirmedAt: null }, passkeys: { count: 0, lastUsedAt: null }, recoveryCodes: { remaining: 0, createdAt: null } },
    });
    // Null or blank clears; a change that changes nothing writes nothing.
    const cleared = await t.admin('PATCH', `${P}/${ann.id}`, { name: null, familyName: '  ' });
    expect(cleared.json()).toMatchObject({ name: null, givenName: 'Ann', familyName: null });
    expect((await t.admin('PATCH', `${P}/${ann.id}`, { username: 'ANN.SMITH', name: null })).statusCode).toBe(200);
    expect(await audit(t, ann.id)).toEqual([
      { actor: 'admin', action: 'person.updated', details: { changed: ['username', 'givenName', 'familyName', 'emailVerified'], username: { from: 'ann', to: 'ann.smith' }, emailVerified: false } },
      { actor: 'admin', action: 'person.updated', details: { changed: ['name', 'familyName'] } },
    ]);
    // One schema and one change for everything an administrator sets: status (issue 33) with names.
    const both = await t.admin('PATCH', `${P}/${ann.id}`, { status: 'disabled', familyName: 'Smith' });
    expect(both.statusCode).toBe(200);
    expect(both.json()).toMatchObject({ status: 'disabled', familyName: 'Smith' });
    expect((await audit(t, ann.id)).slice(2).map((e) => e.action)).toEqual(['person.disabled', 'person.updated']);
    // A refused part refuses the whole: the status stays as it was.
    await addPerson(t, 'bob@example.com');
    expectProblem(await t.admin('PATCH', `${P}/${ann.id}`, { status: 'active', username: 'bob' }), 409, 'username_taken');
    expect((await t.admin('GET', `${P}/${ann.id}`)).json().status).toBe('disabled');
  });

  it('answers 409 username_taken, 404 person_not_found, and 400 validation_failed naming the field', async () => {
    const t = await makeApp({ clock: T0 });
    const ann = await addPerson(t, 'ann@example.com');
    await addPerson(t, 'bob@example.com');
    const taken = expectProblem(await t.admin('PATCH', `${P}/${ann.id}`, { username: 'BOB' }), 409, 'username_taken');
    expect(taken.detail).toBe('The username "bob" belongs to someone else.');
    expect(expectProblem(await t.admin('PATCH', `${P}/usr_nope`, { name: 'X' }), 404, 'person_not_found').detail).toBe('There is no person with id "usr_nope".');

    for (const username of ['-ann', 'ann smith', 'änn', 'a'.repeat(65), '']) {
      const bad = expectValidation(await t.admin('PATCH', `${P}/${ann.id}`, { username }), ['body.username']);
      if (username.length <= 64 && username !== '') {
        expect(bad.errors).toEqual([{ path: 'body.username', message: 'must be 1 to 64 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit' }]);
      }
    }
    expectValidation(await t.admin('PATCH', `${P}/${ann.id}`, { givenName: 'x'.repeat(101) }), ['body.givenName']);
    expectValidation(await t.admin('PATCH', `${P}/${ann.id}`, { familyName: 'evil\u202Egnp.exe' }), ['body.familyName']);
    expectValidation(await t.admin('PATCH', `${P}/${ann.id}`, { name: 'x'.repeat(201) }), ['body.name']);
    expectValidation(await t.admin('PATCH', `${P}/${ann.id}`, { emailVerified: 'yes' }), ['body.emailVerified']);
    expectValidation(await t.admin('PATCH', `${P}/${ann.id}`, { email: 'x@example.com' }), ['body.email']);
    expectValidation(await t.admin('PATCH', `${P}/${ann.id}`, {}), ['body']);
    // Nothing was written by any of them.
    expect(await audit(t, ann.id)).toEqual([]);
    // 100 characters (not UTF-16 units: one emoji is one) is the most.
    expect((await t.admin('PATCH', `${P}/${ann.id}`, { givenName: '😀'.repeat(100) })).statusCode).toBe(200);

    const key = await (async () => {
      await createApplication(t);
      return insertApiKey(t.db, 'notes', ['users:write']);
    })();
    expectProblem(await t.admin('PATCH', `${P}/${ann.id}`, { name: 'X' }, { authorization: `Bearer ${key}` }), 403, 'insufficient_scope');
  });

  it('tells the webhooks of the applications the person is an active member of (person.updated)', async () => {
    const t = await makeApp({ clock: T0 });
    for (const id of ['crm', 'wiki', 'other']) {
      expect((await t.admin('POST', '/api/admin/applications', appBody({ id, name: id, audience: `https://${id}.example.com`, webhookUrl: `https://${id}.example.com/hook` }))).statusCode).toBe(201);
    }
    const { person: ann } = await addMember(t, 'crm', 'ann@example.com');
    const { membership } = await addMember(t, 'wiki', 'ann@example.com');
    expect((await t.admin('PATCH', `/api/admin/applications/wiki/users/${membership.id}`, { status: 'suspended' })).statusCode).toBe(200);
    expect((await t.admin('PATCH', `${P}/${ann.id}`, { username: 'annie', givenName: 'Ann' })).statusCode).toBe(200);
    expect(await personEvents(t)).toEqual([{
      app: 'crm',
      data: { userId: ann.id, email: 'ann@example.com', username: 'annie', emailVerified: true, name: null, givenName: 'Ann', familyName: null, changed: ['username', 'givenName'] },
    }]);
  });
});

describe('PATCH /api/me', () => {
  it('lets the person change their names (not their username), audited as them', async () => {
    const t = await makeApp({ clock: T0 });
    await createApplication(t, { authPolicy: { signup_policy: 'open' } });
    const cookie = await signedUpCookie(t, 'Ada@example.com', 'notes');
    const res = await me(t, 'PATCH', '/api/me', cookie, { givenName: 'Ada', familyName: 'Lovelace', name: 'Ada Lovelace' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const user = res.json().user;
    expect(user).toEqual({
      id: expect.stringMatching(/^usr_/), email: 'ada@example.com', emailVerified: false, username: 'ada',
      name: 'Ada Lovelace', givenName: 'Ada', familyName: 'Lovelace', createdAt: T0.toISOString(),
    });
    expect((await audit(t, user.id)).filter((e) => e.action === 'person.updated')).toEqual([
      { actor: `person:${user.id}`, action: 'person.updated', details: { changed: ['name', 'givenName', 'familyName'] } },
    ]);
    expectValidation(await me(t, 'PATCH', '/api/me', cookie, { username: 'queen' }), ['body.username']);
    expectValidation(await me(t, 'PATCH', '/api/me', cookie, { emailVerified: true }), ['body.emailVerified']);
    expectValidation(await me(t, 'PATCH', '/api/me', cookie, { familyName: 'x'.repeat(101) }), ['body.familyName']);
    expectValidation(await me(t, 'PATCH', '/api/me', cookie, {}), ['body']);
    expectProblem(await me(t, 'PATCH', '/api/me', undefined, { name: 'X' }), 401, 'unauthorized');
    expectProblem(await me(t, 'PATCH', '/api/me', cookie, { name: 'X' }, { origin: 'https://evil.example' }), 403, 'csrf_failed');
  });
});

describe('the account page', () => {
  it('shows the username and edits the names (post/redirect/get), refusing bad text in words', async () => {
    const t = await makeApp({ clock: T0 });
    await createApplication(t, { authPolicy: { signup_policy: 'open' } });
    const session = await signedUpCookie(t, 'grace@example.com', 'notes');
    const page = await openPage(t, '/account', session);
    expect(page.res.body).toContain('Your username is <strong>grace</strong>');
    expect(page.res.body).toContain('<input type="text" name="given_name" autocomplete="given-name" maxlength="100" value="">');
    const token = csrfFrom(page.res);
    const saved = await postForm(t, '/account/names', { csrf_token: token, name: 'Grace Hopper', given_name: 'Grace', family_name: 'Hopper' }, page.cookie);
    expect(saved.statusCode).toBe(303);
    expect(saved.headers.location).toBe('/account?notice=names_saved#names');
    const after = (await openPage(t, '/account?notice=names_saved', page.cookie)).res.body;
    expect(after).toContain('<p class="notice" role="status">Your name was saved.</p>');
    expect(after).toContain('name="family_name" autocomplete="family-name" maxlength="100" value="Hopper"');

    const refused = await postForm(t, '/account/names', { csrf_token: token, name: 'Grace', given_name: 'x'.repeat(101), family_name: 'Hopper' }, page.cookie);
    expect(refused.statusCode).toBe(303);
    expect(refused.headers.location).toBe('/account#names');
    const flash = refused.cookies.find((c) => c.name === 'gatehouse_flash')!.value;
    const shown = (await openPage(t, '/account', `${page.cookie}; gatehouse_flash=${flash}`)).res.body;
    expect(shown).toContain('data-error-for="names">Given name: must be at most 100 characters</p>');
    const person = (await t.admin('GET', `${P}/${(await me(t, 'PATCH', '/api/me', session, { name: 'Grace Hopper' })).json().user.id}`)).json();
    expect(person).toMatchObject({ name: 'Grace Hopper', givenName: 'Grace', familyName: 'Hopper', username: 'grace' });
  });
});
