/**
 * Debian's OpenLDAP server (`slapd`) as a directory source for the tests: started from a
 * configuration in a temporary directory (`slapd -f`), on free loopback ports (ldap:// with
 * StartTLS, and ldaps://), with a test CA made by openssl, its data loaded offline by `slapadd`
 * (fast: a few hundred people in well under a second; 100,000 for the bench in about a minute).
 * Never the system service; stopped by its pid. People are `inetOrgPerson` entries
 * `uid=<user>,ou=people,<base>` with cleartext passwords (slapd compares them on bind); groups are
 * `groupOfNames`, `groupOfUniqueNames` and `posixGroup`, one of them nesting another.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, readFileSync, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { once } from 'node:events';
import { Client } from 'ldapts';
import { freePort } from './free-port.js';

export const SLAPD = '/usr/sbin/slapd';
export const SLAPADD = '/usr/sbin/slapadd';
export const BASE = 'dc=example,dc=org';
export const ADMIN_DN = `cn=admin,${BASE}`;
export const ADMIN_PASSWORD = 'admin-secret-0123';
export const PEOPLE_BASE = `ou=people,${BASE}`;
export const GROUPS_BASE = `ou=groups,${BASE}`;

export const personDn = (uid: string) => `uid=${uid},${PEOPLE_BASE}`;
export const groupDn = (cn: string) => `cn=${cn},${GROUPS_BASE}`;
export const passwordOf = (uid: string) => `pw-${uid}-secret`;
/** The username of the n-th generated person (1-based): user0001 … */
export const userName = (n: number) => `user${String(n).padStart(4, '0')}`;

export interface SlapdOptions {
  /** Generated people user0001 …; default 300. */
  people?: number;
  /** Groups: `staff` (groupOfNames, people 1–50), `admins` (groupOfUniqueNames, 1–5), `posix` (posixGroup, 6–10), `everyone` (groupOfNames naming `staff` and `admins`: nested). Default true. */
  groups?: boolean;
  /** More LDIF appended to the generated data. */
  extraLdif?: string;
  /** Extra groups of the bench: that many groupOfNames `g0001…` with `perGroup` members each. */
  benchGroups?: { count: number; perGroup: number };
}

export interface Slapd {
  dir: string;
  /** ldap://127.0.0.1:<port> (StartTLS offered). */
  url: string;
  /** ldaps://127.0.0.1:<port>. */
  ldapsUrl: string;
  /** The test CA that signed slapd's certificate (PEM). */
  caPem: string;
  /** Another CA, which did not (a wrong-CA test). */
  otherCaPem: string;
  /** A client bound as the directory's administrator (over loopback ldap://), closed by `stop`. */
  admin(): Promise<Client>;
  stop(): Promise<void>;
}

function openssl(args: string[], cwd: string) {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

/** A CA and a server certificate for 127.0.0.1 / localhost (EC P-256), and a second unrelated CA. */
export function makeCertificates(dir: string) {
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Gatehouse test directory CA'], dir);
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'other.key', '-out', 'other.pem', '-days', '2', '-subj', '/CN=Some other CA'], dir);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'], dir);
  writeFileSync(join(dir, 'ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext'], dir);
}

function config(dir: string): string {
  return [
    'include /etc/ldap/schema/core.schema',
    'include /etc/ldap/schema/cosine.schema',
    'include /etc/ldap/schema/inetorgperson.schema',
    'include /etc/ldap/schema/nis.schema',
    'modulepath /usr/lib/ldap',
    'moduleload back_mdb',
    `pidfile ${join(dir, 'slapd.pid')}`,
    `TLSCACertificateFile ${join(dir, 'ca.pem')}`,
    `TLSCertificateFile ${join(dir, 'server.pem')}`,
    `TLSCertificateKeyFile ${join(dir, 'server.key')}`,
    'sizelimit unlimited',
    'database mdb',
    'maxsize 2147483648',
    `suffix "${BASE}"`,
    `rootdn "${ADMIN_DN}"`,
    `rootpw ${ADMIN_PASSWORD}`,
    `directory ${join(dir, 'db')}`,
    'index objectClass eq',
    'index uid,mail eq',
    'index entryUUID eq',
    'index member,uniqueMember,memberUid eq',
    '',
  ].join('\n');
}

export function personLdif(n: number, uid = userName(n), extra: string[] = []): string {
  return [
    `dn: ${personDn(uid)}`,
    'objectClass: inetOrgPerson',
    `uid: ${uid}`,
    `cn: Person ${n}`,
    `sn: Family${n}`,
    `givenName: Given${n}`,
    `displayName: Person Number ${n}`,
    `mail: ${uid}@example.org`,
    `userPassword: ${passwordOf(uid)}`,
    ...extra,
    '',
  ].join('\n');
}

