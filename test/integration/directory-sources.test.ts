/**
 * Directory sources against Debian's slapd (spec directory-sources.md): started once for the file
 * from a configuration in a temporary directory (test/helpers/slapd.ts), with ldaps:// and
 * StartTLS under a test CA, 300 people and groupOfNames, groupOfUniqueNames and posixGroup groups
 * (one nesting two others). One app for the file; the tests run in order and build on each other
 * (connect, test, sync, sign in, conflicts, removal), as an administrator would.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Client } from 'ldapts';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication, postJson, sessionCookieOf } from '../helpers/accounts.js';
import { expectProblem, expectValidation } from '../helpers/problem.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { ADMIN_DN, ADMIN_PASSWORD, GROUPS_BASE, PEOPLE_BASE, groupDn, passwordOf, personDn, personLdif, startSlapd, userName, type Slapd } from '../helpers/slapd.js';
import { freePort } from '../helpers/free-port.js';
import { directorySources, people, signInBackOff, webhookDeliveries, sessions } from '../../server/db/schema.js';
import { addressKey } from '../../server/accounts/device-cookie.js';
import { Attribute, Change } from 'ldapts';
import { many, one } from '../../server/db/store.js';
import { runFinished } from '../../server/directory-sources/runs.js';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

let slapd: Slapd;
let t: TestApp;
let ldap: Client;
let sourceId: string;

/** Entries the generated data does not have: a huge one, one without e-mail, one with a username Gatehouse cannot keep. */
const HOSTILE_LDIF = [
  personLdif(901, 'huge', [`description: ${'x'.repeat(10)}`]).replace(/displayName: .*/, `displayName: ${'A'.repeat(70 * 1024)}`),
  ['dn: uid=nomail,' + PEOPLE_BASE, 'objectClass: inetOrgPerson', 'uid: nomail', 'cn: No Mail', 'sn: Mail', 'userPassword: x', ''].join('\n'),
  ['dn: uid=Bad User!,' + PEOPLE_BASE, 'objectClass: inetOrgPerson', 'uid: Bad User!', 'cn: Bad', 'sn: User', 'mail: bad@example.org', ''].join('\n'),
].join('\n');

beforeAll(async () => {
  slapd = await startSlapd({ people: 300, extraLdif: HOSTILE_LDIF });
  ldap = await slapd.admin();
  t = await makeApp({ perFile: true });
  await createApplication(t, { id: 'wiki', audience: 'https://wiki.example.com', redirectUris: ['https://wiki.example.com/cb'], webhookUrl: 'https://hooks.example.com/wiki' });
}, 60_000);

afterAll(async () => {
  await slapd?.stop();
});

const api = '/api/admin/directory-sources';

function sourceBody(overrides: Record<string, unknown> = {}) {
  return {
    name: 'Example LDAP', kind: 'ldap', url: slapd.ldapsUrl, caCertificate: slapd.caPem,
    bindDn: ADMIN_DN, bindPassword: ADMIN_PASSWORD, peopleBase: PEOPLE_BASE, groupsBase: GROUPS_BASE,
    syncIntervalMinutes: null, applications: ['wiki'], ...overrides,
  };
}

/** Starts a run and waits for it to end; returns the run record. */
async function sync(id = sourceId, body: Record<string, unknown> = {}) {
  const started = await t.admin('POST', `${api}/${id}/sync`, body);
  expect(started.statusCode, started.body).toBe(202);
  await runFinished(id);
  const run = await t.admin('GET', `${api}/${id}/runs/${started.json().run.id}`);
  expect(run.statusCode).toBe(200);
  return run.json();
}

const change = (operation: 'add' | 'replace' | 'delete', type: string, value: string) => new Change({ operation, modification: new Attribute({ type, values: [value] }) });

async function personByUsername(username: string) {
  return one(t.db.select().from(people).where(eq(people.username, username)));
}

