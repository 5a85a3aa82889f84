/**
 * Who may bind to the LDAP directory and what else a session can do (spec ldap.md, "People bind
 * with app passwords", "Operations", "Turning it on"): simple binds of service accounts and people
 * (app passwords only, by DN, e-mail or username), the refusals with their result codes, failed
 * binds rate-limited per address and per name (invalidCredentials, then busy after a delay),
 * audited and counted, the same answer whether a name exists or not; Who am I, the root DSE,
 * writes refused with 53; plain binds from another machine refused until TLS (StartTLS, LDAPS
 * with the LAN certificate) or GATEHOUSE_LDAP_ALLOW_PLAIN; and the listener started by the server
 * itself, shown by the overview and `gatehouse status`.
 */
import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { Attribute, Change, Client } from 'ldapts';
import { makeApp, type TestApp } from '../helpers/app.js';
import { BASE, PERSON_DN, SERVICE_DN, ldapApplication, ldapClient, memberWithAppPassword, startLdapFor } from '../helpers/ldap.js';
import { RawLdap, bindRequest, message, present, searchRequest, unbindRequest } from '../helpers/ldap-raw.js';
import { OPS_ADMIN_TOKEN, startServer, tempDataDir } from '../helpers/data-dir.js';
import { auditLog } from '../../server/db/schema.js';
import { many } from '../../server/db/store.js';
import { constructed, integer, octets } from '../../server/ldap/ber.js';
import { BIND_FAILURES_PER_ADDRESS, BIND_FAILURES_PER_NAME, BUSY_DELAY_MS } from '../../server/ldap/bind.js';
import { ensureLocalTls } from '../../server/ops/tls.js';
import { readStatus, formatStatus } from '../../server/ops/status.js';
import { ldapStatus } from '../../server/ldap/status.js';
import { PASSWORD } from '../helpers/accounts.js';

const T0 = new Date('2026-03-01T10:00:00Z');

async function directory() {
  const t = await makeApp({ clock: T0 });
  const service = await ldapApplication(t, 'media');
  const ada = await memberWithAppPassword(t, 'ada@example.com', 'media');
  const { url, port } = await startLdapFor(t);
  return { t, service, ada, url, port };
}

const codeOf = (promise: Promise<unknown>) => promise.then(() => 0, (e: { code?: number }) => e.code ?? -1);
const failedBinds = async (t: TestApp) =>
  (await many(t.db.select().from(auditLog).where(eq(auditLog.action, 'ldap.bind_failed')))).map((e) => ({ actor: e.actor, details: e.details }));