/** Writes the generated data as LDIF (streamed: the bench writes 100,000 people). */
async function writeData(file: string, options: SlapdOptions): Promise<void> {
  const out = createWriteStream(file);
  const write = (text: string) => (out.write(text) ? undefined : once(out, 'drain'));
  await write(`dn: ${BASE}\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example\n\n`);
  await write(`dn: ${PEOPLE_BASE}\nobjectClass: organizationalUnit\nou: people\n\n`);
  await write(`dn: ${GROUPS_BASE}\nobjectClass: organizationalUnit\nou: groups\n\n`);
  const count = options.people ?? 300;
  for (let n = 1; n <= count; n++) await write(`${personLdif(n)}\n`);
  if (options.groups !== false) {
    const range = (from: number, to: number) => Array.from({ length: Math.max(0, Math.min(to, count) - from + 1) }, (_, i) => from + i);
    await write([`dn: ${groupDn('staff')}`, 'objectClass: groupOfNames', 'cn: staff', ...range(1, 50).map((n) => `member: ${personDn(userName(n))}`), '', ''].join('\n'));
    await write([`dn: ${groupDn('admins')}`, 'objectClass: groupOfUniqueNames', 'cn: admins', ...range(1, 5).map((n) => `uniqueMember: ${personDn(userName(n))}`), '', ''].join('\n'));
    await write([`dn: ${groupDn('posix')}`, 'objectClass: posixGroup', 'cn: posix', 'gidNumber: 5000', ...range(6, 10).map((n) => `memberUid: ${userName(n)}`), '', ''].join('\n'));
    await write([`dn: ${groupDn('everyone')}`, 'objectClass: groupOfNames', 'cn: everyone', `member: ${groupDn('staff')}`, `member: ${groupDn('admins')}`, `member: ${personDn(userName(Math.min(60, count)))}`, '', ''].join('\n'));
  }
  if (options.benchGroups) {
    const { count: groups, perGroup } = options.benchGroups;
    for (let g = 1; g <= groups; g++) {
      const lines = [`dn: ${groupDn(`g${String(g).padStart(4, '0')}`)}`, 'objectClass: groupOfNames', `cn: g${String(g).padStart(4, '0')}`];
      for (let i = 0; i < perGroup; i++) lines.push(`member: ${personDn(userName(((g * 7919 + i * 104729) % count) + 1))}`);
      await write(`${lines.join('\n')}\n\n`);
    }
  }
  if (options.extraLdif) await write(`${options.extraLdif.trim()}\n\n`);
  out.end();
  await once(out, 'finish');
}

async function waitForPort(port: number, child: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`slapd exited (${child.exitCode}): ${readFileSync(log, 'utf8').slice(-2000)}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('slapd did not start listening in 20 s');
}

/** Starts slapd with generated data; `stop` kills it by pid and removes its directory. */
export async function startSlapd(options: SlapdOptions = {}): Promise<Slapd> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-slapd-'));
  mkdirSync(join(dir, 'db'));
  makeCertificates(dir);
  const conf = join(dir, 'slapd.conf');
  writeFileSync(conf, config(dir));
  const data = join(dir, 'data.ldif');
  await writeData(data, options);
  // -q: quick mode (no consistency checks), as for a bulk load.
  execFileSync(SLAPADD, ['-q', '-f', conf, '-l', data], { stdio: ['ignore', 'ignore', 'pipe'] });
  const [port, ldapsPort] = [await freePort(), await freePort()];
  const log = join(dir, 'slapd.log');
  const logStream = createWriteStream(log);
  const child = spawn(SLAPD, ['-f', conf, '-h', `ldap://127.0.0.1:${port}/ ldaps://127.0.0.1:${ldapsPort}/`, '-d', process.env.SLAPD_DEBUG ?? '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(logStream);
  child.stderr!.pipe(logStream);
  await waitForPort(ldapsPort, child, log);
  await waitForPort(port, child, log);
  const clients: Client[] = [];
  return {
    dir,
    url: `ldap://127.0.0.1:${port}`,
    ldapsUrl: `ldaps://127.0.0.1:${ldapsPort}`,
    caPem: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    otherCaPem: readFileSync(join(dir, 'other.pem'), 'utf8'),
    async admin() {
      const client = new Client({ url: `ldap://127.0.0.1:${port}`, timeout: 10_000 });
      await client.bind(ADMIN_DN, ADMIN_PASSWORD);
      clients.push(client);
      return client;
    },
    async stop() {
      await Promise.all(clients.splice(0).map((c) => c.unbind().catch(() => {})));
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
