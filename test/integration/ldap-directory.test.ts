/**
 * The LDAP directory as a client reads it (spec ldap.md, "The tree" and "Operations"), through
 * ldapts, an LDAP client library independent of the server's codec, over a real TCP connection
 * to the listener of an app on either engine: the tree and every attribute, scopes, every filter
 * type with the schema's matching, requested attributes, size limits and paged results, what one
 * application's service account (and its members) see, and the query plans of every read.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { AndFilter, OrFilter, type Client, type Entry as LdapEntry, type SearchOptions } from 'ldapts';
import { makeApp, type TestApp } from '../helpers/app.js';
import { createApplication } from '../helpers/accounts.js';
import { BASE, GROUP_DN, PERSON_DN, SERVICE_DN, insertGroup, ldapApplication, ldapClient, memberWithAppPassword, personByEmail, setNames, startLdapFor } from '../helpers/ldap.js';
import { RawLdap, abandonRequest, bindRequest, equality, pagedControl, present, searchRequest } from '../helpers/ldap-raw.js';
import { queryPlan, usesPostgresIndex } from '../helpers/query-plan.js';
import { memberships, people } from '../../server/db/schema.js';
import { engineOf, exec, transaction } from '../../server/db/store.js';
import { newId } from '../../server/util/ids.js';
import { groupMembersAfterQuery, groupsAfterQuery, groupsByQuery, membersAfterQuery, membersByQuery, viewMembersOfGroupsQuery } from '../../server/ldap/queries.js';
import { SIZE_LIMIT } from '../../server/ldap/search.js';
import { BerReader } from '../../server/ldap/ber.js';

const T0 = new Date('2026-03-01T10:00:00Z');
let t: TestApp;
let url: string;
let port: number;
let servicePassword: string;
let client: Client;
const ids: Record<string, string> = {};
const numbers: Record<string, number> = {};

beforeAll(async () => {
  t = await makeApp({ clock: T0, perFile: true });
  servicePassword = await ldapApplication(t, 'media');
  await ldapApplication(t, 'notes');
  await memberWithAppPassword(t, 'ada@example.com', 'media');
  await memberWithAppPassword(t, 'bob@example.com', 'media');
  await memberWithAppPassword(t, 'cy@example.com', 'media');
  await memberWithAppPassword(t, 'dee@example.com', 'notes');
  await setNames(t, 'ada@example.com', { name: 'Ada Lovelace', givenName: 'Ada', familyName: 'Lovelace' });
  for (const name of ['ada', 'bob', 'cy', 'dee']) {
    const person = await personByEmail(t, `${name}@example.com`);
    ids[name] = person.id;
    numbers[name] = person.uidNumber!;
  }
  // cy is suspended in media: the directory no longer shows them.
  const cy = (await t.admin('GET', '/api/admin/applications/media/users')).json().users.find((u: { email: string }) => u.email === 'cy@example.com');
  expect((await t.admin('PATCH', `/api/admin/applications/media/users/${cy.id}`, { status: 'suspended' })).statusCode).toBe(200);
  await insertGroup(t, 'family', [ids.ada!, ids.bob!, ids.cy!, ids.dee!], 'The whole family');
  await insertGroup(t, 'admins', [ids.ada!]);
  await insertGroup(t, 'guests', []);
  ({ url, port } = await startLdapFor(t));
  client = ldapClient(url);
  await client.bind(SERVICE_DN('media'), servicePassword);
}, 120_000);

const dns = (entries: LdapEntry[]) => entries.map((e) => e.dn);
/** ldapts lists every requested attribute, with [] for those the entry did not have: leave those out. */
const returned = (entry: LdapEntry) => Object.fromEntries(Object.entries(entry).filter(([, v]) => !(Array.isArray(v) && v.length === 0)));
const find = async (base: string, options: Parameters<Client['search']>[1] = {}) =>
  (await client.search(base, options)).searchEntries.map((e) => (options.returnAttributeValues === false ? e : (returned(e) as LdapEntry)));