describe('simple binds', () => {
  it('binds service accounts and people with app passwords (by DN, e-mail or username), never with account passwords', async () => {
    const { service, ada, url } = await directory();
    const whoAmI = async (name: string, password: string) => {
      const client = ldapClient(url);
      await client.bind(name, password);
      const answer = await client.exop('1.3.6.1.4.1.4203.1.11.3');
      await client.unbind();
      return answer.value;
    };
    expect(await whoAmI(SERVICE_DN('media'), service)).toBe(`dn:${SERVICE_DN('media')}`);
    expect(await whoAmI(PERSON_DN('ada'), ada.password)).toBe(`dn:${PERSON_DN('ada')}`);
    expect(await whoAmI('ADA@Example.com', ada.password.toUpperCase())).toBe(`dn:${PERSON_DN('ada')}`);
    expect(await whoAmI('ada', ada.password.replaceAll('-', ''))).toBe(`dn:${PERSON_DN('ada')}`);
    expect(await whoAmI('UID=Ada, OU=People, DC=Gatehouse', ada.password)).toBe(`dn:${PERSON_DN('ada')}`);
    // The account password, a person's app password as the service account, a wrong base: refused.
    const client = ldapClient(url);
    expect(await codeOf(client.bind(PERSON_DN('ada'), PASSWORD))).toBe(49);
    expect(await codeOf(client.bind('ada@example.com', PASSWORD))).toBe(49);
    expect(await codeOf(client.bind(SERVICE_DN('media'), ada.password))).toBe(49);
    expect(await codeOf(client.bind('uid=ada,ou=people,dc=other', ada.password))).toBe(49);
    expect(await codeOf(client.bind(`uid=ada,${SERVICE_DN('media').split(',').slice(1).join(',')}`, ada.password))).toBe(49);
  });

  it('answers each refusal with its result code; anonymous binds read the root DSE only', async () => {
    const { port } = await directory();
    const raw = await RawLdap.open(port);
    raw.send(bindRequest(1, '', ''));
    raw.send(searchRequest(2, '', present('objectClass'), { scope: 0, attributes: ['namingContexts', 'supportedLDAPVersion', 'supportedExtension', 'supportedControl'] }));
    raw.send(searchRequest(3, BASE, present('objectClass'), { scope: 0 }));
    raw.send(searchRequest(4, '', present('objectClass'), { scope: 2 }));
    raw.send(bindRequest(5, PERSON_DN('ada'), ''));
    raw.send(bindRequest(6, PERSON_DN('ada'), 'x', 2));
    raw.send(message(7, constructed(0x60, integer(3), octets(PERSON_DN('ada')), constructed(0xa3, octets('PLAIN')))));
    raw.send(message(8, constructed(0x77, octets('1.2.3.4', 0x80))));
    raw.send(message(9, constructed(0x77, octets('1.3.6.1.4.1.4203.1.11.3', 0x80))));
    raw.send(message(10, constructed(0x77, octets('1.3.6.1.4.1.1466.20037', 0x80))));
    const bindOk = (await raw.answers(1))[0]!;
    expect(bindOk).toEqual({ id: 1, tag: 0x61, code: 0, matchedDN: '', diagnostic: '', controls: [] });
    expect((await raw.answers(2))).toEqual([
      {
        id: 2, tag: 0x64, dn: '', controls: [],
        attributes: {
          namingContexts: [BASE], supportedLDAPVersion: ['3'],
          supportedExtension: ['1.3.6.1.4.1.4203.1.11.3'], supportedControl: ['1.2.840.113556.1.4.319'],
        },
      },
      { id: 2, tag: 0x65, code: 0, matchedDN: '', diagnostic: '', controls: [] },
    ]);
    expect((await raw.answers(3))).toEqual([{ id: 3, tag: 0x65, code: 50, matchedDN: '', diagnostic: 'bind first: anonymous binds may read the root DSE only', controls: [] }]);
    expect((await raw.answers(4))[0]).toMatchObject({ tag: 0x65, code: 32 });
    expect((await raw.answers(5))[0]).toMatchObject({ tag: 0x61, code: 53, diagnostic: 'unauthenticated binds are not allowed' });
    expect((await raw.answers(6))[0]).toMatchObject({ tag: 0x61, code: 2, diagnostic: 'only LDAPv3 is supported' });
    expect((await raw.answers(7))[0]).toMatchObject({ tag: 0x61, code: 7, diagnostic: 'only simple binds are supported' });
    expect((await raw.answers(8))[0]).toMatchObject({ tag: 0x78, code: 2, diagnostic: 'extended operation 1.2.3.4 is not supported' });
    // Who am I, anonymous: an empty identity (RFC 4532).
    expect((await raw.answers(9))[0]).toMatchObject({ tag: 0x78, code: 0, value: Buffer.alloc(0) });
    // StartTLS without TLS configured: unavailable (RFC 4511 §4.14.2), with its name.
    expect((await raw.answers(10))[0]).toMatchObject({ tag: 0x78, code: 52, name: '1.3.6.1.4.1.1466.20037' });
    // A critical control the server does not know: unavailableCriticalExtension.
    raw.send(message(11, constructed(0x77, octets('1.3.6.1.4.1.4203.1.11.3', 0x80)), [constructed(0x30, octets('1.2.3.99'), Buffer.from([0x01, 0x01, 0xff]))]));
    expect((await raw.answers(11))[0]).toMatchObject({ tag: 0x78, code: 12 });
    raw.send(unbindRequest(12));
    await raw.waitFor(() => false, 3_000).catch(() => undefined);
    expect(raw.closed).toBe(true);
  });

  it('refuses add, modify, delete, modify DN and compare with unwillingToPerform (53)', async () => {
    const { service, url } = await directory();
    const client = ldapClient(url);
    await client.bind(SERVICE_DN('media'), service);
    const refusal = async (run: () => Promise<unknown>) => run().then(() => undefined, (e: { code: number; message: string }) => ({ code: e.code, message: e.message }));
    const readOnly = { code: 53, message: expect.stringContaining('this directory is read-only') };
    expect(await refusal(() => client.add(`uid=new,ou=people,${BASE}`, { objectClass: 'person', uid: 'new' }))).toEqual(readOnly);
    expect(await refusal(() => client.modify(PERSON_DN('ada'), new Change({ operation: 'replace', modification: new Attribute({ type: 'cn', values: ['X'] }) })))).toEqual(readOnly);
    expect(await refusal(() => client.del(PERSON_DN('ada')))).toEqual(readOnly);
    expect(await refusal(() => client.modifyDN(PERSON_DN('ada'), 'uid=eve'))).toEqual(readOnly);
    expect(await refusal(() => client.compare(PERSON_DN('ada'), 'uid', 'ada'))).toEqual(readOnly);
  });
});

