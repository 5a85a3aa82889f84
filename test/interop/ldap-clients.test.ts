/**
 * The LDAP directory against the real clients the issue names (spec ldap.md, "Tested with real
 * clients"), all Debian's, each started here with its own configuration in a temporary directory
 * against one built server (`gatehouse serve --ldap`, LAN TLS on, LDAP on free loopback ports):
 * - OpenLDAP's ldapsearch, ldapwhoami and ldapmodify: plain, StartTLS (-ZZ) and LDAPS with the
 *   LAN CA from LDAPTLS_CACERT, paged results (-E pr=…), writes refused;
 * - python3-ldap3 (/usr/bin/python3): StartTLS, Who am I, a paged search;
 * - Apache httpd with mod_authnz_ldap: Basic auth on a location, `Require ldap-filter` on a group;
 * - nslcd: `getent passwd`, `getent group` and `id` resolved through it, in a private mount
 *   namespace (`unshare -m`, a tmpfs on /run, nslcd.conf and nsswitch.conf bind-mounted over
 *   /etc's inside it only): the machine's own files are never touched.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cleanEnv, startServer, type ServerProcess } from '../helpers/server-process.js';
import { freePort } from '../helpers/free-port.js';
import { caFetch, type CaFetch } from '../helpers/ca-fetch.js';

const ADMIN_TOKEN = 'interop-ldap-admin-token-0123456789';
const PASSWORD = 'correct horse battery';
const BASE = 'dc=gatehouse';
const SERVICE = `cn=media,ou=services,${BASE}`;

let dir: string;
let server: ServerProcess;
let https: CaFetch;
let ldapPort: number;
let ldapsPort: number;
let caFile: string;
let servicePassword: string;
const appPasswords: Record<string, string> = {};
const uidNumbers: Record<string, number> = {};
let familyGid: number;

function run(command: string, args: string[], env: Record<string, string> = {}, input?: string): SpawnSyncReturns<string> {
  return spawnSync(command, args, { encoding: 'utf8', input, timeout: 30_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });
}

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await https(`${server.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-ldap-interop-'));
  chmodSync(dir, 0o755);
  ldapPort = await freePort();
  ldapsPort = await freePort();
  const dataDir = join(dir, 'data');
  server = await startServer(process.execPath, [CLI, 'serve', '--port', '0', '--tls', 'auto', '--ldap', '--data-dir', dataDir], cleanEnv({
    ADMIN_TOKEN, GATEHOUSE_LDAP_PORT: String(ldapPort), GATEHOUSE_LDAPS_PORT: String(ldapsPort), GATEHOUSE_SIGN_UP_RATE_LIMIT: '1000',
  }));
  caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, readFileSync(join(dataDir, 'tls', 'ca.pem')));
  chmodSync(caFile, 0o644);
  https = caFetch(readFileSync(caFile, 'utf8'));
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const created = await api('POST', '/api/admin/applications', {
    id: 'media', name: 'Media', audience: 'https://media.example.com', clientType: 'spa', redirectUris: ['https://media.example.com/cb'],
    authPolicy: { signup_policy: 'open' }, ldap: { enabled: true },
  }, admin);
  expect(created.status).toBe(201);
  servicePassword = created.body.ldapPassword;
  for (const name of ['ada', 'bob', 'cy']) {
    const signedUp = await api('POST', '/api/auth/sign-up/email', { email: `${name}@example.com`, password: PASSWORD, name: `${name[0]!.toUpperCase()}${name.slice(1)} Example`, applicationId: 'media' });
    expect(signedUp.status).toBe(201);
    const cookie = signedUp.headers.getSetCookie().find((c) => c.startsWith('__Host-gatehouse_session=') || c.startsWith('gatehouse_session='))!.split(';')[0]!;
    const made = await api('POST', '/api/me/app-passwords', { applicationId: 'media', name: 'interop' }, { cookie });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    appPasswords[name] = made.body.password;
  }
  // Directory groups, through the admin API.
  const people = (await api('GET', '/api/admin/people?limit=10', undefined, admin)).body.people as { id: string; email: string }[];
  const ids = Object.fromEntries(people.map((p) => [p.email.split('@')[0]!, p.id]));
  for (const [id, name, description] of [['family', 'Family', 'The family'], ['admins', 'Admins', null]] as const) {
    expect((await api('POST', '/api/admin/groups', { id, name, description }, admin)).status).toBe(201);
  }
  for (const [group, person] of [['family', 'ada'], ['family', 'bob'], ['admins', 'ada']] as const) {
    expect((await api('PUT', `/api/admin/groups/${group}/members/${ids[person]}`, undefined, admin)).status).toBe(204);
  }
  // The numbers the directory gave them, read as a client sees them.
  const numbers = run('ldapsearch', ['-x', '-LLL', '-H', `ldap://127.0.0.1:${ldapPort}`, '-D', SERVICE, '-w', servicePassword, '-b', BASE, '(|(objectClass=posixAccount)(objectClass=posixGroup))', 'uid', 'cn', 'uidNumber', 'gidNumber']);
  for (const entry of numbers.stdout.trim().split('\n\n')) {
    const uid = /^uid: (.+)$/m.exec(entry)?.[1];
    if (uid) uidNumbers[uid] = Number(/^uidNumber: (\d+)$/m.exec(entry)![1]);
    if (/^dn: cn=family,/m.test(entry)) familyGid = Number(/^gidNumber: (\d+)$/m.exec(entry)![1]);
  }
  expect(Object.keys(uidNumbers).sort()).toEqual(['ada', 'bob', 'cy']);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ldapUrl = () => `ldap://127.0.0.1:${ldapPort}`;
const tls = () => ({ LDAPTLS_CACERT: caFile, LDAPTLS_REQCERT: 'demand' });

describe('OpenLDAP clients (ldap-utils)', () => {
  it('ldapwhoami: the service account and a person over StartTLS and LDAPS; a wrong password is 49', () => {
    const service = run('ldapwhoami', ['-x', '-ZZ', '-H', ldapUrl(), '-D', SERVICE, '-w', servicePassword], tls());
    expect({ status: service.status, stdout: service.stdout, stderr: service.stderr }).toEqual({ status: 0, stdout: `dn:${SERVICE}\n`, stderr: '' });
    const person = run('ldapwhoami', ['-x', '-H', `ldaps://127.0.0.1:${ldapsPort}`, '-D', 'ada@example.com', '-w', appPasswords.ada!], tls());
    expect({ status: person.status, stdout: person.stdout }).toEqual({ status: 0, stdout: `dn:uid=ada,ou=people,${BASE}\n` });
    const wrong = run('ldapwhoami', ['-x', '-H', ldapUrl(), '-D', `uid=ada,ou=people,${BASE}`, '-w', PASSWORD]);
    expect(wrong.status).toBe(49);
    expect(wrong.stderr).toContain('ldap_bind: Invalid credentials (49)');
    // Without the CA, StartTLS is refused by the client: the certificate is the LAN CA's.
    const untrusted = run('ldapwhoami', ['-x', '-ZZ', '-H', ldapUrl(), '-D', SERVICE, '-w', servicePassword], { LDAPTLS_REQCERT: 'demand', LDAPTLS_CACERT: '/dev/null' });
    expect(untrusted.status).not.toBe(0);
  });

  it('ldapsearch: the root DSE anonymously, the people and groups with their attributes, paged results', () => {
    const dse = run('ldapsearch', ['-x', '-LLL', '-H', ldapUrl(), '-b', '', '-s', 'base', 'namingContexts', 'supportedExtension', 'supportedControl']);
    expect(dse.stdout).toBe([
      'dn:', `namingContexts: ${BASE}`, 'supportedExtension: 1.3.6.1.4.1.1466.20037', 'supportedExtension: 1.3.6.1.4.1.4203.1.11.3',
      'supportedControl: 1.2.840.113556.1.4.319', '', '',
    ].join('\n'));
    const ada = run('ldapsearch', ['-x', '-LLL', '-ZZ', '-H', ldapUrl(), '-D', SERVICE, '-w', servicePassword, '-b', BASE, '(uid=ADA)', 'uid', 'cn', 'mail', 'memberOf', 'uidNumber', 'gidNumber', 'homeDirectory'], tls());
    expect(ada.stdout).toBe([
      `dn: uid=ada,ou=people,${BASE}`, 'uid: ada', 'cn: Ada Example', 'mail: ada@example.com',
      `memberOf: cn=admins,ou=groups,${BASE}`, `memberOf: cn=family,ou=groups,${BASE}`,
      `uidNumber: ${uidNumbers.ada}`, `gidNumber: ${uidNumbers.ada}`, 'homeDirectory: /home/ada', '', '',
    ].join('\n'));
    const family = run('ldapsearch', ['-x', '-LLL', '-H', ldapUrl(), '-D', SERVICE, '-w', servicePassword, '-b', `ou=groups,${BASE}`, '(&(objectClass=posixGroup)(memberUid=bob))', 'cn', 'memberUid', 'member', 'gidNumber']);
    expect(family.stdout).toBe([
      `dn: cn=family,ou=groups,${BASE}`, 'cn: family',
      `member: uid=ada,ou=people,${BASE}`, `member: uid=bob,ou=people,${BASE}`, 'memberUid: ada', 'memberUid: bob', `gidNumber: ${familyGid}`, '', '',
    ].join('\n'));
    const paged = run('ldapsearch', ['-x', '-LLL', '-H', ldapUrl(), '-D', SERVICE, '-w', servicePassword, '-b', `ou=people,${BASE}`, '-s', 'one', '-E', 'pr=1/noprompt', '(objectClass=person)', '1.1']);
    expect(paged.status).toBe(0);
    expect(paged.stdout.match(/^dn: /gm)).toHaveLength(3);
    expect(paged.stdout.match(/^# pagedresults: cookie=/gm)?.length ?? paged.stdout.match(/pagedresults/g)?.length).toBeGreaterThan(0);
    const anonymous = run('ldapsearch', ['-x', '-LLL', '-H', ldapUrl(), '-b', BASE, '(uid=ada)']);
    expect(anonymous.status).toBe(50);
  });

  it('ldapmodify: every write is refused with 53', () => {
    const modify = run('ldapmodify', ['-x', '-H', ldapUrl(), '-D', SERVICE, '-w', servicePassword], {}, `dn: uid=ada,ou=people,${BASE}\nchangetype: modify\nreplace: cn\ncn: Someone Else\n`);
    expect(modify.status).toBe(53);
    expect(modify.stderr).toContain('Server is unwilling to perform (53)');
    expect(modify.stderr).toContain('additional info: this directory is read-only');
  });
});

describe("docs/ldap.md's copyable lines", () => {
  it("'Check it works' runs as written: only the host, the base and the password typed at -W are this test's", () => {
    const doc = readFileSync(new URL('../../docs/ldap.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Check it works'), doc.indexOf('\n## ', doc.indexOf('## Check it works') + 1));
    const lines = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.trim().split('\n'));
    expect(lines.map((l) => l.split(' -H ')[0])).toEqual([
      'ldapwhoami -x', 'LDAPTLS_CACERT=gatehouse-ca.pem ldapwhoami -x -ZZ', 'ldapwhoami -x', 'ldapsearch -x -LLL',
    ]);
    const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
    const results = lines.map((line) => {
      const password = line.includes("-D 'ada@example.com'") ? appPasswords.ada! : servicePassword;
      const command = line
        .replaceAll('ldap://gatehouse.lan:3890', ldapUrl())
        .replaceAll('dc=gatehouse,dc=lan', BASE)
        .replace('LDAPTLS_CACERT=gatehouse-ca.pem', `LDAPTLS_REQCERT=demand LDAPTLS_CACERT=${quote(caFile)}`)
        .replace(/ -W( |$)/, ` -w ${quote(password)}$1`);
      const ran = run('sh', ['-c', command]);
      return { status: ran.status, stdout: ran.stdout, stderr: ran.stderr };
    });
    expect(results).toEqual([
      { status: 0, stdout: `dn:${SERVICE}\n`, stderr: '' },
      { status: 0, stdout: `dn:${SERVICE}\n`, stderr: '' },
      { status: 0, stdout: `dn:uid=ada,ou=people,${BASE}\n`, stderr: '' },
      {
        status: 0,
        stdout: [`dn: uid=ada,ou=people,${BASE}`, 'uid: ada', 'mail: ada@example.com', `memberOf: cn=admins,ou=groups,${BASE}`, `memberOf: cn=family,ou=groups,${BASE}`, '', ''].join('\n'),
        stderr: '',
      },
    ]);
    // What the section says a wrong password answers.
    const wrong = run('sh', ['-c', `ldapwhoami -x -H ${ldapUrl()} -D 'ada@example.com' -w ${quote(PASSWORD)}`]);
    expect({ status: wrong.status, stderr: wrong.stderr }).toEqual({ status: 49, stderr: 'ldap_bind: Invalid credentials (49)\n' });
  });
});

describe('python3-ldap3', () => {
  it('binds over StartTLS, asks Who am I, and pages through the people', () => {
    const script = `
import json, ssl, sys
from ldap3 import Server, Connection, Tls, SUBTREE
tls = Tls(validate=ssl.CERT_REQUIRED, ca_certs_file=sys.argv[1])
server = Server('127.0.0.1', port=int(sys.argv[2]), tls=tls, get_info=None)
conn = Connection(server, user=sys.argv[3], password=sys.argv[4], auto_bind=False)
conn.open(); conn.start_tls(); assert conn.bind(), conn.result
who = conn.extend.standard.who_am_i()
entries = conn.extend.standard.paged_search('ou=people,${BASE}', '(objectClass=posixAccount)', search_scope=SUBTREE, attributes=['uid', 'uidNumber'], paged_size=2, generator=False)
print(json.dumps({'who': who, 'people': sorted((e['attributes']['uid'][0], int(e['attributes']['uidNumber'][0])) for e in entries)}))
conn.unbind()
`;
    const result = run('/usr/bin/python3', ['-c', script, caFile, String(ldapPort), `uid=bob,ou=people,${BASE}`, appPasswords.bob!]);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({
      who: `dn:uid=bob,ou=people,${BASE}`,
      people: [['ada', uidNumbers.ada], ['bob', uidNumbers.bob], ['cy', uidNumbers.cy]],
    });
  });
});

describe('Apache httpd with mod_authnz_ldap', () => {
  let apache: ChildProcess | undefined;
  let port: number;
  const apacheDir = () => join(dir, 'apache');

  beforeAll(async () => {
    port = await freePort();
    mkdirSync(join(apacheDir(), 'htdocs', 'private'), { recursive: true });
    writeFileSync(join(apacheDir(), 'htdocs', 'private', 'index.html'), 'the admins only\n');
    const modules = '/usr/lib/apache2/modules';
    writeFileSync(join(apacheDir(), 'httpd.conf'), [
      `ServerRoot "${apacheDir()}"`,
      `Listen 127.0.0.1:${port}`,
      'ServerName 127.0.0.1',
      `PidFile "${apacheDir()}/httpd.pid"`,
      `ErrorLog "${apacheDir()}/error.log"`,
      'LogLevel warn authnz_ldap:info',
      `DefaultRuntimeDir "${apacheDir()}"`,
      `Mutex file:${apacheDir()} default`,
      'User www-data',
      'Group www-data',
      ...['mpm_event', 'authn_core', 'authz_core', 'authz_user', 'auth_basic', 'ldap', 'authnz_ldap'].map((m) => `LoadModule ${m}_module ${modules}/mod_${m}.so`),
      `DocumentRoot "${apacheDir()}/htdocs"`,
      `<Directory "${apacheDir()}/htdocs">`,
      '  Require all granted',
      '</Directory>',
      '<Location "/private">',
      '  AuthType Basic',
      '  AuthName "Private"',
      '  AuthBasicProvider ldap',
      `  AuthLDAPURL "ldap://127.0.0.1:${ldapPort}/ou=people,${BASE}?uid?sub?(objectClass=posixAccount)"`,
      `  AuthLDAPBindDN "${SERVICE}"`,
      `  AuthLDAPBindPassword "${servicePassword}"`,
      // `Require ldap-group` asks with an LDAP compare, which the read-only directory refuses (53,
      // spec ldap.md); `ldap-filter` asks with a search (docs/ldap.md).
      `  Require ldap-filter memberOf=cn=admins,ou=groups,${BASE}`,
      '</Location>',
      '',
    ].join('\n'));
    apache = spawn('apache2', ['-X', '-f', join(apacheDir(), 'httpd.conf')], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '' } });
    for (let i = 0; i < 100 && !existsSync(join(apacheDir(), 'httpd.pid')); i++) await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(join(apacheDir(), 'httpd.pid')), 'apache started').toBe(true);
  });

  afterAll(async () => {
    if (apache?.pid && apache.exitCode === null) {
      const exited = new Promise((resolve) => apache!.once('exit', resolve));
      process.kill(apache.pid, 'SIGTERM');
      await exited;
    }
  });

  const get = (user?: string, password?: string) =>
    fetch(`http://127.0.0.1:${port}/private/index.html`, { headers: user ? { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` } : {} });

  it('lets a member of the group in with their app password; others, wrong passwords and account passwords get 401', async () => {
    const none = await get();
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Basic realm="Private"');
    const ada = await get('ada', appPasswords.ada);
    expect(ada.status, readFileSync(join(apacheDir(), 'error.log'), 'utf8')).toBe(200);
    expect(await ada.text()).toBe('the admins only\n');
    expect((await get('bob', appPasswords.bob)).status).toBe(401); // not in admins
    expect((await get('ada', appPasswords.bob)).status).toBe(401); // someone else's app password
    expect((await get('ada', PASSWORD)).status).toBe(401); // the account password never binds
    expect((await get('nobody', 'x')).status).toBe(401);
  });
});

describe('nslcd (NSS through LDAP)', () => {
  it('resolves getent passwd, getent group and id inside a private mount namespace', () => {
    const ns = join(dir, 'nss');
    mkdirSync(ns, { recursive: true });
    chmodSync(ns, 0o755);
    writeFileSync(join(ns, 'nslcd.conf'), [
      'uid nslcd',
      'gid nslcd',
      `uri ldap://127.0.0.1:${ldapPort}/`,
      `base ${BASE}`,
      `binddn ${SERVICE}`,
      `bindpw ${servicePassword}`,
      'ssl start_tls',
      'tls_reqcert demand',
      `tls_cacertfile ${caFile}`,
      '',
    ].join('\n'), { mode: 0o600 });
    writeFileSync(join(ns, 'nsswitch.conf'), 'passwd: files ldap\ngroup: files ldap\nshadow: files\nhosts: files\n', { mode: 0o644 });
    // Inside the namespace only: a tmpfs on /run (nslcd's socket directory, and no nscd), the two files over /etc's.
    const script = [
      'set -e',
      'mount -t tmpfs tmpfs /run',
      'mkdir -p /run/nslcd && chown nslcd:nslcd /run/nslcd',
      `mount --bind ${ns}/nslcd.conf /etc/nslcd.conf`,
      `mount --bind ${ns}/nsswitch.conf /etc/nsswitch.conf`,
      'nslcd -d > /run/nslcd.log 2>&1 & nslcd=$!',
      // Whatever happens below, nslcd (our child) goes with the script.
      'trap "kill $nslcd 2>/dev/null" EXIT',
      'for i in $(seq 1 100); do [ -S /run/nslcd/socket ] && break; sleep 0.1; done',
      'echo "== passwd ada"; getent passwd ada',
      `echo "== passwd ${uidNumbers.bob}"; getent passwd ${uidNumbers.bob}`,
      'echo "== group family"; getent group family',
      'echo "== id ada"; id ada',
      'echo "== passwd all"; getent passwd | grep -E "^(ada|bob|cy):" | sort',
      'echo "== unknown"; getent passwd nobody-here || echo "exit $?"',
    ].join('\n');
    const result = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script], { encoding: 'utf8', timeout: 60_000 });
    expect(result.stderr).toBe('');
    const passwd = (name: string) => `${name}:*:${uidNumbers[name]}:${uidNumbers[name]}:${name[0]!.toUpperCase()}${name.slice(1)} Example:/home/${name}:/bin/sh`;
    expect(result.stdout).toBe([
      '== passwd ada', passwd('ada'),
      `== passwd ${uidNumbers.bob}`, passwd('bob'),
      '== group family', `family:*:${familyGid}:ada,bob`,
      // The groups in the order the directory answers nslcd's search (by id).
      '== id ada', `uid=${uidNumbers.ada}(ada) gid=${uidNumbers.ada} groups=${uidNumbers.ada},${familyGid + 1}(admins),${familyGid}(family)`,
      '== passwd all', passwd('ada'), passwd('bob'), passwd('cy'),
      '== unknown', 'exit 2',
      '',
    ].join('\n'));
    // The machine's own files are untouched.
    expect(readFileSync('/etc/nsswitch.conf', 'utf8')).not.toContain('ldap');
    expect(existsSync('/run/nslcd/socket')).toBe(false);
  });
});