const groupNumber = async (id: string) => Number((await find(GROUP_DN(id), { scope: 'base', attributes: ['gidNumber'] }))[0]!.gidNumber);

describe('the tree', () => {
  it('numbers people and groups from 10000, one sequence for both', async () => {
    expect(Object.values(numbers).every((n) => n >= 10000)).toBe(true);
    const all = [...Object.values(numbers), await groupNumber('family'), await groupNumber('admins'), await groupNumber('guests')];
    expect(new Set(all).size).toBe(all.length);
    // Created in this order: the people (sign-ups) first, then the groups.
    expect(all).toEqual([...all].sort((a, b) => a - b));
  });

  it('shows the base, the three OUs, the application\'s active members and every group, with every attribute', async () => {
    const entries = await find(BASE, { scope: 'sub', filter: '(objectClass=*)', attributes: ['*', '+'] });
    expect(dns(entries)).toEqual([
      BASE, 'ou=people,dc=gatehouse', PERSON_DN('ada'), PERSON_DN('bob'),
      'ou=groups,dc=gatehouse', GROUP_DN('admins'), GROUP_DN('family'), GROUP_DN('guests'), 'ou=services,dc=gatehouse',
    ]);
    expect(entries[0]).toEqual({ dn: BASE, objectClass: ['top', 'dcObject', 'organization'], dc: 'gatehouse', o: 'Gatehouse' });
    expect(entries[1]).toEqual({ dn: 'ou=people,dc=gatehouse', objectClass: ['top', 'organizationalUnit'], ou: 'people' });
    const stamp = '20260301100000Z';
    expect(entries[2]).toEqual({
      dn: PERSON_DN('ada'),
      objectClass: ['top', 'person', 'organizationalPerson', 'inetOrgPerson', 'posixAccount'],
      uid: 'ada', cn: 'Ada Lovelace', displayName: 'Ada Lovelace', givenName: 'Ada', sn: 'Lovelace', mail: 'ada@example.com',
      memberOf: [GROUP_DN('admins'), GROUP_DN('family')],
      uidNumber: String(numbers.ada), gidNumber: String(numbers.ada), homeDirectory: '/home/ada', loginShell: '/bin/sh',
      entryUUID: ids.ada, createTimestamp: stamp, modifyTimestamp: stamp,
    });
    // Without a name: cn, displayName and sn are the username; no givenName.
    expect(entries[3]).toMatchObject({ uid: 'bob', cn: 'bob', displayName: 'bob', sn: 'bob', memberOf: GROUP_DN('family') });
    expect(entries[3]).not.toHaveProperty('givenName');
    // Members filtered to the people this application sees (not cy, suspended, nor dee, of notes).
    expect(entries[6]).toEqual({
      dn: GROUP_DN('family'), objectClass: ['top', 'groupOfNames', 'posixGroup'], cn: 'family', description: 'The whole family',
      member: [PERSON_DN('ada'), PERSON_DN('bob')], memberUid: ['ada', 'bob'], gidNumber: String(await groupNumber('family')),
      entryUUID: 'family', createTimestamp: stamp, modifyTimestamp: stamp,
    });
    // A group without a description shows its name; one without members, none.
    expect(entries[7]).toMatchObject({ cn: 'guests', description: 'Guests' });
    expect(entries[7]).not.toHaveProperty('member');
  });

  it('walks scopes base, one and sub from every level', async () => {
    expect(dns(await find(BASE, { scope: 'base' }))).toEqual([BASE]);
    expect(dns(await find(BASE, { scope: 'one' }))).toEqual(['ou=people,dc=gatehouse', 'ou=groups,dc=gatehouse', 'ou=services,dc=gatehouse']);
    expect(dns(await find('ou=people,dc=gatehouse', { scope: 'base' }))).toEqual(['ou=people,dc=gatehouse']);
    expect(dns(await find('ou=people,dc=gatehouse', { scope: 'one' }))).toEqual([PERSON_DN('ada'), PERSON_DN('bob')]);
    expect(dns(await find('ou=groups,dc=gatehouse', { scope: 'sub' }))).toEqual(['ou=groups,dc=gatehouse', GROUP_DN('admins'), GROUP_DN('family'), GROUP_DN('guests')]);
    expect(dns(await find('ou=services,dc=gatehouse', { scope: 'one' }))).toEqual([]);
    expect(dns(await find(PERSON_DN('ada'), { scope: 'base' }))).toEqual([PERSON_DN('ada')]);
    expect(dns(await find(PERSON_DN('ada'), { scope: 'one' }))).toEqual([]);
    expect(dns(await find(GROUP_DN('family'), { scope: 'sub' }))).toEqual([GROUP_DN('family')]);
    // DNs match case- and space-insensitively.
    expect(dns(await find('UID=Ada, OU=People, DC=Gatehouse', { scope: 'base' }))).toEqual([PERSON_DN('ada')]);
  });

  it('answers noSuchObject with the nearest entry for a base it does not have, invalidDNSyntax for a non-DN', async () => {
    const refusal = async (base: string) => {
      const error = await client.search(base, { scope: 'base' }).then(() => undefined, (e: { code: number; message: string }) => e);
      return error?.code;
    };
    // Suspended (cy), another application's (dee), nobody: the same answer.
    for (const base of [PERSON_DN('cy'), PERSON_DN('dee'), PERSON_DN('nobody'), `cn=x,${PERSON_DN('ada')}`, GROUP_DN('nope'), 'ou=other,dc=gatehouse', 'dc=other', 'cn=media,ou=services,dc=gatehouse']) {
      expect({ base, code: await refusal(base) }).toEqual({ base, code: 32 });
    }
    expect(await refusal('not a dn')).toBe(34);
    // matchedDN, read off the wire.
    const raw = await RawLdap.open(port);
    raw.send(bindRequest(1, SERVICE_DN('media'), servicePassword));
    await raw.answers(1);
    raw.send(searchRequest(2, PERSON_DN('nobody'), equality('objectClass', 'person'), { scope: 0 }));
    raw.send(searchRequest(3, 'dc=other', equality('objectClass', 'person'), { scope: 0 }));
    raw.send(searchRequest(4, 'ou=x,dc=gatehouse', equality('objectClass', 'person'), { scope: 0 }));
    expect((await raw.answers(2))[0]).toMatchObject({ tag: 0x65, code: 32, matchedDN: 'ou=people,dc=gatehouse' });
    expect((await raw.answers(3))[0]).toMatchObject({ tag: 0x65, code: 32, matchedDN: '' });
    expect((await raw.answers(4))[0]).toMatchObject({ tag: 0x65, code: 32, matchedDN: 'dc=gatehouse' });
    raw.close();
  });
});

