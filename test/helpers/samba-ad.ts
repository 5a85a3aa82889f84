/**
 * A real Active Directory domain controller for tests: Debian's Samba (`samba-tool domain
 * provision`, then `samba` with only its LDAP service), from a configuration in a temporary
 * directory, in a private network namespace (`unshare -n`, so its fixed ports 389/636 clash with
 * nothing on the machine and it never touches the host's network). The test reaches it through a
 * bridge: inside the namespace a small Node server forwards a Unix socket in the temporary
 * directory to 127.0.0.1:636; outside, a listener on a free loopback port forwards to that socket.
 * TLS runs end to end under a test CA (openssl, test/helpers/slapd.ts). `stop` kills the process
 * group it started, by pid, and removes the directory.
 *
 * Provisioning costs about 9 s of CPU (50 s wall at load 20); the domain controller is up about
 * 6 s after it starts. One per test file.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Attribute, Client } from 'ldapts';
import { makeCertificates } from './slapd.js';

const run = promisify(execFile);

export const AD_REALM = 'CORP.EXAMPLE';
export const AD_BASE = 'DC=corp,DC=example';
export const AD_ADMIN_DN = `CN=Administrator,CN=Users,${AD_BASE}`;
export const AD_ADMIN_PASSWORD = 'Adm1n-Pass-2026!';
export const AD_PEOPLE_BASE = `OU=Staff,${AD_BASE}`;
export const AD_GROUPS_BASE = `OU=Groups,${AD_BASE}`;

export interface SambaAd {
  /** ldaps://127.0.0.1:<port>, through the bridge. */
  url: string;
  caPem: string;
  /** A CA that did not sign the domain controller's certificate. */
  otherCaPem: string;
  /** A client bound as the domain's Administrator (the caller unbinds it). */
  admin(): Promise<Client>;
  stop(): Promise<void>;
}

const BRIDGE = `
const net = require('node:net');
net.createServer((c) => { const s = net.connect(636, '127.0.0.1'); c.pipe(s).pipe(c); c.on('error', () => s.destroy()); s.on('error', () => c.destroy()); })
  .listen(process.argv[1]);
`;

export async function startSambaAd(): Promise<SambaAd> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-samba-'));
  makeCertificates(dir);
  chmodSync(join(dir, 'server.key'), 0o600);
  const target = join(dir, 'dc');
  await run('unshare', [
    '-n', 'samba-tool', 'domain', 'provision', `--targetdir=${target}`, `--realm=${AD_REALM}`, '--domain=CORP',
    '--server-role=dc', '--dns-backend=NONE', `--adminpass=${AD_ADMIN_PASSWORD}`, '--host-name=dc1',
    '--option=interfaces=lo', '--option=bind interfaces only=yes',
  ], { maxBuffer: 16 * 1024 * 1024 });
  const confFile = join(target, 'etc', 'smb.conf');
  const conf = readFileSync(confFile, 'utf8')
    .replace(/^\s*server services = .*$/m, '\tserver services = ldap')
    .replace(/^\s*log file = .*$/m, `\tlog file = ${join(dir, 'log.%m')}`)
    // Everything it writes in the temporary directory (its pid file too: never /run/samba).
    .replace('[global]', ['[global]', `\tpid directory = ${dir}`, `\tncalrpc dir = ${join(dir, 'ncalrpc')}`, `\twinbindd socket directory = ${join(dir, 'winbindd')}`, `\tntp signd socket directory = ${join(dir, 'ntp')}`, '\ttls enabled = yes', `\ttls keyfile = ${join(dir, 'server.key')}`, `\ttls certfile = ${join(dir, 'server.pem')}`, `\ttls cafile = ${join(dir, 'ca.pem')}`].join('\n'));
  writeFileSync(confFile, conf);

  const socket = join(dir, 'ldaps.sock');
  const script = `ip link set lo up || exit 1; samba -s '${confFile}' -i -M single --no-process-group --debug-stdout > '${join(dir, 'samba.log')}' 2>&1 & exec '${process.execPath}' -e "${BRIDGE.replace(/"/g, '\\"')}" '${socket}'`;
  // Its own process group: samba and the bridge are stopped together, by the group's pid.
  const child: ChildProcess = spawn('unshare', ['-n', 'sh', '-c', script], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));

  const outer: Server = createServer((c) => {
    const s = connect(socket);
    c.pipe(s).pipe(c);
    c.on('error', () => s.destroy());
    s.on('error', () => c.destroy());
  });
  await new Promise<void>((resolve) => outer.listen(0, '127.0.0.1', resolve));
  const port = (outer.address() as { port: number }).port;
  const caPem = readFileSync(join(dir, 'ca.pem'), 'utf8');
  const url = `ldaps://127.0.0.1:${port}`;
  const admin = async () => {
    const client = new Client({ url, tlsOptions: { ca: [caPem] }, timeout: 5000, connectTimeout: 5000 });
    await client.bind(AD_ADMIN_DN, AD_ADMIN_PASSWORD);
    return client;
  };

  const stop = async () => {
    outer.close();
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const client = await admin();
      await client.unbind();
      break;
    } catch (error) {
      if (child.exitCode !== null || Date.now() > deadline) {
        const log = (() => {
          try {
            return readFileSync(join(dir, 'samba.log'), 'utf8').slice(-2000);
          } catch {
            return '';
          }
        })();
        await stop();
        throw new Error(`Samba AD DC did not answer: ${(error as Error).message}\n${stderr}\n${log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  return { url, caPem, otherCaPem: readFileSync(join(dir, 'other.pem'), 'utf8'), admin, stop };
}

/** An AD user entry's attributes: enabled (512) or disabled (514, ACCOUNTDISABLE), with its password. */
export function adUser(sam: string, password: string, options: { disabled?: boolean; mail?: string } = {}): Attribute[] {
  const attribute = (type: string, ...values: string[] | Buffer[]) => new Attribute({ type, values });
  return [
    attribute('objectClass', 'top', 'person', 'organizationalPerson', 'user'),
    attribute('sAMAccountName', sam),
    attribute('userPrincipalName', `${sam}@corp.example`),
    attribute('mail', options.mail ?? `${sam}@corp.example`),
    attribute('givenName', sam[0]!.toUpperCase() + sam.slice(1)),
    attribute('sn', 'Example'),
    attribute('displayName', `${sam[0]!.toUpperCase() + sam.slice(1)} Example`),
    // MS-ADTS 3.1.1.3.1.5.1: the password as a quoted UTF-16LE string, set over TLS.
    attribute('unicodePwd', Buffer.from(`"${password}"`, 'utf16le')),
    attribute('userAccountControl', options.disabled ? '514' : '512'),
  ];
}
