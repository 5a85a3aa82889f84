/**
 * A directory source of kind `active_directory` against a real Active Directory domain controller:
 * Debian's Samba, provisioned once for the file in a temporary directory and run in a private
 * network namespace (test/helpers/samba-ad.ts). It proves the AD defaults of the contract (spec
 * directory-sources.md) against the real dialect rather than against Microsoft's documentation
 * alone: objectGUID as the key, sAMAccountName, `(&(objectCategory=person)(objectClass=user))`,
 * userAccountControl's ACCOUNTDISABLE, nested groups through the in-chain rule
 * 1.2.840.113556.1.4.1941, changes-only runs by uSNChanged, and a sign-in that binds as the person.
 * One app for the file; the tests build on each other. SQLite only: the storage is the one
 * directory-sources.test.ts runs on both engines; this file is about the LDAP dialect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { Attribute, Change, type Client } from 'ldapts';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication, postJson } from '../helpers/accounts.js';
import { expectProblem } from '../helpers/problem.js';
import { AD_ADMIN_DN, AD_ADMIN_PASSWORD, AD_GROUPS_BASE, AD_PEOPLE_BASE, adUser, startSambaAd, type SambaAd } from '../helpers/samba-ad.js';
import { directoryEntries, people, sessions } from '../../server/db/schema.js';
import { many, one } from '../../server/db/store.js';
import { runFinished } from '../../server/directory-sources/runs.js';

let ad: SambaAd;
let t: TestApp;
let ldap: Client;
let sourceId: string;

const api = '/api/admin/directory-sources';
const dnOf = (cn: string) => `CN=${cn},${AD_PEOPLE_BASE}`;
const groupDnOf = (cn: string) => `CN=${cn},${AD_GROUPS_BASE}`;
const passwordOf = (sam: string) => `${sam[0]!.toUpperCase()}${sam.slice(1)}-Pass-2026!`;
const ENABLED = ['ann', 'bob', 'cy', 'dee', 'eve', 'fay'];

/** MS-DTYP 2.3.4.3: the first three fields of a GUID are little-endian in its 16 bytes. */
function guidString(bytes: Buffer): string {
  const hex = (b: Buffer) => b.toString('hex');
  const le = (start: number, end: number) => hex(Buffer.from(bytes.subarray(start, end)).reverse());
  return `${le(0, 4)}-${le(4, 6)}-${le(6, 8)}-${hex(bytes.subarray(8, 10))}-${hex(bytes.subarray(10, 16))}`;
}

beforeAll(async () => {
  ad = await startSambaAd();
  ldap = await ad.admin();
  await ldap.add(AD_PEOPLE_BASE, { objectClass: ['top', 'organizationalUnit'], ou: 'Staff' });
  await ldap.add(AD_GROUPS_BASE, { objectClass: ['top', 'organizationalUnit'], ou: 'Groups' });
  for (const sam of ENABLED) await ldap.add(dnOf(sam), adUser(sam, passwordOf(sam)));
  await ldap.add(dnOf('gus'), adUser('gus', passwordOf('gus'), { disabled: true }));
  // engineering ⊂ everyone: ann is in everyone only through the nesting.
  await ldap.add(groupDnOf('engineering'), { objectClass: ['top', 'group'], sAMAccountName: 'engineering', member: [dnOf('ann')] });
  await ldap.add(groupDnOf('everyone'), { objectClass: ['top', 'group'], sAMAccountName: 'everyone', member: [groupDnOf('engineering'), dnOf('bob')] });
  t = await makeApp({ perFile: true });
  await createApplication(t, { id: 'wiki', audience: 'https://wiki.example.com', redirectUris: ['https://wiki.example.com/cb'] });
}, 240_000);

afterAll(async () => {
  await ldap?.unbind().catch(() => {});
  await ad?.stop();
});

async function sync(body: Record<string, unknown> = {}) {
  const started = await t.admin('POST', `${api}/${sourceId}/sync`, body);
  expect(started.statusCode, started.body).toBe(202);
  await runFinished(sourceId);
  const run = await t.admin('GET', `${api}/${sourceId}/runs/${started.json().run.id}`);
  expect(run.statusCode).toBe(200);
  return run.json();
}

const personByUsername = (username: string) => one(t.db.select().from(people).where(eq(people.username, username)));