describe('filters', () => {
  const people = async (filter: SearchOptions['filter']) => dns(await find('ou=people,dc=gatehouse', { scope: 'one', filter })).map((dn) => dn.split(',')[0]);
  const groups = async (filter: string) => dns(await find('ou=groups,dc=gatehouse', { scope: 'one', filter })).map((dn) => dn.split(',')[0]);

  it('equality and approx, case-insensitive where the schema says', async () => {
    expect(await people('(uid=ADA)')).toEqual(['uid=ada']);
    expect(await people('(mail=Bob@Example.COM)')).toEqual(['uid=bob']);
    expect(await people('(cn=ada lovelace)')).toEqual(['uid=ada']);
    expect(await people(`(uidNumber=${numbers.bob})`)).toEqual(['uid=bob']);
    expect(await people(`(gidNumber=${numbers.ada})`)).toEqual(['uid=ada']);
    expect(await people(`(entryUUID=${ids.ada})`)).toEqual(['uid=ada']);
    expect(await people(`(entryUUID=${ids.ada!.toUpperCase()})`)).toEqual([]);
    expect(await people('(memberOf=CN=Admins,OU=Groups,DC=Gatehouse)')).toEqual(['uid=ada']);
    expect(await people('(objectClass=INETORGPERSON)')).toEqual(['uid=ada', 'uid=bob']);
    expect(await people('(objectClass=posixGroup)')).toEqual([]);
    expect(await people('(uid~=bob)')).toEqual(['uid=bob']);
    expect(await people('(homeDirectory=/home/ada)')).toEqual(['uid=ada']);
    expect(await people('(homeDirectory=/HOME/ADA)')).toEqual([]);
    // Not members of media: suspended, or of another application.
    expect(await people('(uid=cy)')).toEqual([]);
    expect(await people('(uid=dee)')).toEqual([]);
    expect(await groups('(memberUid=ada)')).toEqual(['cn=admins', 'cn=family']);
    expect(await groups(`(member=${PERSON_DN('bob')})`)).toEqual(['cn=family']);
    expect(await groups('(memberUid=cy)')).toEqual([]);
    expect(await groups('(cn=FAMILY)')).toEqual(['cn=family']);
    expect(await groups(`(gidNumber=${await groupNumber('guests')})`)).toEqual(['cn=guests']);
  });

  it('substrings, ordering, presence, and/or/not, absolute true and false', async () => {
    expect(await people('(cn=*love*)')).toEqual(['uid=ada']);
    expect(await people('(mail=b*@example.com)')).toEqual(['uid=bob']);
    expect(await people('(cn=a*a*e)')).toEqual(['uid=ada']);
    expect(await people('(cn=a*lace*e)')).toEqual([]);
    expect(await people(`(uidNumber>=${numbers.bob})`)).toEqual(['uid=bob']);
    expect(await people(`(uidNumber<=${numbers.ada})`)).toEqual(['uid=ada']);
    expect(await people('(givenName=*)')).toEqual(['uid=ada']);
    expect(await people('(&(objectClass=posixAccount)(|(uid=ada)(uid=bob))(!(memberOf=cn=admins,ou=groups,dc=gatehouse)))')).toEqual(['uid=bob']);
    // RFC 4526 (ldapts writes (&) and (|) only as filter objects).
    expect(await people(new AndFilter({ filters: [] }))).toEqual(['uid=ada', 'uid=bob']);
    expect(await people(new OrFilter({ filters: [] }))).toEqual([]);
    expect(await groups('(&(objectClass=groupOfNames)(!(member=*)))')).toEqual(['cn=guests']);
  });

  it('Undefined for what the schema cannot match: unknown attributes, unreadable assertions, extensible matches', async () => {
    expect(await people('(colour=red)')).toEqual([]);
    expect(await people('(!(colour=red))')).toEqual([]); // NOT Undefined is Undefined
    expect(await people('(uidNumber=ten)')).toEqual([]);
    expect(await people('(!(uidNumber=ten))')).toEqual([]);
    expect(await people('(memberOf>=cn=a)')).toEqual([]);
    expect(await people('(uid:caseExactMatch:=ada)')).toEqual([]);
    expect(await people('(|(colour=red)(uid=bob))')).toEqual(['uid=bob']);
  });
});