describe('sources', () => {
  it('connects a source: 201, the bind password sealed and never answered, the kind\'s defaults', async () => {
    const res = await t.admin('POST', api, sourceBody());
    expect(res.statusCode, res.body).toBe(201);
    const source = res.json();
    sourceId = source.id;
    expect(res.headers.location).toBe(`${api}/${source.id}`);
    expect(source).toMatchObject({
      name: 'Example LDAP', kind: 'ldap', url: slapd.ldapsUrl, startTls: true, allowPlain: false, bindDn: ADMIN_DN, bindPasswordSet: true,
      peopleFilter: '(objectClass=inetOrgPerson)', groupsFilter: '(|(objectClass=groupOfNames)(objectClass=groupOfUniqueNames)(objectClass=posixGroup))',
      attributes: { id: 'entryUUID', username: 'uid', email: 'mail', name: 'displayName', givenName: 'givenName', familyName: 'sn', groupName: 'cn', members: ['member', 'uniqueMember', 'memberUid'], nestedMembers: false },
      status: 'ok', lastSyncAt: null, lastError: null, people: 0, applications: ['wiki'],
    });
    expect(res.body).not.toContain(ADMIN_PASSWORD);
    expect(source).not.toHaveProperty('bindPassword');
    const stored = await many(t.db.select().from(directorySources));
    expect(stored).toHaveLength(1);
    expect(stored[0]!.bindPasswordSealed).toMatch(/^v1\./);
    expect(JSON.stringify(stored)).not.toContain(ADMIN_PASSWORD);
    const ad = await t.admin('POST', api, sourceBody({ name: 'AD', kind: 'active_directory', peopleBase: 'CN=Users,DC=corp,DC=example' }));
    expect(ad.json()).toMatchObject({ attributes: { id: 'objectGUID', username: 'sAMAccountName', members: ['member'], nestedMembers: true }, peopleFilter: '(&(objectCategory=person)(objectClass=user))', groupsFilter: '(objectClass=group)' });
    expect((await t.admin('DELETE', `${api}/${ad.json().id}`)).statusCode).toBe(204);
    const audit = await t.admin('GET', '/api/admin/audit-log?action=directory_source.created');
    expect(audit.body).not.toContain(ADMIN_PASSWORD);
  });

  it('refuses what cannot work, every mistake at once: plain LDAP off this machine, bad filters, unknown applications', async () => {
    expectValidation(await t.admin('POST', api, sourceBody({ url: 'ldap://directory.example.com', startTls: false })), ['body.url']);
    expectValidation(await t.admin('POST', api, sourceBody({ url: 'https://directory.example.com' })), ['body.url']);
    expectValidation(await t.admin('POST', api, sourceBody({ peopleFilter: 'objectClass=person', groupsFilter: '(&(a=b)', applications: ['nope'] })), ['body.peopleFilter', 'body.groupsFilter', 'body.applications']);
    expectValidation(await t.admin('POST', api, sourceBody({ caCertificate: 'not a certificate' })), ['body.caCertificate']);
    expectValidation(await t.admin('POST', api, sourceBody({ attributes: { username: 'uid)(x' } })), ['body.attributes.username']);
    expectValidation(await t.admin('POST', api, sourceBody({ syncIntervalMinutes: 2 })), ['body.syncIntervalMinutes']);
    // Plain to loopback is allowed, and anywhere with allowPlain.
    const plain = await t.admin('POST', api, sourceBody({ url: slapd.url, startTls: false }));
    expect(plain.statusCode).toBe(201);
    expect((await t.admin('DELETE', `${api}/${plain.json().id}`)).statusCode).toBe(204);
    expectProblem(await t.admin('GET', `${api}/dsrc_nope`), 404, 'directory_source_not_found');
  });

  it('tests a source step by step: connect, TLS, bind, counts, mapped samples and a username lookup', async () => {
    const res = await t.admin('POST', `${api}/${sourceId}/test`, { username: 'user0007' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.steps).toEqual(['connect', 'tls', 'bind', 'people', 'groups', 'lookup'].map((step) => ({ step, ok: true })));
    expect(body).toMatchObject({ ok: true, people: 303, groups: 4 });
    expect(body.sample).toHaveLength(5);
    expect(body.sample[0]).toMatchObject({ dn: personDn('user0001'), skipped: null, person: { username: 'user0001', email: 'user0001@example.org', name: 'Person Number 1', givenName: 'Given1', familyName: 'Family1', disabled: false } });
    expect(body.lookup).toMatchObject({ found: true, person: { dn: personDn('user0007'), username: 'user0007' } });
    // A filter-injection attempt is an assertion value, not more filter: nothing matches.
    const injected = await t.admin('POST', `${api}/${sourceId}/test`, { username: '*)(uid=*' });
    expect(injected.json()).toMatchObject({ ok: true, lookup: { found: false } });
  });

  it('says which step failed and why, never a 5xx: wrong CA, wrong service password, StartTLS under the wrong CA, nothing listening', async () => {
    const wrongCa = await t.admin('POST', api, sourceBody({ name: 'Wrong CA', caCertificate: slapd.otherCaPem }));
    const id = wrongCa.json().id;
    const res = await t.admin('POST', `${api}/${id}/test`, {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, steps: [{ step: 'connect', ok: true }, { step: 'tls', ok: false }] });
    expect(res.json().steps[1].error).toMatch(/is not trusted/);
    expect((await t.admin('GET', `${api}/${id}`)).json()).toMatchObject({ status: 'unreachable' });

    await t.admin('PATCH', `${api}/${id}`, { caCertificate: slapd.caPem, bindPassword: 'wrong-password' });
    const bind = (await t.admin('POST', `${api}/${id}/test`, {})).json();
    expect(bind).toMatchObject({ ok: false, steps: [{ step: 'connect', ok: true }, { step: 'tls', ok: true }, { step: 'bind', ok: false }] });
    expect(bind.steps[2].error).toMatch(/refused the service account/);

    await t.admin('PATCH', `${api}/${id}`, { url: slapd.url, startTls: true, caCertificate: slapd.otherCaPem, bindPassword: ADMIN_PASSWORD });
    const startTls = (await t.admin('POST', `${api}/${id}/test`, {})).json();
    expect(startTls).toMatchObject({ ok: false, steps: [{ step: 'connect', ok: true }, { step: 'tls', ok: false }] });

    await t.admin('PATCH', `${api}/${id}`, { url: `ldaps://127.0.0.1:${await freePort()}`, caCertificate: slapd.caPem });
    const closed = (await t.admin('POST', `${api}/${id}/test`, {})).json();
    expect(closed).toMatchObject({ ok: false, steps: [{ step: 'connect', ok: false }] });
    expect(closed.steps[0].error).toMatch(/refused the connection/);
    expect((await t.admin('DELETE', `${api}/${id}`)).statusCode).toBe(204);
  });

  it('gives up on a source that accepts the connection and then says nothing, after 5 s', async () => {
    const silent: Server = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const created = await t.admin('POST', api, sourceBody({ name: 'Hangs', url: `ldaps://127.0.0.1:${port}` }));
      const started = Date.now();
      const res = await t.admin('POST', `${api}/${created.json().id}/test`, {});
      expect(Date.now() - started).toBeLessThan(9000);
      expect(res.json()).toMatchObject({ ok: false, steps: [{ step: 'connect', ok: true }, { step: 'tls', ok: false }] });
      expect(res.json().steps[1].error).toMatch(/did not finish the TLS handshake in 5 s/);
      await t.admin('DELETE', `${api}/${created.json().id}`);
    } finally {
      silent.close();
    }
  });
});