async function memberNames(groupId: string): Promise<string[]> {
  const res = await t.admin('GET', `/api/admin/groups/${groupId}/members?limit=200`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().members.map((m: { username: string }) => m.username).sort();
}

describe('Active Directory (Samba AD DC)', () => {
  it('connects with the kind\'s defaults and tests each step: TLS under the CA, the bind, counts, a username lookup', async () => {
    const res = await t.admin('POST', api, {
      name: 'Corp AD', kind: 'active_directory', url: ad.url, caCertificate: ad.caPem, bindDn: AD_ADMIN_DN, bindPassword: AD_ADMIN_PASSWORD,
      peopleBase: AD_PEOPLE_BASE, groupsBase: AD_GROUPS_BASE, syncIntervalMinutes: null, applications: ['wiki'],
    });
    expect(res.statusCode, res.body).toBe(201);
    sourceId = res.json().id;
    expect(res.json()).toMatchObject({ bindPasswordSet: true, attributes: { id: 'objectGUID', username: 'sAMAccountName', members: ['member'], nestedMembers: true }, peopleFilter: '(&(objectCategory=person)(objectClass=user))', groupsFilter: '(objectClass=group)' });

    const tested = await t.admin('POST', `${api}/${sourceId}/test`, { username: 'dee' });
    expect(tested.statusCode).toBe(200);
    const body = tested.json();
    expect(body.steps).toEqual(['connect', 'tls', 'bind', 'people', 'groups', 'lookup'].map((step) => ({ step, ok: true })));
    expect(body).toMatchObject({ ok: true, people: 7, groups: 2, lookup: { found: true, person: { dn: dnOf('dee'), username: 'dee', email: 'dee@corp.example', givenName: 'Dee', familyName: 'Example', disabled: false } } });
    expect(body.sample).toHaveLength(5);
    for (const sample of body.sample) expect([sample.skipped, [...ENABLED, 'gus'].includes(sample.person.username)]).toEqual([null, true]);
    // userAccountControl 514 (ACCOUNTDISABLE): mapped as disabled.
    const gus = (await t.admin('POST', `${api}/${sourceId}/test`, { username: 'gus' })).json();
    expect(gus).toMatchObject({ ok: true, lookup: { found: true, person: { dn: dnOf('gus'), username: 'gus', disabled: true } } });

    // The domain controller's certificate under another CA: the TLS step fails, and says why.
    const wrong = await t.admin('POST', api, { name: 'Wrong CA', kind: 'active_directory', url: ad.url, caCertificate: ad.otherCaPem, bindDn: AD_ADMIN_DN, bindPassword: AD_ADMIN_PASSWORD, peopleBase: AD_PEOPLE_BASE, syncIntervalMinutes: null });
    const wrongTest = (await t.admin('POST', `${api}/${wrong.json().id}/test`, {})).json();
    expect(wrongTest).toMatchObject({ ok: false, steps: [{ step: 'connect', ok: true }, { step: 'tls', ok: false }] });
    expect(wrongTest.steps[1].error).toMatch(/is not trusted/);
    expect((await t.admin('DELETE', `${api}/${wrong.json().id}`)).statusCode).toBe(204);
  });

  it('syncs people keyed by objectGUID, an ACCOUNTDISABLE account disabled here, groups with their nested members', async () => {
    const run = await sync();
    expect(run).toMatchObject({ state: 'succeeded', full: true, counts: { created: 7, updated: 0, disabled: 0, enabled: 0, skipped: 0, conflicts: 0 }, conflicts: [], skipped: [], error: null });
    const ann = await personByUsername('ann');
    expect(ann).toMatchObject({ email: 'ann@corp.example', status: 'active', sourceId, sourceDn: dnOf('ann') });
    expect((await personByUsername('gus'))?.status).toBe('disabled');
    const person = await t.admin('GET', `/api/admin/people/${ann!.id}`);
    expect(person.json()).toMatchObject({ source: { id: sourceId, dn: dnOf('ann') }, memberships: [{ applicationId: 'wiki', status: 'active' }] });

    // The key is the entry's objectGUID, as the usual GUID string.
    const [entry] = (await ldap.search(dnOf('ann'), { scope: 'base', attributes: ['objectGUID'], explicitBufferAttributes: ['objectGUID'] })).searchEntries;
    const guid = guidString(entry!.objectGUID as Buffer);
    const row = await one(t.db.select().from(directoryEntries).where(and(eq(directoryEntries.sourceId, sourceId), eq(directoryEntries.targetId, ann!.id))));
    expect(row?.entryKey).toBe(guid);

    // The domain controller flattens the nesting (in-chain rule): ann is in everyone through engineering.
    expect(await memberNames('engineering')).toEqual(['ann']);
    expect(await memberNames('everyone')).toEqual(['ann', 'bob']);
  });

  it('signs in by binding as the person; a wrong password is 401; someone new to the directory signs in before the next sync', async () => {
    const ok = await postJson(t, '/api/auth/sign-in/username', { username: 'bob', password: passwordOf('bob') });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().user).toMatchObject({ username: 'bob', email: 'bob@corp.example' });
    expectProblem(await postJson(t, '/api/auth/sign-in/username', { username: 'cy', password: passwordOf('bob') }), 401, 'invalid_credentials');

    await ldap.add(dnOf('hal'), adUser('hal', passwordOf('hal')));
    const fresh = await postJson(t, '/api/auth/sign-in/email', { email: 'hal@corp.example', password: passwordOf('hal') });
    expect(fresh.statusCode, fresh.body).toBe(200);
    expect(await personByUsername('hal')).toMatchObject({ sourceId, sourceDn: dnOf('hal'), status: 'active' });
  });

  it('follows changes by uSNChanged: a renamed entry stays the same person, an account disabled there is disabled here with its sessions', async () => {
    const bob = await personByUsername('bob');
    const live = await many(t.db.select().from(sessions).where(eq(sessions.personId, bob!.id)));
    expect(live.filter((s) => s.revokedAt === null)).toHaveLength(1);
    const ann = await personByUsername('ann');

    await ldap.modifyDN(dnOf('ann'), 'CN=Ann Smith');
    await ldap.modify(dnOf('bob'), [new Change({ operation: 'replace', modification: new Attribute({ type: 'userAccountControl', values: ['514'] }) })]);
    const run = await sync({ full: false });
    expect(run).toMatchObject({ state: 'succeeded', full: false, counts: { created: 0, updated: 1, disabled: 1, enabled: 0, skipped: 0, conflicts: 0 } });

    expect(await personByUsername('ann')).toMatchObject({ id: ann!.id, sourceDn: `CN=Ann Smith,${AD_PEOPLE_BASE}`, status: 'active' });
    expect((await personByUsername('bob'))?.status).toBe('disabled');
    const after = await many(t.db.select().from(sessions).where(eq(sessions.personId, bob!.id)));
    expect(after.every((s) => s.revokedAt !== null)).toBe(true);
    expectProblem(await postJson(t, '/api/auth/sign-in/username', { username: 'bob', password: passwordOf('bob') }), 401, 'invalid_credentials');
  });
});