describe('failed binds', () => {
  it('are audited and counted, the same answer for unknown names; then busy per name, after a delay', async () => {
    const { t, url, ada } = await directory();
    const client = ldapClient(url);
    const wrong = async (name: string) => codeOf(client.bind(name, 'wrong-password'));
    expect(await wrong(PERSON_DN('ada'))).toBe(49);
    expect(await wrong(PERSON_DN('nobody'))).toBe(49);
    expect(await wrong('ada@example.com')).toBe(49);
    expect(await failedBinds(t)).toEqual([
      { actor: 'system', details: { bindName: PERSON_DN('ada'), address: '127.0.0.1' } },
      { actor: 'system', details: { bindName: PERSON_DN('nobody'), address: '127.0.0.1' } },
      { actor: 'system', details: { bindName: 'ada@example.com', address: '127.0.0.1' } },
    ]);
    // The panel's chart counts them as failed sign-ins.
    const activity = (await t.admin('GET', '/api/admin/activity?days=1')).json();
    expect(activity.days.at(-1).failedSignIns).toBe(3);

    // The name's budget: BIND_FAILURES_PER_NAME wrong binds in five minutes, then a wrong one is
    // busy, after a delay; the right password still binds (issue 49, H4: no lockout by others).
    for (let i = 1; i < BIND_FAILURES_PER_NAME; i++) expect(await wrong(PERSON_DN('ada'))).toBe(49);
    const started = Date.now();
    expect(await wrong(PERSON_DN('ada'))).toBe(51);
    expect(Date.now() - started).toBeGreaterThanOrEqual(BUSY_DELAY_MS - 50);
    expect(await codeOf(client.bind(PERSON_DN('ada'), ada.password))).toBe(0);
    // Another spelling of the same DN shares it; the e-mail is another name.
    expect(await wrong('uid=ADA,ou=people,dc=gatehouse')).toBe(51);
    expect(await codeOf(client.bind('uid=ADA,ou=people,dc=gatehouse', ada.password))).toBe(0);
    expect(await wrong('ada@example.com')).toBe(49);
    // Busy binds are not audited.
    expect(await failedBinds(t)).toHaveLength(3 + BIND_FAILURES_PER_NAME);
    t.clock.advance(5 * 60_000 + 1);
    expect(await wrong(PERSON_DN('ada'))).toBe(49);

    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain('gatehouse_ldap_binds_total{result="invalid_credentials"} 14');
    expect(metrics).toContain('gatehouse_ldap_binds_total{result="busy"} 2');
    expect(metrics).toContain('gatehouse_ldap_binds_total{result="success"} 2');
  }, 30_000);

  it("cannot lock a service account or a person out: wrong binds from another machine spend the name's budget, the right password still binds (H4)", async () => {
    const t = await makeApp({ clock: T0, config: { ldap: { enabled: true, host: '0.0.0.0', port: 0, ldapsPort: 0, baseDn: undefined, allowPlain: true } } });
    const service = await ldapApplication(t, 'media');
    const ada = await memberWithAppPassword(t, 'ada@example.com', 'media');
    const { port } = await startLdapFor(t);
    // The attacker binds from the LAN address, wrongly, in both names until their budgets are spent.
    const attacker = ldapClient(`ldap://${lanAddress()}:${port}`);
    for (const name of [SERVICE_DN('media'), PERSON_DN('ada')]) {
      for (let i = 0; i < BIND_FAILURES_PER_NAME; i++) expect(await codeOf(attacker.bind(name, `guess-${i}`))).toBe(49);
      expect(await codeOf(attacker.bind(name, 'one-more-guess'))).toBe(51);
    }
    // The service and the person, from their own machine (loopback here), bind with their passwords.
    const device = ldapClient(`ldap://127.0.0.1:${port}`);
    await device.bind(SERVICE_DN('media'), service);
    expect((await device.exop('1.3.6.1.4.1.4203.1.11.3')).value).toBe(`dn:${SERVICE_DN('media')}`);
    await device.bind(PERSON_DN('ada'), ada.password);
    expect((await device.exop('1.3.6.1.4.1.4203.1.11.3')).value).toBe(`dn:${PERSON_DN('ada')}`);
  }, 30_000);

  it('are limited per address across names', async () => {
    const { t, url, ada } = await directory();
    const client = ldapClient(url);
    for (let i = 0; i < BIND_FAILURES_PER_ADDRESS; i++) expect(await codeOf(client.bind(`user${i}@example.com`, 'wrong'))).toBe(49);
    expect(await codeOf(client.bind('ada@example.com', ada.password))).toBe(51);
    t.clock.advance(60_001);
    expect(await codeOf(client.bind('ada@example.com', ada.password))).toBe(0);
  }, 30_000);
});