describe('sync', () => {
  it('mirrors people and groups: created with the source set, members of the source\'s applications, entries it cannot keep skipped with their reasons', async () => {
    const run = await sync();
    expect(run).toMatchObject({ state: 'succeeded', full: true, trigger: 'manual', counts: { created: 300, updated: 0, disabled: 0, enabled: 0, skipped: 3, conflicts: 0 }, conflicts: [], error: null });
    const reasons = Object.fromEntries(run.skipped.map((s: { dn: string; reason: string }) => [s.dn, s.reason]));
    expect(reasons).toEqual({
      [personDn('huge')]: 'the entry is larger than 64 KB',
      [personDn('nomail')]: 'no mail (the e-mail address)',
      [personDn('Bad User!')]: 'the username "bad user!" is not valid here (a-z, 0-9, . _ -, at most 64)',
    });
    const person = await personByUsername('user0003');
    const res = await t.admin('GET', `/api/admin/people/${person!.id}`);
    expect(res.json()).toMatchObject({
      email: 'user0003@example.org', username: 'user0003', name: 'Person Number 3', givenName: 'Given3', familyName: 'Family3', emailVerified: true,
      status: 'active', hasPassword: false, source: { id: sourceId, dn: personDn('user0003') },
      groups: [{ id: 'admins' }, { id: 'everyone' }, { id: 'staff' }],
      memberships: [{ applicationId: 'wiki', status: 'active', role: 'member' }],
    });
    const sizes: Record<string, number> = {};
    for (const id of ['staff', 'admins', 'posix', 'everyone']) {
      const group = await t.admin('GET', `/api/admin/groups/${id}`);
      expect(group.json()).toMatchObject({ id, source: { id: sourceId, dn: groupDn(id) } });
      sizes[id] = (await t.admin('GET', `/api/admin/groups/${id}/members?limit=200`)).json().members.length;
    }
    // everyone = staff (1–50) ∪ admins (1–5) ∪ user0060: nesting flattened.
    expect(sizes).toEqual({ staff: 50, admins: 5, posix: 5, everyone: 51 });
    const source = (await t.admin('GET', `${api}/${sourceId}`)).json();
    expect(source).toMatchObject({ status: 'ok', people: 300, lastError: null });
    expect(source.lastSyncAt).not.toBeNull();
  });

  it('writes nothing on an unchanged run', async () => {
    const run = await sync();
    expect(run.counts).toEqual({ created: 0, updated: 0, disabled: 0, enabled: 0, skipped: 3, conflicts: 0 });
  });

  it('keeps source fields and groups read-only here: 409 managed_by_source', async () => {
    const person = await personByUsername('user0004');
    expectProblem(await t.admin('PATCH', `/api/admin/people/${person!.id}`, { username: 'someone' }), 409, 'managed_by_source');
    expectProblem(await t.admin('PATCH', `/api/admin/people/${person!.id}`, { givenName: 'X' }), 409, 'managed_by_source');
    expectProblem(await t.admin('PATCH', '/api/admin/groups/staff', { name: 'Renamed' }), 409, 'managed_by_source');
    expectProblem(await t.admin('DELETE', '/api/admin/groups/staff'), 409, 'managed_by_source');
    expectProblem(await t.admin('PUT', `/api/admin/groups/posix/members/${person!.id}`), 409, 'managed_by_source');
    expectProblem(await t.admin('DELETE', `/api/admin/groups/staff/members/${person!.id}`), 409, 'managed_by_source');
    // Gatehouse's own settings of the person stay Gatehouse's.
    expect((await t.admin('PATCH', `/api/admin/people/${person!.id}`, { emailVerified: true })).statusCode).toBe(200);
  });

  it('follows a change at the source: a new display name updates the person', async () => {
    await ldap.modify(personDn('user0005'), [change('replace', 'displayName', 'Renamed Five')]);
    const run = await sync();
    expect(run.counts).toMatchObject({ created: 0, updated: 1, disabled: 0 });
    expect((await personByUsername('user0005'))!.name).toBe('Renamed Five');
  });
});

