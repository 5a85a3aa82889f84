/**
 * Debian's BIND 9 (`named`) started by a test on loopback, from a configuration in a temporary
 * directory: one primary zone that takes dynamic updates (RFC 2136) only when signed with one TSIG
 * key (`update-policy { grant <key> zonesub TXT; }`: no address-based `allow-update`), no recursion,
 * no control channel. Never the system service; stopped by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Resolver } from 'node:dns/promises';
import { freePort } from './free-port.js';

export interface Bind9 {
  port: number;
  zone: string;
  keyName: string;
  /** The key's secret, base64, as a file Gatehouse reads (GATEHOUSE_ACME_RFC2136_TSIG_SECRET_FILE). */
  secretFile: string;
  dir: string;
  /** The TXT records named now holds for a name (through node's resolver, pointed at this server). */
  txt(name: string): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startBind9(zone: string): Promise<Bind9> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bind9-'));
  const port = await freePort();
  const keyName = 'gatehouse-acme';
  const secret = randomBytes(32).toString('base64');
  const secretFile = join(dir, 'tsig.secret');
  writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
  writeFileSync(
    join(dir, 'zone.db'),
    [
      '$TTL 60',
      `@ IN SOA ns1.${zone}. hostmaster.${zone}. 1 60 60 600 60`,
      `@ IN NS ns1.${zone}.`,
      'ns1 IN A 127.0.0.1',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'named.conf'),
    `options {
  directory "${dir}";
  pid-file "${join(dir, 'named.pid')}";
  session-keyfile "${join(dir, 'session.key')}";
  managed-keys-directory "${dir}";
  listen-on port ${port} { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  allow-query { any; };
  dnssec-validation no;
  notify no;
};
controls { };
key "${keyName}" { algorithm hmac-sha256; secret "${secret}"; };
zone "${zone}" {
  type primary;
  file "${join(dir, 'zone.db')}";
  update-policy { grant ${keyName} zonesub TXT; };
};
`,
  );
  const child: ChildProcess = spawn('/usr/sbin/named', ['-g', '-c', join(dir, 'named.conf'), '-n', '1'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`named did not start:\n${log}`)), 20_000);
    const check = setInterval(() => {
      if (log.includes('running')) {
        clearInterval(check);
        clearTimeout(deadline);
        resolve();
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(check);
      clearTimeout(deadline);
      reject(new Error(`named exited (${code}):\n${log}`));
    });
  });
  const resolver = new Resolver({ timeout: 2000, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  return {
    port,
    zone,
    keyName,
    secretFile,
    dir,
    async txt(name) {
      try {
        return (await resolver.resolveTxt(name)).map((parts) => parts.join(''));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENODATA' || (error as NodeJS.ErrnoException).code === 'ENOTFOUND') return [];
        throw error;
      }
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