describe('attributes', () => {
  it('returns what was asked for: names in any case, aliases and OIDs, 1.1, +, typesOnly', async () => {
    const [ada] = await find(PERSON_DN('ada'), { scope: 'base', attributes: ['UID', 'commonName', '0.9.2342.19200300.100.1.3', 'nothing'] });
    expect(ada).toEqual({ dn: PERSON_DN('ada'), uid: 'ada', cn: 'Ada Lovelace', mail: 'ada@example.com' });
    expect((await find(PERSON_DN('ada'), { scope: 'base', attributes: ['1.1'] }))[0]).toEqual({ dn: PERSON_DN('ada') });
    const [operational] = await find(PERSON_DN('ada'), { scope: 'base', attributes: ['+'] });
    expect(Object.keys(operational!).sort()).toEqual(['createTimestamp', 'dn', 'entryUUID', 'modifyTimestamp']);
    const [plain] = await find(PERSON_DN('ada'), { scope: 'base' });
    expect(plain).not.toHaveProperty('entryUUID');
    const [types] = await find(PERSON_DN('ada'), { scope: 'base', attributes: ['uid', 'mail'], returnAttributeValues: false });
    expect(types).toEqual({ dn: PERSON_DN('ada'), uid: [], mail: [] });
  });
});

describe('what an application sees', () => {
  it('a member bound with an app password sees the same people and groups as the service account', async () => {
    const { password } = await memberWithAppPassword(t, 'eve@example.com', 'notes');
    const member = ldapClient(url);
    await member.bind(PERSON_DN('eve'), password);
    const seen = await member.search(BASE, { scope: 'sub', filter: '(|(objectClass=person)(cn=family))', attributes: ['member'] });
    expect(seen.searchEntries.map(returned)).toEqual([
      { dn: PERSON_DN('dee') }, { dn: PERSON_DN('eve') },
      { dn: GROUP_DN('family'), member: PERSON_DN('dee') },
    ]);
    await member.unbind();
  });

  it('a disabled person is in no directory and binds nowhere; enabled again, they are back', async () => {
    const tv = await ldapApplication(t, 'tv');
    const { password } = await memberWithAppPassword(t, 'fay@example.com', 'tv');
    const fay = await personByEmail(t, 'fay@example.com');
    const service = ldapClient(url);
    await service.bind(SERVICE_DN('tv'), tv);
    const people = async () => dns((await service.search('ou=people,dc=gatehouse', { scope: 'one', attributes: ['1.1'] })).searchEntries);
    const member = ldapClient(url);
    await member.bind(PERSON_DN('fay'), password);
    expect(await people()).toEqual([PERSON_DN('fay')]);
    expect((await t.admin('PATCH', `/api/admin/people/${fay.id}`, { status: 'disabled' })).statusCode).toBe(200);
    expect(await people()).toEqual([]);
    // Its open connection is anonymous now; a new bind is refused.
    await expect(member.search(BASE, { scope: 'base' })).rejects.toMatchObject({ code: 50 });
    await expect(member.bind(PERSON_DN('fay'), password)).rejects.toMatchObject({ code: 49 });
    expect((await t.admin('PATCH', `/api/admin/people/${fay.id}`, { status: 'active' })).statusCode).toBe(200);
    expect(await people()).toEqual([PERSON_DN('fay')]);
    await member.bind(PERSON_DN('fay'), password);
    await member.unbind();
    await service.unbind();
  });

  it("sees only the groups the application's groupsFilter keeps, in ou=groups and in memberOf, as the groups claim does (H8)", async () => {
    const secret = await ldapApplication(t, 'books');
    const { password } = await memberWithAppPassword(t, 'gil@example.com', 'books');
    const gil = await personByEmail(t, 'gil@example.com');
    for (const group of ['family', 'admins']) expect((await t.admin('PUT', `/api/admin/groups/${group}/members/${gil.id}`)).statusCode).toBe(204);
    const filtered = await t.admin('PATCH', '/api/admin/applications/books', { groupsFilter: ['admins'] });
    expect(filtered.statusCode, filtered.body).toBe(200);
    const service = ldapClient(url);
    await service.bind(SERVICE_DN('books'), secret);
    const member = ldapClient(url);
    await member.bind(PERSON_DN('gil'), password);
    for (const reader of [service, member]) {
      const read = async (base: string, options: Parameters<Client['search']>[1]) => (await reader.search(base, options)).searchEntries.map(returned);
      expect(await read(BASE, { scope: 'sub', filter: '(|(objectClass=posixGroup)(uid=gil))', attributes: ['memberOf', 'memberUid'] })).toEqual([
        { dn: PERSON_DN('gil'), memberOf: GROUP_DN('admins') },
        { dn: GROUP_DN('admins'), memberUid: 'gil' },
      ]);
      // Looked up by name, number, member or memberOf, the others are not there.
      const familyNumber = await groupNumber('family');
      for (const filter of ['(cn=family)', `(gidNumber=${familyNumber})`, '(memberUid=gil)', '(member=uid=gil,ou=people,dc=gatehouse)']) {
        expect(dns(await reader.search('ou=groups,dc=gatehouse', { scope: 'one', filter, attributes: ['1.1'] }).then((r) => r.searchEntries)), filter)
          .toEqual(filter.startsWith('(mem') ? [GROUP_DN('admins')] : []);
      }
      expect(dns((await reader.search('ou=people,dc=gatehouse', { scope: 'one', filter: `(memberOf=${GROUP_DN('family')})` })).searchEntries)).toEqual([]);
      expect(dns((await reader.search('ou=people,dc=gatehouse', { scope: 'one', filter: `(memberOf=${GROUP_DN('admins')})` })).searchEntries)).toEqual([PERSON_DN('gil')]);
      await expect(reader.search(GROUP_DN('family'), { scope: 'base' })).rejects.toMatchObject({ code: 32 });
    }
    // The filter is read before each operation: cleared, the open connections see every group.
    expect((await t.admin('PATCH', '/api/admin/applications/books', { groupsFilter: null })).statusCode).toBe(200);
    const memberOf = (await member.search(PERSON_DN('gil'), { scope: 'base', attributes: ['memberOf'] })).searchEntries[0]!.memberOf;
    expect(memberOf).toEqual([GROUP_DN('admins'), GROUP_DN('family')]);
    expect(dns((await service.search('ou=groups,dc=gatehouse', { scope: 'one', attributes: ['1.1'] })).searchEntries)).toEqual([GROUP_DN('admins'), GROUP_DN('family'), GROUP_DN('guests')]);
    for (const group of ['family', 'admins']) expect((await t.admin('DELETE', `/api/admin/groups/${group}/members/${gil.id}`)).statusCode).toBe(204);
    await member.unbind();
    await service.unbind();
  });

  it('a bind stops counting once its credential does: a new service password, LDAP off', async () => {
    const other = ldapClient(url);
    const secret = await ldapApplication(t, 'photos');
    await other.bind(SERVICE_DN('photos'), secret);
    expect((await other.search(BASE, { scope: 'base' })).searchEntries).toHaveLength(1);
    expect((await t.admin('POST', '/api/admin/applications/photos/ldap/password')).statusCode).toBe(200);
    await expect(other.search(BASE, { scope: 'base' })).rejects.toMatchObject({ code: 50 });
    await expect(other.bind(SERVICE_DN('photos'), secret)).rejects.toMatchObject({ code: 49 });
    await other.unbind();
  });
});

