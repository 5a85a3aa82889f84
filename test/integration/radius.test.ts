/**
 * RADIUS on both engines (spec radius.md): the `radius` application field in the admin API (secrets
 * generated and shown once, kept by name, rotated; the record never shows them; the rules), and
 * the listener over real UDP on loopback with the server's own codec as the client for exact
 * packets: PAP accepted with User-Name, Class and the VLAN, the same reject for every refusal (the
 * application's group rule and a suspended membership among them), the
 * budgets (a right password passes while the name's is spent), unknown clients, missing
 * Message-Authenticators, oversize and malformed datagrams dropped and counted while valid ones
 * are answered, duplicates answered from the cache without a second evaluation, accounting kept as
 * the person's sessions, the audit, the metrics, the listener in the real server as the overview
 * and `gatehouse status` show it, and the index behind every statement it runs.
 */
import { createSocket } from 'node:dgram';
import type { ConnectionOptions } from 'node:tls';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { and, asc, eq } from 'drizzle-orm';
import { makeApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/accounts.js';
import { insertGroup, memberWithAppPassword, personByEmail } from '../helpers/ldap.js';
import { exchange, pap, papRequest, radiusApplication, startRadiusFor } from '../helpers/radius.js';
import { queryPlan, usesPostgresIndex } from '../helpers/query-plan.js';
import { OPS_ADMIN_TOKEN, startServer, tempDataDir } from '../helpers/data-dir.js';
import { formatStatus, readStatus } from '../../server/ops/status.js';
import { radiusStatus } from '../../server/radius/status.js';
import { HOLD_MAX_MS, SLICE, type RadiusListener } from '../../server/radius/server.js';
import { csrfFrom, openPage, postForm } from '../helpers/pages.js';
import { auditLog, memberships, networkCertificates, radiusSessions } from '../../server/db/schema.js';
import { engineOf, many } from '../../server/db/store.js';
import { Attr, Code, decodePacket, encodeRequest, integer } from '../../server/radius/codec.js';
import { EapCode, decodeEap } from '../../server/radius/eap.js';
import { eapMaterial } from '../../server/radius/credentials.js';
import { AuditWriteBehind, ROWS_PER_INSERT } from '../../server/audit/write-behind.js';
import { Asker, eapAuthentication } from '../helpers/eap-supplicant.js';
import { FAILURES_PER_NAME } from '../../server/radius/limits.js';
import { hashStarted } from '../../server/util/hash-pressure.js';

let t: TestApp;
let dir: string;
let port: number;
let acctPort: number;
let listener: RadiusListener;
let secret: string;
let ada: { password: string; cookie: string };
let adaId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-radius-int-'));
  t = await makeApp({ perFile: true, config: { dataDir: dir } });
  secret = await radiusApplication(t, 'wifi', { vlans: [{ group: 'staff', vlan: 20 }], defaultVlan: null });
  ada = await memberWithAppPassword(t, 'ada@example.com', 'wifi');
  adaId = (await personByEmail(t, 'ada@example.com')).id;
  await insertGroup(t, 'staff', [adaId]);
  ({ port, acctPort, listener } = await startRadiusFor(t));
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const attr = (packet: ReturnType<typeof decodePacket>, type: number) => packet.attributes.filter((a) => a.type === type).map((a) => a.value);
/** The audit rows of `action`, RADIUS's own written first (they are written behind, decision 0411). */
const audits = async (action: string) => {
  await listener.flushAudit();
  return many(t.db.select().from(auditLog).where(eq(auditLog.action, action)).orderBy(asc(auditLog.at), asc(auditLog.id)));
};
const metrics = async () => (await t.app.inject({ method: 'GET', url: '/metrics' })).body;

describe('the radius application field', () => {
  it('answers the new clients\' secrets once, never in the record; keeps a client\'s secret by name; rotates it', async () => {
    const made = await t.admin('POST', '/api/admin/applications', {
      id: 'vpn', name: 'VPN', clientType: 'web', audience: 'https://vpn.example.com', redirectUris: ['https://vpn.example.com/cb'],
      radius: { clients: [{ name: 'OpenVPN', address: '10.1.2.3' }, { name: 'Switches', address: '10.9.0.77/16' }], vlans: [], defaultVlan: 5 },
    });
    expect(made.statusCode, made.body).toBe(201);
    const secrets = made.json().radiusSecrets as Record<string, string>;
    expect(Object.keys(secrets).sort()).toEqual(['OpenVPN', 'Switches']);
    for (const s of Object.values(secrets)) expect(s).toMatch(/^[0-9a-f]{40}$/);
    expect(made.json().radius).toEqual({
      clients: [
        { name: 'OpenVPN', address: '10.1.2.3', secretSetAt: expect.any(String) },
        { name: 'Switches', address: '10.9.0.0/16', secretSetAt: expect.any(String) },
      ],
      vlans: [],
      defaultVlan: 5,
    });
    const read = await t.admin('GET', '/api/admin/applications/vpn');
    expect(read.body).not.toContain(secrets.OpenVPN!);
    expect(read.json().radiusSecrets).toBeUndefined();

    const patched = await t.admin('PATCH', '/api/admin/applications/vpn', { radius: { clients: [{ name: 'OpenVPN', address: '10.1.2.4' }, { name: 'MikroTik', address: '10.1.2.5' }] } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(Object.keys(patched.json().radiusSecrets)).toEqual(['MikroTik']);

    const rotated = await t.admin('POST', '/api/admin/applications/vpn/radius/clients/OpenVPN/secret');
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(Object.keys(rotated.json())).toEqual(['secret']);
    expect(rotated.json().secret).toMatch(/^[0-9a-f]{40}$/);
    expect(rotated.json().secret).not.toBe(secrets.OpenVPN);
    const missing = await t.admin('POST', '/api/admin/applications/vpn/radius/clients/Nope/secret');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('radius_client_not_found');
    expect((await audits('application.radius_secret_rotated')).map((a) => a.details)).toEqual([{ client: 'OpenVPN' }]);
    expect(JSON.stringify(await audits('application.updated'))).not.toContain(secrets.OpenVPN!);
    expect((await t.admin('DELETE', '/api/admin/applications/vpn')).statusCode).toBe(204);
  });

  it('refuses a bad address, a name twice, a VLAN out of range and a range another application has, all in one 400', async () => {
    const res = await t.admin('POST', '/api/admin/applications', {
      id: 'bad', name: 'Bad', clientType: 'web', audience: 'https://bad.example.com', redirectUris: ['https://bad.example.com/cb'],
      radius: { clients: [{ name: 'A', address: 'not-an-ip' }, { name: 'a', address: '127.0.0.1' }], vlans: [{ group: 'staff', vlan: 20 }] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([
      { path: 'body.radius.clients.0.address', message: '"not-an-ip" is not an IP address or a CIDR range' },
      { path: 'body.radius.clients.1.name', message: '"a" is named twice' },
      { path: 'body.radius.clients.1.address', message: '127.0.0.1 is already a RADIUS client of application "wifi"' },
    ]);
    const vlan = await t.admin('POST', '/api/admin/applications', {
      id: 'bad', name: 'Bad', clientType: 'web', audience: 'https://bad.example.com', redirectUris: ['https://bad.example.com/cb'], radius: { clients: [], defaultVlan: 4095 },
    });
    expect(vlan.statusCode).toBe(400);
    expect(vlan.json().code).toBe('validation_failed');
  });
});

describe('PAP over UDP', () => {
  it('accepts an app password with User-Name, Class and the group\'s VLAN; audits and counts it', async () => {
    const answer = (await pap(port, secret, 'ada@example.com', ada.password))!;
    expect(answer.code).toBe(Code.accessAccept);
    expect(answer.attributes[0]!.type).toBe(Attr.messageAuthenticator);
    const username = (await personByEmail(t, 'ada@example.com')).username;
    expect(attr(answer, Attr.userName).map(String)).toEqual([username]);
    expect(attr(answer, Attr.class).map(String)).toEqual([`gatehouse:${adaId}`]);
    expect(attr(answer, Attr.tunnelType)).toEqual([Buffer.from([0, 0, 0, 13])]);
    expect(attr(answer, Attr.tunnelMediumType)).toEqual([Buffer.from([0, 0, 0, 6])]);
    expect(attr(answer, Attr.tunnelPrivateGroupId)).toEqual([Buffer.from('\u000020')]);
    const accepted = await audits('radius.accepted');
    expect(accepted.at(-1)).toMatchObject({ actor: 'system', applicationId: 'wifi', target: adaId, details: { client: 'Loopback AP', address: '127.0.0.1', method: 'pap', vlan: 20 } });
    expect(await metrics()).toMatch(/gatehouse_radius_requests_total\{method="pap",result="accept"\} [1-9]/);
  });

  it('answers a wrong password, the account password and an unknown name with the same Access-Reject', async () => {
    const answers = [];
    for (const [name, password] of [['ada@example.com', 'wrong'], ['ada@example.com', PASSWORD], ['nobody@example.com', ada.password]] as const) {
      const answer = (await pap(port, secret, name, password))!;
      expect(answer.code).toBe(Code.accessReject);
      answers.push(answer.attributes.map((a) => a.type));
    }
    expect(answers).toEqual([[Attr.messageAuthenticator], [Attr.messageAuthenticator], [Attr.messageAuthenticator]]);
    const rejected = await audits('radius.rejected');
    expect(rejected.at(-1)!.details).toEqual({ client: 'Loopback AP', address: '127.0.0.1', method: 'pap', userName: 'nobody@example.com', reason: 'credentials' });
    expect(JSON.stringify(rejected)).not.toContain(PASSWORD);
  });

  it('a right password passes while the name\'s failure budget is spent; a wrong one waits', async () => {
    const bob = await memberWithAppPassword(t, 'bob@example.com', 'wifi');
    for (let i = 0; i < FAILURES_PER_NAME; i++) expect((await pap(port, secret, 'bob@example.com', `wrong-${i}`))!.code).toBe(Code.accessReject);
    const started = Date.now();
    expect((await pap(port, secret, 'bob@example.com', 'wrong-again'))!.code).toBe(Code.accessReject);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect((await pap(port, secret, 'bob@example.com', bob.password))!.code).toBe(Code.accessAccept);
  });
});

describe('who may connect', () => {
  it('the application\'s group rule and a suspended membership refuse with the same Access-Reject; each lifted, the same password passes', async () => {
    const carol = await memberWithAppPassword(t, 'carol@example.com', 'wifi');
    const carolId = (await personByEmail(t, 'carol@example.com')).id;
    expect((await pap(port, secret, 'carol@example.com', carol.password))!.code).toBe(Code.accessAccept);

    const ruled = await t.admin('PATCH', '/api/admin/applications/wifi', { allowedGroups: ['staff'] });
    expect([ruled.statusCode, ruled.json().allowedGroups], ruled.body).toEqual([200, ['staff']]);
    const outside = (await pap(port, secret, 'carol@example.com', carol.password))!;
    expect(outside.code).toBe(Code.accessReject);
    expect(outside.attributes.map((a) => a.type)).toEqual([Attr.messageAuthenticator]);
    expect((await audits('radius.rejected')).at(-1)!.details).toEqual({ client: 'Loopback AP', address: '127.0.0.1', method: 'pap', userName: 'carol@example.com', reason: 'credentials' });
    expect((await pap(port, secret, 'ada@example.com', ada.password))!.code).toBe(Code.accessAccept);
    // Put in the group, read live: the same password passes; so it does once the rule is lifted.
    expect((await t.admin('PUT', `/api/admin/groups/staff/members/${carolId}`)).statusCode).toBe(204);
    expect((await pap(port, secret, 'carol@example.com', carol.password))!.code).toBe(Code.accessAccept);
    expect((await t.admin('DELETE', `/api/admin/groups/staff/members/${carolId}`)).statusCode).toBe(204);
    expect((await t.admin('PATCH', '/api/admin/applications/wifi', { allowedGroups: null })).statusCode).toBe(200);
    expect((await pap(port, secret, 'carol@example.com', carol.password))!.code).toBe(Code.accessAccept);

    const [membership] = await many(t.db.select().from(memberships).where(and(eq(memberships.personId, carolId), eq(memberships.applicationId, 'wifi'))));
    expect((await t.admin('PATCH', `/api/admin/applications/wifi/users/${membership!.id}`, { status: 'suspended' })).statusCode).toBe(200);
    const suspended = (await pap(port, secret, 'carol@example.com', carol.password))!;
    expect(suspended.code).toBe(Code.accessReject);
    expect(suspended.attributes.map((a) => a.type)).toEqual([Attr.messageAuthenticator]);
    expect((await t.admin('PATCH', `/api/admin/applications/wifi/users/${membership!.id}`, { status: 'active' })).statusCode).toBe(200);
    expect((await pap(port, secret, 'carol@example.com', carol.password))!.code).toBe(Code.accessAccept);
  });
});

describe('EAP on this engine (eapol_test runs them against SQLite in the interop suite)', () => {
  const eap = async (method: 'ttls' | 'tls', tls: ConnectionOptions, inner?: { login: string; password: string }) => {
    const asker = await Asker.open(port);
    try {
      return await eapAuthentication(asker, Buffer.from(secret), method, 'anonymous', { ca: eapMaterial(t.config, new Date()).ca, ...tls }, inner);
    } finally {
      asker.close();
    }
  };
  const accepted = async (answer: ReturnType<typeof decodePacket>, method: string) => {
    expect(answer.code).toBe(Code.accessAccept);
    expect(decodeEap(Buffer.concat(attr(answer, Attr.eapMessage))).code).toBe(EapCode.success);
    expect(attr(answer, Attr.userName).map(String)).toEqual([(await personByEmail(t, 'ada@example.com')).username]);
    expect(attr(answer, Attr.class).map(String)).toEqual([`gatehouse:${adaId}`]);
    expect(attr(answer, Attr.tunnelPrivateGroupId)).toEqual([Buffer.from('\u000020')]);
    // MS-MPPE-Recv-Key and -Send-Key (Microsoft, vendor 311, types 17 and 16).
    expect(attr(answer, Attr.vendorSpecific).map((v) => [v.readUInt32BE(0), v[4]])).toEqual([[311, 17], [311, 16]]);
    expect((await audits('radius.accepted')).at(-1)).toMatchObject({ target: adaId, details: { client: 'Loopback AP', method, vlan: 20 } });
  };

  it('EAP-TTLS/PAP with an app password is accepted; with a wrong one, the same Access-Reject with EAP-Failure', async () => {
    await accepted(await eap('ttls', { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' }, { login: 'ada@example.com', password: ada.password }), 'eap-ttls');
    const refused = await eap('ttls', { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' }, { login: 'ada@example.com', password: PASSWORD });
    expect(refused.code).toBe(Code.accessReject);
    expect(decodeEap(Buffer.concat(attr(refused, Attr.eapMessage))).code).toBe(EapCode.failure);
  });

  it('EAP-TLS with a network certificate the admin API issued is accepted; refused once it is revoked', async () => {
    const issued = await t.admin('POST', `/api/admin/people/${adaId}/network-certificates`, { applicationId: 'wifi', name: 'Ada laptop' });
    expect(issued.statusCode, issued.body).toBe(201);
    const { id, pkcs12, password } = issued.json() as { id: string; pkcs12: string; password: string };
    const client = { pfx: Buffer.from(pkcs12, 'base64'), passphrase: password, minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' } as const;
    await accepted(await eap('tls', client), 'eap-tls');
    expect((await t.admin('DELETE', `/api/admin/people/${adaId}/network-certificates/${id}`)).statusCode).toBe(204);
    const refused = await eap('tls', client);
    expect(refused.code).toBe(Code.accessReject);
    expect(decodeEap(Buffer.concat(attr(refused, Attr.eapMessage))).code).toBe(EapCode.failure);
  });
});

describe('what is dropped, and what is still answered', () => {
  it('drops an unknown client, a missing or wrong Message-Authenticator, oversize and malformed datagrams, and counts each', async () => {
    // From 127.0.0.2: no client covers it.
    const stranger = createSocket('udp4');
    await new Promise<void>((resolve) => stranger.bind(0, '127.0.0.2', resolve));
    const heard: Buffer[] = [];
    stranger.on('message', (m) => heard.push(m));
    stranger.send(papRequest(secret, 'ada@example.com', ada.password).datagram, port, '127.0.0.1');

    const authenticator = randomBytes(16);
    const noMac = Buffer.alloc(20 + 5);
    noMac[0] = Code.accessRequest;
    noMac[1] = 9;
    noMac.writeUInt16BE(noMac.length, 2);
    authenticator.copy(noMac, 4);
    Buffer.from([Attr.userName, 5, 0x61, 0x64, 0x61]).copy(noMac, 20);
    const wrongSecret = papRequest('not-the-secret', 'ada@example.com', ada.password).datagram;
    const oversize = Buffer.alloc(4097);
    const malformed = Buffer.from(papRequest(secret, 'ada@example.com', ada.password).datagram);
    malformed[21] = 0; // an attribute of length 0
    for (const datagram of [noMac, wrongSecret, oversize, malformed]) expect(await exchange(port, datagram, 300)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 200));
    stranger.close();
    expect(heard).toEqual([]);
    expect((await pap(port, secret, 'ada@example.com', ada.password))!.code).toBe(Code.accessAccept);
    const text = await metrics();
    for (const reason of ['unknown_client', 'bad_authenticator', 'oversize', 'malformed']) {
      expect(text).toMatch(new RegExp(`gatehouse_radius_dropped_total\\{reason="${reason}"\\} [1-9]`));
    }
  });

  it('answers a retransmission from the cache: the same bytes, one evaluation', async () => {
    const before = (await audits('radius.accepted')).length;
    const { datagram } = papRequest(secret, 'ada@example.com', ada.password, [], 77);
    const socket = createSocket('udp4');
    const answers: Buffer[] = [];
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const done = new Promise<void>((resolve) => socket.on('message', (m) => (answers.push(m), answers.length === 2 && resolve())));
    socket.send(datagram, port, '127.0.0.1');
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.send(datagram, port, '127.0.0.1');
    await done;
    socket.close();
    expect(answers[1]).toEqual(answers[0]);
    expect((await audits('radius.accepted')).length).toBe(before + 1);
    expect(await metrics()).toMatch(/gatehouse_radius_duplicates_total [1-9]/);
  });

  it('holds slices while a password hash runs, for at most HOLD_MAX_MS, then paces them until the pool is quiet (decisions 0415, 0416)', async () => {
    const yielded = async () => Number(/^gatehouse_radius_yielded_total (\d+)$/m.exec(await metrics())?.[1] ?? 0);
    const burst = async () => {
      const answers = await Promise.all(Array.from({ length: 3 * SLICE }, () => pap(port, secret, 'ada@example.com', ada.password)));
      expect(answers.map((a) => a?.code)).toEqual(Array(3 * SLICE).fill(Code.accessAccept));
    };
    const quiet = await yielded();
    await burst();
    expect(await yielded()).toBe(quiet);

    const done = hashStarted();
    try {
      // Held: the hash never ends here, so the answer comes once the hold runs out, not before.
      const sent = performance.now();
      expect((await pap(port, secret, 'ada@example.com', ada.password))?.code).toBe(Code.accessAccept);
      expect(performance.now() - sent).toBeGreaterThanOrEqual(HOLD_MAX_MS - 1);
      expect(await yielded()).toBe(quiet + 1);
      // Then paced, not held again: a burst is answered while the same hash still runs.
      await burst();
      expect(await yielded()).toBeGreaterThan(quiet + 1);
    } finally {
      done();
    }
    const after = await yielded();
    await burst();
    expect(await yielded()).toBe(after);
  });

  it('refuses CHAP and EAP without an identity response with an Access-Reject', async () => {
    const key = Buffer.from(secret);
    const chap = encodeRequest(Code.accessRequest, 3, randomBytes(16), [
      { type: Attr.userName, value: Buffer.from('ada') },
      { type: Attr.chapPassword, value: randomBytes(17) },
    ], key);
    expect(decodePacket((await exchange(port, chap))!).code).toBe(Code.accessReject);
  });
});

describe('the audit, written behind (decision 0411)', () => {
  it('reaches audit_log unasked within a moment, and what is still queued when the writer closes', async () => {
    // In the order they happened (PostgreSQL's heap order is not that once a page has room again).
    const read = () => many(t.db.select().from(auditLog).where(eq(auditLog.action, 'radius.accepted')).orderBy(asc(auditLog.at), asc(auditLog.id)));
    const before = (await audits('radius.accepted')).length;
    expect((await pap(port, secret, 'ada@example.com', ada.password))!.code).toBe(Code.accessAccept);
    await vi.waitFor(async () => expect(await read()).toHaveLength(before + 1), { timeout: 3_000, interval: 50 });

    const behind = new AuditWriteBehind(t.db, { error: (_details, message) => expect.fail(message) }, 60_000);
    behind.add(t.clock.now(), { actor: 'system', action: 'radius.accepted', applicationId: 'wifi', target: adaId, details: { client: 'Loopback AP', address: '127.0.0.1', method: 'pap' }, ip: '127.0.0.1' });
    expect(await read()).toHaveLength(before + 1);
    await behind.close();
    expect((await read()).at(-1)).toMatchObject({ actor: 'system', applicationId: 'wifi', target: adaId, ip: '127.0.0.1', details: { client: 'Loopback AP', address: '127.0.0.1', method: 'pap' } });
    expect(await read()).toHaveLength(before + 2);

    // A full write's worth (ROWS_PER_INSERT) goes in at once, not at the timer (here a minute away).
    const full = new AuditWriteBehind(t.db, { error: (_details, message) => expect.fail(message) }, 60_000);
    for (let i = 0; i < ROWS_PER_INSERT; i++) full.add(t.clock.now(), { actor: 'system', action: 'radius.accepted', applicationId: 'wifi', target: adaId, details: { client: 'Loopback AP', address: '127.0.0.1', method: 'pap' }, ip: '127.0.0.1' });
    await vi.waitFor(async () => expect(await read()).toHaveLength(before + 2 + ROWS_PER_INSERT), { timeout: 3_000, interval: 20 });
    await full.close();
  });
});

describe('accounting', () => {
  it('keeps a session the server admitted on the person\'s page, updated by Stop', async () => {
    const answer = (await pap(port, secret, 'ada@example.com', ada.password))!;
    const klass = attr(answer, Attr.class)[0]!;
    const key = Buffer.from(secret);
    const report = (status: number, seconds: number) =>
      encodeRequest(Code.accountingRequest, status, Buffer.alloc(16), [
        { type: Attr.acctStatusType, value: integer(status) },
        { type: Attr.acctSessionId, value: Buffer.from('sess-42') },
        { type: Attr.userName, value: Buffer.from('ada') },
        { type: Attr.class, value: klass },
        { type: Attr.callingStationId, value: Buffer.from('02-00-00-00-00-01') },
        { type: Attr.acctSessionTime, value: integer(seconds) },
        { type: Attr.acctInputOctets, value: integer(1000 * seconds) },
      ], key);
    const start = decodePacket((await exchange(acctPort, report(1, 0)))!);
    expect(start.code).toBe(Code.accountingResponse);
    expect(decodePacket((await exchange(acctPort, report(2, 60)))!).code).toBe(Code.accountingResponse);
    const listed = await t.admin('GET', `/api/admin/people/${adaId}/radius-sessions`);
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().radiusSessions).toEqual([
      {
        id: expect.stringMatching(/^ras_/), applicationId: 'wifi', applicationName: 'wifi', client: 'Loopback AP',
        callingStationId: '02-00-00-00-00-01', startedAt: expect.any(String), updatedAt: expect.any(String), stoppedAt: expect.any(String),
        inputOctets: 60_000, outputOctets: 0, sessionSeconds: 60,
      },
    ]);
    // A wrong Request Authenticator: dropped.
    const forged = report(3, 90);
    forged.writeUInt8(forged.readUInt8(5) ^ 1, 5);
    expect(await exchange(acctPort, forged, 300)).toBeUndefined();
  });
});

describe('network certificates on the account page', () => {
  it('lists none, makes one (the profile, the PKCS#12 and its password shown once on their own page), lists it and revokes it', async () => {
    const { res: page, cookie } = await openPage(t, '/account', ada.cookie);
    expect(page.body).toContain('<h2 id="network-certificates-h">Network certificates (Wi-Fi and VPN)</h2>');
    expect(page.body).toMatch(/<form method="post" action="\/account\/network-certificates"[^>]*>[\s\S]*?<option value="wifi">wifi<\/option>/);
    const token = csrfFrom(page);
    const made = await postForm(t, '/account/network-certificates', { csrf_token: token, application_id: 'wifi', name: 'Ada <phone>' }, cookie);
    expect(made.statusCode, made.body).toBe(200);
    expect(made.headers['cache-control']).toBe('no-store');
    expect(made.body).toContain('For “Ada &lt;phone&gt;” (wifi).');
    expect(/<code data-network-certificate-password>([^<]+)<\/code>/.exec(made.body)?.[1]).toMatch(/^[a-z2-9]{5}(-[a-z2-9]{5}){3}$/);
    const profile = /download="Ada-phone-.mobileconfig" href="data:application\/x-apple-aspen-config;base64,([^"]+)"/.exec(made.body)?.[1];
    expect(Buffer.from(profile!, 'base64').toString()).toContain('<string>com.apple.wifi.managed</string>');
    expect(made.body).toMatch(/download="Ada-phone-.p12" href="data:application\/x-pkcs12;base64,[A-Za-z0-9+/=]+"/);

    const listed = (await openPage(t, '/account', ada.cookie)).res.body;
    const id = /data-network-certificate="(ncr_[^"]+)"/.exec(listed)?.[1];
    expect(listed).toMatch(/<strong>Ada &lt;phone&gt;<\/strong><div class="muted">wifi · made [^<]+ · valid until [^<]+<\/div>/);
    const row = (await many(t.db.select().from(networkCertificates).where(eq(networkCertificates.id, id!))))[0]!;
    expect(row.notAfter.getTime() - t.clock.now().getTime()).toBeLessThanOrEqual(365 * 86_400_000);

    const revoked = await postForm(t, `/account/network-certificates/${id}/revoke`, { csrf_token: token }, cookie);
    expect(revoked.statusCode).toBe(303);
    expect(revoked.headers.location).toBe('/account?notice=network_certificate_revoked#network-certificates');
    expect((await openPage(t, '/account', ada.cookie)).res.body).toMatch(/wifi · revoked [^<]+<\/div>/);
    expect((await postForm(t, '/account/network-certificates', { application_id: 'wifi', name: 'x' }, cookie)).statusCode).toBe(403);
  });
});

describe('the listener in the server', () => {
  it('starts and stops with it (GATEHOUSE_RADIUS=on); the overview, gatehouse status and /metrics show it', async () => {
    const on = tempDataDir();
    const running = await startServer(on, { GATEHOUSE_RADIUS: 'on', GATEHOUSE_RADIUS_HOST: '127.0.0.1', GATEHOUSE_RADIUS_PORT: '0', GATEHOUSE_RADIUS_ACCT_PORT: '0' });
    const state = running.radius!.state();
    expect(state).toMatchObject({ enabled: true, conversations: 0 });
    expect(state.auth).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(state.accounting).toMatch(/^127\.0\.0\.1:\d+$/);
    const overview = await running.app.inject({ method: 'GET', url: '/api/admin/overview', headers: { authorization: `Bearer ${OPS_ADMIN_TOKEN}` } });
    expect(overview.json().radius).toEqual({ enabled: true, auth: state.auth, accounting: state.accounting, conversations: 0 });
    expect(formatStatus((await readStatus(on, [], {}, [radiusStatus]))!, [radiusStatus])).toContain(`RADIUS           on: UDP ${state.auth} (authentication), ${state.accounting} (accounting)\n`);
    const scraped = await running.app.inject({ method: 'GET', url: '/metrics' });
    expect(scraped.body).toContain('# TYPE gatehouse_radius_requests_total counter');
    await running.stop();
    expect(formatStatus((await readStatus(on, [], {}, [radiusStatus]))!, [radiusStatus])).toContain(`RADIUS           on when the server last ran: UDP ${state.auth} (authentication), ${state.accounting} (accounting)\n`);
  }, 90_000);
});

describe('every statement RADIUS runs uses an index', () => {
  it('certificates by fingerprint, sessions by key and by person', async () => {
    const statements = [
      { sql: t.db.select().from(networkCertificates).where(eq(networkCertificates.fingerprint, 'x')).toSQL(), index: 'network_certificates_fingerprint_uq' },
      { sql: t.db.select().from(radiusSessions).where(and(eq(radiusSessions.applicationId, 'a'), eq(radiusSessions.nasAddress, 'b'), eq(radiusSessions.acctSessionId, 'c'))).toSQL(), index: 'radius_sessions_key_uq' },
      { sql: t.db.select().from(radiusSessions).where(eq(radiusSessions.personId, 'p')).toSQL(), index: 'radius_sessions_person_idx' },
      { sql: t.db.select().from(networkCertificates).where(eq(networkCertificates.personId, 'p')).toSQL(), index: 'network_certificates_person_idx' },
    ];
    for (const { sql, index } of statements) {
      // drizzle writes PostgreSQL's placeholders as $n; queryPlan numbers `?` itself.
      const plan = await queryPlan(t.db, sql.sql.replace(/\$\d+/g, '?'), ...sql.params);
      if (engineOf(t.db) === 'sqlite') expect(plan, sql.sql).toContain(`USING INDEX ${index}`);
      else expect(usesPostgresIndex(plan, index), plan).toBe(true);
    }
  });
});