describe('signing in with the source\'s password', () => {
  it('signs in by username and by e-mail by binding as the person; a wrong password is 401 invalid_credentials', async () => {
    const ok = await postJson(t, '/api/auth/sign-in/username', { username: 'user0010', password: passwordOf('user0010') });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().user).toMatchObject({ username: 'user0010', email: 'user0010@example.org' });
    const byEmail = await postJson(t, '/api/auth/sign-in/email', { email: 'USER0010@example.org', password: passwordOf('user0010'), applicationId: 'wiki' });
    expect(byEmail.statusCode).toBe(200);
    expectProblem(await postJson(t, '/api/auth/sign-in/username', { username: 'user0010', password: 'wrong' }), 401, 'invalid_credentials');
    // An empty password would be an unauthenticated bind (RFC 4513 §5.1.2): never a sign-in.
    expectProblem(await postJson(t, '/api/auth/sign-in/username', { username: 'user0010', password: ' ' }), 401, 'invalid_credentials');
  });

  it('the hosted sign-in takes a username in its one field', async () => {
    const page = await openPage(t, '/sign-in');
    expect(page.res.body).toContain('E-mail or username');
    const res = await postForm(t, '/sign-in', { csrf_token: csrfFrom(page.res), email: 'user0011', password: passwordOf('user0011'), return_to: '/account' }, page.cookie);
    expect(res.statusCode).toBe(303);
    expect(sessionCookieOf(res)).toBeTruthy();
  });

  it('refuses filter-injection usernames as unknown (401), never a match or a 500', async () => {
    for (const username of ['*', '*)(uid=*', 'user0010)(|(uid=*', 'user0010\\2a', 'user\u0000', '(objectClass=*)']) {
      expectProblem(await postJson(t, '/api/auth/sign-in/username', { username, password: passwordOf('user0010') }), 401, 'invalid_credentials');
    }
  });

  it('signs in someone new to the source before the next sync, created then', async () => {
    await ldap.add(personDn('newcomer'), { objectClass: 'inetOrgPerson', uid: 'newcomer', cn: 'New Comer', sn: 'Comer', mail: 'newcomer@example.org', userPassword: 'newcomer-pass-1' });
    const res = await postJson(t, '/api/auth/sign-in/username', { username: 'newcomer', password: 'newcomer-pass-1', applicationId: 'wiki' });
    expect(res.statusCode, res.body).toBe(200);
    const person = await personByUsername('newcomer');
    expect(person).toMatchObject({ sourceId, sourceDn: personDn('newcomer'), passwordHash: null, status: 'active' });
    // The next run knows them: nothing created twice.
    expect((await sync()).counts).toMatchObject({ created: 0 });
  });

  it('refuses a password reset or change for source people: 409 managed_by_source', async () => {
    const person = await personByUsername('user0010');
    expectProblem(await t.admin('POST', `/api/admin/people/${person!.id}/password-reset`), 409, 'managed_by_source');
    const signedIn = await postJson(t, '/api/auth/sign-in/username', { username: 'user0010', password: passwordOf('user0010') });
    const cookie = `gatehouse_session=${sessionCookieOf(signedIn)}`;
    const change = await postJson(t, '/api/me/password', { currentPassword: passwordOf('user0010'), newPassword: 'a brand new password 9' }, { cookie });
    expectProblem(change, 409, 'managed_by_source');
  });
});