describe('size limits and paged results', () => {
  beforeAll(async () => {
    // SIZE_LIMIT + 5 more members of media, written in one transaction.
    const now = T0;
    await transaction(t.db, async (tx) => {
      for (let i = 0; i < SIZE_LIMIT + 5; i++) {
        const id = newId('usr');
        await exec(tx.insert(people).values({ id, email: `p${i}@example.com`, username: `p${String(i).padStart(4, '0')}`, updatedAt: now, createdAt: now }));
        await exec(tx.insert(memberships).values({ id: newId('mem'), applicationId: 'media', personId: id, joinedAt: new Date(now.getTime() + i + 1), lastActiveAt: now, updatedAt: now }));
      }
    });
  }, 120_000);

  it(`stops at the client's limit and at ${SIZE_LIMIT} entries, sizeLimitExceeded; pages go past it`, async () => {
    const limited = await client.search('ou=people,dc=gatehouse', { scope: 'one', sizeLimit: 3, attributes: ['1.1'] });
    expect(dns(limited.searchEntries)).toEqual([PERSON_DN('ada'), PERSON_DN('bob'), PERSON_DN('p0000')]);
    const raw = await RawLdap.open(port);
    raw.send(bindRequest(1, SERVICE_DN('media'), servicePassword));
    await raw.answers(1);
    raw.send(searchRequest(2, 'ou=people,dc=gatehouse', equality('objectClass', 'posixAccount'), { scope: 1, attributes: ['1.1'], sizeLimit: 1_000_000 }));
    const answers = await raw.answers(2);
    expect(answers.filter((r) => r.tag === 0x64)).toHaveLength(SIZE_LIMIT);
    expect(answers.at(-1)).toMatchObject({ tag: 0x65, code: 4 });
    raw.close();

    const paged = await client.search('ou=people,dc=gatehouse', { scope: 'one', attributes: ['uid'], paged: { pageSize: 400 } });
    expect(paged.searchEntries).toHaveLength(SIZE_LIMIT + 7);
    expect(new Set(paged.searchEntries.map((e) => e.uid)).size).toBe(SIZE_LIMIT + 7);
  });

  it('stops an abandoned search without answering it, and the session goes on', async () => {
    const raw = await RawLdap.open(port);
    raw.send(bindRequest(1, SERVICE_DN('media'), servicePassword));
    await raw.answers(1);
    // The search and its abandon in one write: the search stops before its first entry or at a slice's end.
    raw.send(Buffer.concat([
      searchRequest(2, 'ou=people,dc=gatehouse', present('objectClass'), { scope: 1, attributes: ['1.1'], controls: [pagedControl(SIZE_LIMIT)] }),
      abandonRequest(3, 2),
      searchRequest(4, '', present('objectClass'), { scope: 0 }),
    ]));
    const next = await raw.answers(4);
    expect(next.at(-1)).toMatchObject({ tag: 0x65, code: 0 });
    const abandoned = raw.responses.filter((r) => r.id === 2);
    expect(abandoned.every((r) => r.tag === 0x64)).toBe(true);
    expect(abandoned.length).toBeLessThan(SIZE_LIMIT);
    // Nothing ever answers the abandon itself (RFC 4511 §4.11).
    expect(raw.responses.filter((r) => r.id === 3)).toEqual([]);
    raw.close();
  });

  it('ends on page size 0 and refuses a cookie from another search', async () => {
    const raw = await RawLdap.open(port);
    raw.send(bindRequest(1, SERVICE_DN('media'), servicePassword));
    await raw.answers(1);
    const filter = equality('objectClass', 'person');
    raw.send(searchRequest(2, 'ou=people,dc=gatehouse', filter, { scope: 1, attributes: ['1.1'], controls: [pagedControl(2)] }));
    const first = await raw.answers(2);
    expect(first.filter((r) => r.tag === 0x64).map((r) => r.dn)).toEqual([PERSON_DN('ada'), PERSON_DN('bob')]);
    const done = first.at(-1)!;
    expect(done).toMatchObject({ code: 0, controls: [{ oid: '1.2.840.113556.1.4.319' }] });
    const cookie = readCookie(done.controls[0]!.value!);
    expect(cookie.length).toBeGreaterThan(0);
    raw.send(searchRequest(3, 'ou=people,dc=gatehouse', filter, { scope: 1, attributes: ['1.1'], controls: [pagedControl(2, cookie)] }));
    expect((await raw.answers(3)).filter((r) => r.tag === 0x64).map((r) => r.dn)).toEqual([PERSON_DN('p0000'), PERSON_DN('p0001')]);
    raw.send(searchRequest(4, 'ou=groups,dc=gatehouse', filter, { scope: 1, controls: [pagedControl(2, cookie)] }));
    expect((await raw.answers(4))[0]).toMatchObject({ tag: 0x65, code: 53, diagnostic: 'the paged-results cookie does not belong to this search' });
    raw.send(searchRequest(5, 'ou=people,dc=gatehouse', filter, { scope: 1, controls: [pagedControl(0, cookie)] }));
    const ended = await raw.answers(5);
    expect(ended).toHaveLength(1);
    expect(readCookie(ended[0]!.controls[0]!.value!)).toEqual(Buffer.alloc(0));
    raw.send(searchRequest(6, 'ou=people,dc=gatehouse', filter, { scope: 1, controls: [pagedControl(2, Buffer.from('not a cookie'))] }));
    expect((await raw.answers(6))[0]).toMatchObject({ code: 53 });
    raw.close();
  });
});

