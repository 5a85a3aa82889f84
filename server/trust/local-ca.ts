/**
 * The local CA as the trust routes hand it out: only its certificate (`<data>/tls/ca.pem`), never
 * its key. Read from disk on each request (about 1.5 kB), so a renewed CA is offered at once.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { hasLocalCa, type Config } from '../config.js';
import { tlsPaths } from '../ops/tls.js';

export interface LocalCa {
  pem: string;
  der: Buffer;
  /** `AB:CD:…`, as `openssl x509 -noout -fingerprint -sha256` prints it. */
  fingerprintSha256: string;
  notAfter: Date;
}

/** The local CA, or undefined when this server has none (GATEHOUSE_TLS is not auto, or no data directory). */
export function readLocalCa(config: Config): LocalCa | undefined {
  if (!hasLocalCa(config.tls) || config.dataDir === ':memory:') return undefined;
  const file = tlsPaths(config.dataDir).ca;
  if (!existsSync(file)) return undefined;
  const pem = readFileSync(file, 'utf8');
  const x509 = new X509Certificate(pem);
  return { pem, der: Buffer.from(x509.raw), fingerprintSha256: x509.fingerprint256, notAfter: new Date(x509.validTo) };
}

/** `http://{issuer's host}:{port}`: the plain-http listener's base, as devices on the LAN reach it. */
export function plainHttpBase(config: Config): string | null {
  const port = config.httpRedirectPort;
  if (!port) return null;
  const host = new URL(config.issuer).hostname;
  return `http://${host}:${port}`;
}