describe('conflicts', () => {
  it('lists an entry whose e-mail a local person has, leaves that person alone, and links them only on the administrator\'s word', async () => {
    const local = await t.admin('POST', '/api/admin/people', { email: 'clash@example.org', password: 'a long local password 1' });
    expect(local.statusCode).toBe(201);
    await ldap.add(personDn('clash'), { objectClass: 'inetOrgPerson', uid: 'clash', cn: 'Clash', sn: 'Clash', mail: 'clash@example.org', userPassword: 'clash-source-pass' });
    const run = await sync();
    expect(run.counts).toMatchObject({ created: 0, conflicts: 1 });
    expect(run.conflicts).toEqual([{ dn: personDn('clash'), email: 'clash@example.org', username: 'clash' }]);
    const untouched = (await t.admin('GET', `/api/admin/people/${local.json().id}`)).json();
    expect(untouched).toMatchObject({ source: null, hasPassword: true });
    // Their own password still works until the link.
    expect((await postJson(t, '/api/auth/sign-in/email', { email: 'clash@example.org', password: 'a long local password 1' })).statusCode).toBe(200);

    const link = await t.admin('POST', `/api/admin/people/${local.json().id}/directory-link`, { sourceId });
    expect(link.statusCode, link.body).toBe(200);
    expect(link.json()).toMatchObject({ source: { id: sourceId, dn: personDn('clash') }, hasPassword: false, username: 'clash', memberships: [{ applicationId: 'wiki' }] });
    expectProblem(await postJson(t, '/api/auth/sign-in/email', { email: 'clash@example.org', password: 'a long local password 1' }), 401, 'invalid_credentials');
    expect((await postJson(t, '/api/auth/sign-in/email', { email: 'clash@example.org', password: 'clash-source-pass' })).statusCode).toBe(200);
    expect((await sync()).counts).toMatchObject({ conflicts: 0, created: 0 });
    expectProblem(await t.admin('POST', `/api/admin/people/${local.json().id}/directory-link`, { sourceId }), 409, 'managed_by_source');
    const nobody = await t.admin('POST', '/api/admin/people', { email: 'nobody@example.org', password: 'a long local password 1' });
    expectProblem(await t.admin('POST', `/api/admin/people/${nobody.json().id}/directory-link`, { sourceId }), 409, 'directory_entry_not_found');
  });
});