/** The cookie of a paged-results response control value. */
function readCookie(value: Buffer): Buffer {
  const reader = new BerReader(value).sequence();
  reader.integer();
  return Buffer.from(reader.bytes());
}

describe('query plans', () => {
  it('reads every slice, member and group through an index', async () => {
    const plans = [
      membersAfterQuery(t.db, 'media', { t: 1, id: 'mem_x' }, 200).toSQL(),
      membersByQuery(t.db, 'media', 'username', ['ada']).toSQL(),
      membersByQuery(t.db, 'media', 'email', ['ada@example.com']).toSQL(),
      membersByQuery(t.db, 'media', 'id', ['usr_x']).toSQL(),
      membersByQuery(t.db, 'media', 'uidNumber', [10000]).toSQL(),
      groupMembersAfterQuery(t.db, 'media', 'family', 'usr_x', 200).toSQL(),
      groupsAfterQuery(t.db, 'a', 20).toSQL(),
      groupsByQuery(t.db, 'id', ['family']).toSQL(),
      groupsByQuery(t.db, 'gidNumber', [10000]).toSQL(),
      viewMembersOfGroupsQuery(t.db, 'media', ['family', 'admins']).toSQL(),
    ].map((q) => ({ sql: q.sql.replace(/\$\d+/g, '?'), params: q.params }));
    for (const query of plans) {
      const plan = await queryPlan(t.db, query.sql, ...query.params);
      if (engineOf(t.db) === 'sqlite') {
        expect({ sql: query.sql, plan }).not.toMatchObject({ plan: expect.stringMatching(/(^|\| )SCAN (people|memberships|groups|group_members)\b(?! USING)/) });
      } else {
        expect({ sql: query.sql, plan }).not.toMatchObject({ plan: expect.stringMatching(/Seq Scan/) });
      }
    }
    if (engineOf(t.db) === 'sqlite') {
      const byUsername = await queryPlan(t.db, plans[1]!.sql, ...plans[1]!.params);
      expect(byUsername).toMatch(/SEARCH people USING INDEX people_username_uq \(username=\?\)/);
      expect(byUsername).toMatch(/SEARCH memberships USING INDEX memberships_app_person_uq/);
      expect(await queryPlan(t.db, plans[0]!.sql, ...plans[0]!.params)).toMatch(/SEARCH memberships USING INDEX memberships_app_status_idx/);
    } else {
      expect(await queryPlan(t.db, plans[4]!.sql, ...plans[4]!.params)).toMatch(/people_uid_number_uq/);
      expect(usesPostgresIndex(await queryPlan(t.db, plans[1]!.sql, ...plans[1]!.params), 'people_username_uq')).toBe(true);
    }
  });
});

// The application without LDAP: nobody binds for it.
describe('an application without LDAP', () => {
  it('has no service account that binds', async () => {
    await createApplication(t, { id: 'wiki', name: 'Wiki', audience: 'https://wiki.example.com', redirectUris: ['https://wiki.example.com/cb'] });
    const other = ldapClient(url);
    await expect(other.bind(SERVICE_DN('wiki'), 'anything')).rejects.toMatchObject({ code: 49 });
    await other.unbind();
  });
});