/** A non-loopback address of this machine, for a connection the server sees as coming from the LAN. */
function lanAddress(): string {
  const address = Object.values(networkInterfaces()).flatMap((l) => l ?? []).find((i) => !i.internal && i.family === 'IPv4')?.address;
  expect(address, 'this machine has a non-loopback IPv4 address').toBeDefined();
  return address!;
}

describe('confidentiality', () => {
  it('refuses a password over plain LDAP from another machine until StartTLS; LDAPS serves the LAN certificate', async () => {
    const dir = tempDataDir();
    const material = ensureLocalTls(dir, [], new Date());
    const t = await makeApp({ clock: T0, config: { ldap: { enabled: true, host: '0.0.0.0', port: 0, ldapsPort: 0, baseDn: undefined, allowPlain: false } } });
    const service = await ldapApplication(t, 'media');
    const { port, ldapsUrl } = await startLdapFor(t, material);
    const lan = `ldap://${lanAddress()}:${port}`;
    const plain = ldapClient(lan);
    await expect(plain.bind(SERVICE_DN('media'), service)).rejects.toMatchObject({ code: 13 });
    await plain.bind('', ''); // anonymous is fine
    await plain.startTLS({ ca: [material.caPem!], servername: 'localhost', checkServerIdentity: () => undefined });
    await plain.bind(SERVICE_DN('media'), service);
    expect((await plain.exop('1.3.6.1.4.1.4203.1.11.3')).value).toBe(`dn:${SERVICE_DN('media')}`);
    // StartTLS twice: operationsError.
    await expect(plain.startTLS({ ca: [material.caPem!], checkServerIdentity: () => undefined })).rejects.toMatchObject({ code: 1 });
    // Loopback is trusted without TLS.
    const local = ldapClient(`ldap://127.0.0.1:${port}`);
    await local.bind(SERVICE_DN('media'), service);
    // LDAPS, verified against the local CA by name.
    const secure = ldapClient(ldapsUrl!.replace('127.0.0.1', 'localhost'), { tlsOptions: { ca: [material.caPem!] } });
    await secure.bind(SERVICE_DN('media'), service);
    const dse = await secure.search('', { scope: 'base', attributes: ['supportedExtension'] });
    expect(dse.searchEntries[0]!.supportedExtension).toEqual(['1.3.6.1.4.1.1466.20037', '1.3.6.1.4.1.4203.1.11.3']);
  });

  it('GATEHOUSE_LDAP_ALLOW_PLAIN=1 allows it', async () => {
    const t = await makeApp({ clock: T0, config: { ldap: { enabled: true, host: '0.0.0.0', port: 0, ldapsPort: 0, baseDn: undefined, allowPlain: true } } });
    const service = await ldapApplication(t, 'media');
    const { port } = await startLdapFor(t);
    const plain = ldapClient(`ldap://${lanAddress()}:${port}`);
    await plain.bind(SERVICE_DN('media'), service);
  });
});