describe('removal', () => {
  it('disables people gone from the source, ending their sessions, and says so to the applications (person.disabled)', async () => {
    const signedIn = await postJson(t, '/api/auth/sign-in/username', { username: 'user0020', password: passwordOf('user0020') });
    const cookie = sessionCookieOf(signedIn);
    await ldap.del(personDn('user0020'));
    const run = await sync();
    expect(run.counts).toMatchObject({ disabled: 1, created: 0 });
    const person = await personByUsername('user0020');
    expect(person!.status).toBe('disabled');
    const live = await many(t.db.select().from(sessions).where(eq(sessions.personId, person!.id)));
    expect(live.every((s) => s.revokedAt !== null)).toBe(true);
    const me = await t.app.inject({ method: 'GET', url: '/api/me/sessions', headers: { cookie: `gatehouse_session=${cookie}` } });
    expect(me.statusCode).toBe(401);
    const events = await many(t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.type, 'person.disabled')));
    expect(events.map((e) => JSON.parse(e.payload).data)).toContainEqual({ userId: person!.id, email: 'user0020@example.org', username: 'user0020', reason: 'gone from the source' });
    // Back at the source: active again.
    await ldap.add(personDn('user0020'), { objectClass: 'inetOrgPerson', uid: 'user0020', cn: 'Person 20', sn: 'Family20', mail: 'user0020@example.org', userPassword: passwordOf('user0020') });
    const back = await sync();
    // A new entry (a new entryUUID) with the same address as the disabled person: a conflict, linked by an administrator.
    expect(back.counts).toMatchObject({ conflicts: 1 });
  });

  it('disables people the disabled filter names, and enables them when it no longer does', async () => {
    await t.admin('PATCH', `${api}/${sourceId}`, { disabledFilter: '(employeeType=left)' });
    await ldap.modify(personDn('user0030'), [change('add', 'employeeType', 'left')]);
    expect((await sync()).counts).toMatchObject({ disabled: 1 });
    expect((await personByUsername('user0030'))!.status).toBe('disabled');
    await ldap.modify(personDn('user0030'), [change('delete', 'employeeType', 'left')]);
    expect((await sync()).counts).toMatchObject({ enabled: 1, disabled: 0 });
    expect((await personByUsername('user0030'))!.status).toBe('active');
  });

  it('stops a run that would disable more than 20 % of the source\'s people, disabling no one', async () => {
    await t.admin('PATCH', `${api}/${sourceId}`, { peopleFilter: '(&(objectClass=inetOrgPerson)(uid=user00*))' });
    const run = await sync();
    expect(run.state).toBe('failed');
    expect(run.error).toMatch(/^This run would disable 2\d\d of the 30\d people of Example LDAP \(more than 20 %\), so it stopped and disabled no one\./);
    expect(run.counts.disabled).toBe(0);
    expect((await personByUsername('user0150'))!.status).toBe('active');
    expect((await t.admin('GET', `${api}/${sourceId}`)).json()).toMatchObject({ status: 'ok', lastError: run.error });
    await t.admin('PATCH', `${api}/${sourceId}`, { peopleFilter: '(objectClass=inetOrgPerson)' });
  });
});

describe('a source that is down', () => {
  it('answers 503 directory_unavailable with Retry-After for its people, not counted as a failed attempt; local people are unaffected', async () => {
    const live = slapd.ldapsUrl;
    await t.admin('PATCH', `${api}/${sourceId}`, { url: `ldaps://127.0.0.1:${await freePort()}` });
    const res = await postJson(t, '/api/auth/sign-in/username', { username: 'user0012', password: passwordOf('user0012') });
    const body = expectProblem(res, 503, 'directory_unavailable');
    expect(body.detail).toBe('Example LDAP cannot be reached, so passwords it keeps cannot be checked now. Try again in a moment.');
    expect(res.headers['retry-after']).toBe('30');
    const counted = await one(t.db.select().from(signInBackOff).where(eq(signInBackOff.emailHash, addressKey('user0012@example.org'))));
    expect(counted?.failures ?? 0).toBe(0);
    // The hosted page names it, with 503.
    const page = await openPage(t, '/sign-in');
    const form = await postForm(t, '/sign-in', { csrf_token: csrfFrom(page.res), email: 'user0012', password: passwordOf('user0012'), return_to: '/account' }, page.cookie);
    expect(form.statusCode).toBe(503);
    expect(form.body).toContain('Example LDAP cannot be reached');
    // A local person signs in as always.
    expect((await postJson(t, '/api/auth/sign-in/email', { email: 'nobody@example.org', password: 'a long local password 1' })).statusCode).toBe(200);
    expect((await t.admin('GET', `${api}/${sourceId}`)).json()).toMatchObject({ status: 'unreachable' });
    // A run fails and says why.
    const run = await sync();
    expect(run).toMatchObject({ state: 'failed' });
    expect(run.error).toMatch(/refused the connection/);
    await t.admin('PATCH', `${api}/${sourceId}`, { url: live });
    expect((await postJson(t, '/api/auth/sign-in/username', { username: 'user0012', password: passwordOf('user0012') })).statusCode).toBe(200);
    expect((await t.admin('GET', `${api}/${sourceId}`)).json()).toMatchObject({ status: 'ok' });
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' })).body;
    expect(metrics).toMatch(/^gatehouse_directory_binds_total\{result="unavailable"\} 2$/m);
    expect(metrics).toMatch(/^gatehouse_directory_sync_runs_total\{result="failed"\} [1-9]\d*$/m);
    expect(metrics).toMatch(/^gatehouse_directory_sync_runs_total\{result="succeeded"\} [1-9]\d*$/m);
  });
});

