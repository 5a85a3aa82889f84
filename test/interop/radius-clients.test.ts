/**
 * RADIUS against the real clients the issue names (spec radius.md; issue 43, item 7), all
 * Debian's, each started here with its configuration in a temporary directory against one server
 * whose RADIUS listeners are on free loopback ports:
 * - FreeRADIUS's radtest and radclient (freeradius-utils): PAP with an app password, the VLAN's
 *   tunnel attributes, and the same Access-Reject for a wrong password, an account password and
 *   an unknown name;
 * - python3-pyrad (/usr/bin/python3): PAP with a Message-Authenticator it is given, the answer's
 *   attributes decoded by pyrad's own dictionary code, a refusal;
 * - wpa_supplicant's eapol_test (eapoltest): EAP-TTLS/PAP against the appliance CA (the MS-MPPE
 *   keys checked against the MSK it derives), EAP-TLS with a network certificate issued through
 *   the API (then refused while the person is disabled, the membership suspended or the person
 *   outside the application's group rule, and once revoked), and PEAP refused.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/accounts.js';
import { insertGroup, memberWithAppPassword, personByEmail } from '../helpers/ldap.js';
import { radiusApplication, startRadiusFor } from '../helpers/radius.js';
import { me } from '../helpers/self-service.js';
import { eapMaterial } from '../../server/radius/credentials.js';
import { and, eq } from 'drizzle-orm';
import { memberships } from '../../server/db/schema.js';
import { many } from '../../server/db/store.js';

let t: TestApp;
let dir: string;
let port: number;
let secret: string;
let caFile: string;
let ada: { cookie: string; password: string };
let bob: { cookie: string; password: string };

function run(command: string, args: string[], input?: string): SpawnSyncReturns<string> {
  return spawnSync(command, args, { encoding: 'utf8', input, timeout: 30_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
}

// spawnSync would block the event loop the server answers on: run the clients asynchronously.
import { spawn } from 'node:child_process';
function runAsync(command: string, args: string[], input?: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
  });
}


beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-radius-'));
  t = await makeApp({ perFile: true, config: { dataDir: dir } });
  secret = await radiusApplication(t, 'wifi', { vlans: [{ group: 'staff', vlan: 20 }], defaultVlan: 99 });
  ada = await memberWithAppPassword(t, 'ada@example.com', 'wifi');
  bob = await memberWithAppPassword(t, 'bob@example.com', 'wifi');
  await insertGroup(t, 'staff', [(await personByEmail(t, 'ada@example.com')).id]);
  ({ port } = await startRadiusFor(t));
  caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, eapMaterial(t.config, new Date()).ca);
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const username = async (email: string) => (await personByEmail(t, email)).username;

describe('radtest and radclient (freeradius-utils)', () => {
  it('PAP with an app password is accepted with User-Name, Class and the group\'s VLAN', async () => {
    const name = await username('ada@example.com');
    const res = await runAsync('radtest', ['-x', name, ada.password, `127.0.0.1:${port}`, '0', secret]);
    expect(res.stdout).toMatch(/Received Access-Accept Id \d+ from 127\.0\.0\.1:\d+ to [^ ]+ length \d+/);
    expect(res.stdout).toContain(`User-Name = "${name}"`);
    expect(res.stdout).toMatch(/Tunnel-Type:0 = VLAN/);
    expect(res.stdout).toMatch(/Tunnel-Medium-Type:0 = IEEE-802/);
    expect(res.stdout).toMatch(/Tunnel-Private-Group-Id:0 = "20"/);
    expect(res.stdout).toMatch(/Class = 0x6761746568/);
    expect(res.status).toBe(0);
  });

  it('someone in no VLAN group gets the default VLAN (radclient, by e-mail address)', async () => {
    const input = `User-Name = "bob@example.com"\nUser-Password = "${bob.password}"\nMessage-Authenticator = 0x00\n`;
    const res = await runAsync('radclient', ['-x', '-r', '1', '-t', '5', `127.0.0.1:${port}`, 'auth', secret], input);
    expect(res.stdout).toMatch(/Received Access-Accept/);
    expect(res.stdout).toMatch(/Tunnel-Private-Group-Id:0 = "99"/);
  });

  it('a wrong password, the account password and an unknown name get the same Access-Reject', async () => {
    const name = await username('ada@example.com');
    const answers: string[] = [];
    for (const [user, password] of [[name, 'wrong-password'], ['ada@example.com', PASSWORD], ['nobody@example.com', ada.password]] as const) {
      const res = await runAsync('radclient', ['-x', '-r', '1', '-t', '5', `127.0.0.1:${port}`, 'auth', secret], `User-Name = "${user}"\nUser-Password = "${password}"\nMessage-Authenticator = 0x00\n`);
      expect(res.stdout).toMatch(/Received Access-Reject Id \d+ from 127\.0\.0\.1:\d+ to [^ ]+ length 38/);
      answers.push(res.stdout.slice(res.stdout.indexOf('Received')).split('\n').slice(1).join('|'));
    }
    expect(answers[0]).toMatch(/Message-Authenticator = 0x/);
    expect(new Set(answers.map((a) => a.replace(/0x[0-9a-f]+/g, '0x…'))).size).toBe(1);
  });

  it('a request without Message-Authenticator is dropped (BlastRADIUS): no answer', async () => {
    const res = await runAsync('radclient', ['-x', '-r', '1', '-t', '1', `127.0.0.1:${port}`, 'auth', secret], `User-Name = "x"\nUser-Password = "${ada.password}"\n`);
    expect(res.stdout + res.stderr).toMatch(/No reply from server/);
    expect(res.status).not.toBe(0);
  });

  it('a wrong shared secret is dropped: no answer', async () => {
    const res = await runAsync('radclient', ['-x', '-r', '1', '-t', '1', `127.0.0.1:${port}`, 'auth', 'not-the-secret'], `User-Name = "x"\nUser-Password = "y"\nMessage-Authenticator = 0x00\n`);
    expect(res.stdout + res.stderr).toMatch(/No reply from server/);
  });
});

const PYRAD = String.raw`
import sys, socket, hmac, hashlib
from pyrad import packet, dictionary
import io
DICT = """
ATTRIBUTE User-Name 1 string
ATTRIBUTE User-Password 2 string encrypt=1
ATTRIBUTE Class 25 octets
ATTRIBUTE Tunnel-Type 64 octets
ATTRIBUTE Tunnel-Medium-Type 65 octets
ATTRIBUTE Message-Authenticator 80 octets
ATTRIBUTE Tunnel-Private-Group-Id 81 octets
"""
d = dictionary.Dictionary(io.StringIO(DICT))
port, secret, user, password = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3], sys.argv[4]
req = packet.AuthPacket(code=packet.AccessRequest, id=7, secret=secret, dict=d)
req["User-Name"] = user
req["User-Password"] = req.PwCrypt(password)
req["Message-Authenticator"] = b"\x00" * 16
raw = bytearray(req.RequestPacket())
mac = hmac.new(secret, bytes(raw), hashlib.md5).digest()
at = raw.index(bytes([80, 18]) + b"\x00" * 16, 20)
raw[at + 2:at + 18] = mac
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
s.sendto(bytes(raw), ("127.0.0.1", port))
data, _ = s.recvfrom(4096)
reply = packet.Packet(packet=data, secret=secret, dict=d)
print("verified", req.VerifyReply(reply, data))
print("code", reply.code)
for key in sorted(reply.keys()):
    values = reply[key]
    print(key, [v.hex() if isinstance(v, bytes) else v for v in values])
`;

describe('python3-pyrad', () => {
  it('PAP accepted: the answer verifies and carries the tunnel attributes', async () => {
    const script = join(dir, 'pyrad-client.py');
    writeFileSync(script, PYRAD);
    const name = await username('ada@example.com');
    const res = await runAsync('/usr/bin/python3', [script, String(port), secret, name, ada.password]);
    expect(res.stderr).toBe('');
    expect(res.stdout).toContain('verified True');
    expect(res.stdout).toContain('code 2');
    expect(res.stdout).toContain(`User-Name ['${name}']`);
    expect(res.stdout).toContain("Tunnel-Type ['0000000d']");
    expect(res.stdout).toContain("Tunnel-Medium-Type ['00000006']");
    expect(res.stdout).toContain("Tunnel-Private-Group-Id ['003230']");
  });

  it('a wrong password: Access-Reject', async () => {
    const script = join(dir, 'pyrad-client.py');
    const res = await runAsync('/usr/bin/python3', [script, String(port), secret, 'bob@example.com', 'not-it']);
    expect(res.stdout).toContain('verified True');
    expect(res.stdout).toContain('code 3');
  });
});

function eapolConfig(name: string, network: string): string {
  const file = join(dir, `${name}.conf`);
  writeFileSync(file, `network={\n  key_mgmt=WPA-EAP\n${network}\n}\n`);
  return file;
}

async function eapolTest(config: string) {
  return runAsync('eapol_test', ['-c', config, '-a', '127.0.0.1', '-p', String(port), '-s', secret, '-t', '20']);
}

describe('eapol_test (wpa_supplicant)', () => {
  it('EAP-TTLS/PAP with an app password, the server certificate checked against the appliance CA', async () => {
    const name = await username('ada@example.com');
    const config = eapolConfig('ttls', `  eap=TTLS\n  identity="${name}"\n  anonymous_identity="anonymous"\n  password="${ada.password}"\n  ca_cert="${caFile}"\n  phase2="auth=PAP"`);
    const res = await eapolTest(config);
    expect(res.stdout).toContain('EAP: Status notification: remote certificate verification (param=success)');
    expect(res.stdout).toContain('MPPE keys OK');
    expect(res.stdout).toMatch(/SUCCESS\s*$/);
    expect(res.status).toBe(0);
  });

  it('EAP-TTLS/PAP with a wrong password fails', async () => {
    const config = eapolConfig('ttls-wrong', `  eap=TTLS\n  identity="bob@example.com"\n  password="wrong"\n  ca_cert="${caFile}"\n  phase2="auth=PAP"`);
    const res = await eapolTest(config);
    expect(res.stdout).toContain('Access-Reject');
    expect(res.stdout).toMatch(/FAILURE\s*$/);
    expect(res.status).not.toBe(0);
  });

  it('EAP-TLS with a network certificate from the account API; refused while the person is disabled, the membership suspended or outside the group rule, and once revoked', async () => {
    const issued = await me(t, 'POST', '/api/me/network-certificates', ada.cookie, { applicationId: 'wifi', name: 'Laptop' });
    expect(issued.statusCode, issued.body).toBe(201);
    const body = issued.json();
    expect(body.password).toMatch(/^[a-z2-9]{5}(-[a-z2-9]{5}){3}$/);
    const p12 = join(dir, 'ada.p12');
    writeFileSync(p12, Buffer.from(body.pkcs12, 'base64'));
    expect(Buffer.from(body.mobileconfig, 'base64').toString()).toContain('<key>AcceptEAPTypes</key><array><integer>13</integer></array>');
    const name = await username('ada@example.com');
    const config = eapolConfig('tls', `  eap=TLS\n  identity="${name}"\n  ca_cert="${caFile}"\n  private_key="${p12}"\n  private_key_passwd="${body.password}"`);
    const ok = await eapolTest(config);
    expect(ok.stdout).toContain('EAP-Request-TLS (13)');
    expect(ok.stdout).toContain('MPPE keys OK');
    expect(ok.stdout).toMatch(/SUCCESS\s*$/);

    const person = await personByEmail(t, 'ada@example.com');
    expect((await t.admin('PATCH', `/api/admin/people/${person.id}`, { status: 'disabled' })).statusCode).toBe(200);
    const disabled = await eapolTest(config);
    expect(disabled.stdout).toContain('Access-Reject');
    expect(disabled.stdout).toMatch(/FAILURE\s*$/);
    expect((await t.admin('PATCH', `/api/admin/people/${person.id}`, { status: 'active' })).statusCode).toBe(200);
    expect((await eapolTest(config)).stdout).toMatch(/SUCCESS\s*$/);

    // The membership suspended, then the application's group rule naming a group she is not in.
    const [membership] = await many(t.db.select().from(memberships).where(and(eq(memberships.personId, person.id), eq(memberships.applicationId, 'wifi'))));
    expect((await t.admin('PATCH', `/api/admin/applications/wifi/users/${membership!.id}`, { status: 'suspended' })).statusCode).toBe(200);
    const suspended = await eapolTest(config);
    expect(suspended.stdout).toContain('Access-Reject');
    expect(suspended.stdout).toMatch(/FAILURE\s*$/);
    expect((await t.admin('PATCH', `/api/admin/applications/wifi/users/${membership!.id}`, { status: 'active' })).statusCode).toBe(200);
    await insertGroup(t, 'contractors', [(await personByEmail(t, 'bob@example.com')).id]);
    const ruled = await t.admin('PATCH', '/api/admin/applications/wifi', { allowedGroups: ['contractors'] });
    expect(ruled.statusCode, ruled.body).toBe(200);
    const outside = await eapolTest(config);
    expect(outside.stdout).toContain('Access-Reject');
    expect(outside.stdout).toMatch(/FAILURE\s*$/);
    expect((await t.admin('PATCH', '/api/admin/applications/wifi', { allowedGroups: null })).statusCode).toBe(200);
    expect((await eapolTest(config)).stdout).toMatch(/SUCCESS\s*$/);

    expect((await t.admin('DELETE', `/api/admin/people/${person.id}/network-certificates/${body.id}`)).statusCode).toBe(204);
    const revoked = await eapolTest(config);
    expect(revoked.stdout).toContain('Access-Reject');
    expect(revoked.status).not.toBe(0);
  });

  it('PEAP-MSCHAPv2 is never accepted', async () => {
    const config = eapolConfig('peap', `  eap=PEAP\n  identity="bob@example.com"\n  password="${bob.password}"\n  ca_cert="${caFile}"\n  phase2="auth=MSCHAPV2"`);
    const res = await eapolTest(config);
    expect(res.stdout).toContain('EAP-Request-TTLS (21)');
    expect(res.stdout).toContain('Access-Reject');
    expect(res.stdout).not.toContain('Access-Accept');
    expect(res.status).not.toBe(0);
  });
});