describe('the listener in the server', () => {
  it('starts and stops with it, on LAN TLS with LDAPS; the overview and gatehouse status show it', async () => {
    const dir = tempDataDir();
    const running = await startServer(dir, {
      GATEHOUSE_TLS: 'auto', GATEHOUSE_LDAP: 'on', GATEHOUSE_LDAP_PORT: '0', GATEHOUSE_LDAPS_PORT: '0',
      GATEHOUSE_ISSUER: 'https://auth.home.example:8443',
    });
    const state = running.ldap!.state();
    expect(state).toMatchObject({ enabled: true, startTls: true, baseDn: 'dc=auth,dc=home,dc=example', allowPlain: false, connections: 0 });
    expect(state.url).toMatch(/^ldap:\/\/127\.0\.0\.1:\d+$/);
    expect(state.ldapsUrl).toMatch(/^ldaps:\/\/127\.0\.0\.1:\d+$/);
    const inject = await running.app.inject({ method: 'GET', url: '/api/admin/overview', headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } });
    expect(inject.json().ldap).toEqual({ enabled: true, url: state.url, ldapsUrl: state.ldapsUrl, startTls: true, baseDn: 'dc=auth,dc=home,dc=example', connections: 0 });
    const client = new Client({ url: state.ldapsUrl!.replace('127.0.0.1', 'localhost'), tlsOptions: { ca: [running.tls!.caPem!] } });
    const dse = await client.search('', { scope: 'base', attributes: ['namingContexts'] });
    expect(dse.searchEntries[0]!.namingContexts).toBe('dc=auth,dc=home,dc=example');
    const status = (await readStatus(dir, [], {}, [ldapStatus]))!;
    expect(status.ldap).toEqual({ enabled: true, url: state.url, ldapsUrl: state.ldapsUrl, startTls: true, baseDn: 'dc=auth,dc=home,dc=example', allowPlain: false });
    expect(formatStatus(status, [ldapStatus])).toContain(`LDAP             on: ${state.url} and ${state.ldapsUrl} (StartTLS), base dc=auth,dc=home,dc=example\n`);
    await client.unbind();
    await running.stop();
    const refused = new Client({ url: state.url!, connectTimeout: 2_000 });
    await expect(refused.search('', { scope: 'base' })).rejects.toThrow();
    expect(formatStatus((await readStatus(dir, [], {}, [ldapStatus]))!, [ldapStatus])).toContain('LDAP             on when the server last ran: ');
  });

  it('is off unless asked for, and says so', async () => {
    const dir = tempDataDir();
    const running = await startServer(dir);
    expect(running.ldap).toBeUndefined();
    const inject = await running.app.inject({ method: 'GET', url: '/api/admin/overview', headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } });
    expect(inject.json().ldap).toEqual({ enabled: false, url: null, ldapsUrl: null, startTls: false, baseDn: 'dc=gatehouse', connections: 0 });
    expect(formatStatus((await readStatus(dir, [], {}, [ldapStatus]))!, [ldapStatus])).toContain('LDAP             off (GATEHOUSE_LDAP=on or --ldap turns it on)\n');
  });

  it('refuses bad settings in one sentence', async () => {
    const { loadConfig } = await import('../../server/config.js');
    expect(() => loadConfig({ GATEHOUSE_LDAP: 'yes' })).toThrow('GATEHOUSE_LDAP must be "on" or "off", got "yes".');
    expect(() => loadConfig({ GATEHOUSE_LDAP_PORT: '70000' })).toThrow('GATEHOUSE_LDAP_PORT must be between 0 and 65535, got 70000.');
    expect(() => loadConfig({ GATEHOUSE_LDAP_BASE_DN: 'example.com' })).toThrow('GATEHOUSE_LDAP_BASE_DN must be a distinguished name such as dc=example,dc=com, got "example.com".');
    expect(loadConfig({ GATEHOUSE_LDAP_BASE_DN: 'dc=Home, dc=Example' }).ldap.baseDn).toBe('dc=Home,dc=Example');
    expect(loadConfig({ HOST: '0.0.0.0' }, { ldap: true }).ldap).toEqual({ enabled: true, host: '0.0.0.0', port: 3890, ldapsPort: 6360, baseDn: undefined, allowPlain: false });
    const dir = tempDataDir();
    const first = await startServer(dir, { GATEHOUSE_LDAP: 'on', GATEHOUSE_LDAP_PORT: '0' });
    const taken = Number(new URL(first.ldap!.state().url!).port);
    await expect(startServer(tempDataDir(), { GATEHOUSE_LDAP: 'on', GATEHOUSE_LDAP_PORT: String(taken) })).rejects.toThrow(`GATEHOUSE_LDAP_PORT ${taken} on 127.0.0.1 is already in use.`);
  });
});

