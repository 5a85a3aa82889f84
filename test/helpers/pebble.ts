/**
 * Debian's `pebble` (Let's Encrypt's ACME test server, RFC 8555) started by a test on loopback,
 * from a configuration in a temporary directory: its HTTPS certificate from a throwaway local CA
 * (the `caFile` Gatehouse is given as GATEHOUSE_ACME_CA_FILE), its DNS-01 lookups sent to the
 * test's own DNS server (`-dnsserver`), short-lived certificates (`certificateValidityPeriod`) so a
 * renewal happens within the test. Validation is real: no PEBBLE_VA_ALWAYS_VALID; only the random
 * sleeps before validating (PEBBLE_VA_NOSLEEP), the random nonce rejections (PEBBLE_WFE_NONCEREJECT=0)
 * and the reuse of earlier authorizations (PEBBLE_AUTHZREUSE=0, so every order is validated
 * through DNS again) are turned off. Stopped by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureLocalTls, tlsPaths } from '../../server/ops/tls.js';
import { freePort } from './free-port.js';

export interface Pebble {
  directory: string;
  /** The CA that signs pebble's own HTTPS certificate. */
  caFile: string;
  /** The root that issues (changes with every start), from the management interface. */
  root(): Promise<string>;
  stop(): Promise<void>;
}

export async function startPebble(dnsPort: number, validitySeconds: number): Promise<Pebble> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pebble-'));
  ensureLocalTls(dir, [], new Date());
  const paths = tlsPaths(dir);
  const [port, management, httpPort, tlsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  writeFileSync(
    join(dir, 'pebble-config.json'),
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${port}`,
        managementListenAddress: `127.0.0.1:${management}`,
        certificate: paths.cert,
        privateKey: paths.key,
        httpPort,
        tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
        certificateValidityPeriod: validitySeconds,
      },
    }),
  );
  const child: ChildProcess = spawn('/usr/bin/pebble', ['-config', join(dir, 'pebble-config.json'), '-dnsserver', `127.0.0.1:${dnsPort}`, '-strict=false'], {
    env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`pebble did not start:\n${log}`)), 20_000);
    const check = setInterval(() => {
      if (/Listening on: 127\.0\.0\.1:\d+/.test(log)) {
        clearInterval(check);
        clearTimeout(deadline);
        resolve();
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(check);
      clearTimeout(deadline);
      reject(new Error(`pebble exited (${code}):\n${log}`));
    });
  });
  const caPem = readFileSync(paths.ca, 'utf8');
  return {
    directory: `https://127.0.0.1:${port}/dir`,
    caFile: paths.ca,
    root: () =>
      new Promise((resolve, reject) => {
        request(`https://127.0.0.1:${management}/roots/0`, { ca: caPem }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => (body += c));
          res.on('end', () => resolve(body));
        })
          .on('error', reject)
          .end();
      }),
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