describe('configuration as code', () => {
  it('exports sources under directorySources with the bind password only as a reference, and applies a file that creates one by its key', async () => {
    const exported = await t.admin('GET', '/api/admin/config');
    expect(exported.statusCode).toBe(200);
    const doc = parseYaml(exported.body) as { directorySources: Record<string, Record<string, unknown>> };
    expect(doc.directorySources[sourceId]).toMatchObject({ name: 'Example LDAP', kind: 'ldap', url: slapd.ldapsUrl, bindDn: ADMIN_DN, peopleBase: PEOPLE_BASE });
    expect(exported.body).not.toContain(ADMIN_PASSWORD);
    expect(doc.directorySources[sourceId]).not.toHaveProperty('bindPassword');

    const file = stringifyYaml({
      version: 1,
      directorySources: {
        ...doc.directorySources,
        'office-ldap': { name: 'Office', kind: 'ldap', url: slapd.url, caCertificate: slapd.caPem, peopleBase: PEOPLE_BASE, bindDn: ADMIN_DN, bindPassword: '${OFFICE_LDAP_PASSWORD}', syncIntervalMinutes: null },
      },
    });
    const applied = await t.admin('POST', '/api/admin/config/apply', { document: file, secrets: { '${OFFICE_LDAP_PASSWORD}': ADMIN_PASSWORD } });
    expect(applied.statusCode, applied.body).toBe(200);
    expect(applied.json().plan).toEqual([{ action: 'create', kind: 'directorySource', id: 'office-ldap', changes: expect.arrayContaining([{ field: 'bindPassword', after: '${OFFICE_LDAP_PASSWORD}', secret: true }]) }]);
    const created = (await t.admin('GET', `${api}/office-ldap`)).json();
    expect(created).toMatchObject({ id: 'office-ldap', bindPasswordSet: true, startTls: true });
    expect((await t.admin('POST', `${api}/office-ldap/test`, {})).json()).toMatchObject({ ok: true });
    // The export now names the reference; applying it again changes nothing.
    const again = await t.admin('GET', '/api/admin/config');
    expect((parseYaml(again.body) as typeof doc).directorySources['office-ldap']).toMatchObject({ bindPassword: '${OFFICE_LDAP_PASSWORD}' });
    const noop = await t.admin('POST', '/api/admin/config/apply', { document: again.body, secrets: { '${OFFICE_LDAP_PASSWORD}': ADMIN_PASSWORD } });
    expect(noop.json().plan).toEqual([]);
    expect((await t.admin('DELETE', `${api}/office-ldap`)).statusCode).toBe(204);
  });
});

describe('StartTLS and deletion', () => {
  it('syncs over ldap:// with StartTLS too, and deleting a source disables its people and keeps them and its groups as Gatehouse\'s own', async () => {
    const other = await t.admin('POST', api, sourceBody({ name: 'StartTLS', url: slapd.url, startTls: true, peopleFilter: '(&(objectClass=inetOrgPerson)(uid=nobody-here))', groupsBase: null }));
    expect(other.statusCode).toBe(201);
    const run = await sync(other.json().id);
    expect(run, run.error).toMatchObject({ state: 'succeeded', counts: { created: 0, conflicts: 0 } });
    await t.admin('DELETE', `${api}/${other.json().id}`);

    const before = await personByUsername('user0040');
    expect((await t.admin('DELETE', `${api}/${sourceId}`)).statusCode).toBe(204);
    const after = (await t.admin('GET', `/api/admin/people/${before!.id}`)).json();
    expect(after).toMatchObject({ status: 'disabled', source: null, hasPassword: false });
    expect((await t.admin('GET', '/api/admin/groups/staff')).json()).toMatchObject({ source: null });
    expect((await t.admin('GET', api)).json().directorySources).toEqual([]);
  });
});
