/**
 * What ACME leaves in the data directory, under `<data>/tls/acme/` (0700, as `tls/`):
 * - `account-key.pem`: the ACME account's private key (0600);
 * - `key.pem`: the certificate's private key (0600);
 * - `cert.pem`: the certificate with its chain, as the ACME server gave it (0644).
 * The two keys are sealed (AES-256-GCM, server/db/secrets-at-rest.ts) under GATEHOUSE_KEY_SECRET
 * when one is set (always in PostgreSQL mode), and otherwise kept like the local CA's key: 0600 in
 * the 0700 data directory. They travel only in encrypted backups (ops/backup-files.ts), never
 * through the admin API or the configuration export. Each file is written whole and renamed into
 * place, so a crash leaves the old one or the new one, never half of either.
 * The TSIG secret is not stored at all: it stays in the operator's file, read for each update.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../config.js';
import { keySecretFromEnv, makeSealer } from '../../db/secrets-at-rest.js';
import { tlsPaths } from '../../ops/tls.js';

export function acmePaths(dataDir: string) {
  const dir = join(tlsPaths(dataDir).dir, 'acme');
  return { dir, accountKey: join(dir, 'account-key.pem'), key: join(dir, 'key.pem'), cert: join(dir, 'cert.pem') };
}

const SEALED = /^gks1\./;

function write(path: string, contents: string, mode: 0o600 | 0o644) {
  const temp = `${path}.tmp`;
  writeFileSync(temp, contents, { mode });
  chmodSync(temp, mode);
  renameSync(temp, path);
}

/** Writes a private key, sealed under GATEHOUSE_KEY_SECRET when one is set. */
export function writeKey(path: string, pem: string, env: Record<string, string | undefined>, purpose: string): void {
  const secret = keySecretFromEnv(env);
  write(path, secret ? makeSealer(secret).seal(pem, purpose) : pem, 0o600);
}

/** Reads a private key written by `writeKey`. */
export function readKey(path: string, env: Record<string, string | undefined>, purpose: string): string {
  const stored = readFileSync(path, 'utf8');
  if (!SEALED.test(stored)) return stored;
  const secret = keySecretFromEnv(env);
  if (!secret) throw new ConfigError(`${path} is sealed under GATEHOUSE_KEY_SECRET, which is not set now.`);
  return makeSealer(secret).open(stored, purpose);
}

export const ACCOUNT_KEY_PURPOSE = 'ACME account key';
export const CERT_KEY_PURPOSE = 'ACME certificate key';

export function ensureAcmeDir(dataDir: string): ReturnType<typeof acmePaths> {
  const paths = acmePaths(dataDir);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  return paths;
}

/** Stores a new certificate: the key first, then the chain (what a reader takes as "a new one"). */
export function storeCertificate(dataDir: string, env: Record<string, string | undefined>, key: string, chain: string): void {
  const paths = ensureAcmeDir(dataDir);
  // Both go through temp files; the key is renamed first so no reader pairs a new chain with an old key for long,
  // and readAcmeCertificate checks the pair anyway.
  writeKey(paths.key, key, env, CERT_KEY_PURPOSE);
  write(paths.cert, chain, 0o644);
}

export interface AcmeCertificate {
  key: string;
  cert: string;
  notBefore: Date;
  notAfter: Date;
  names: string[];
}

/** The stored certificate when it is usable now: readable, its key's, unexpired and naming every domain. */
export function readAcmeCertificate(dataDir: string, env: Record<string, string | undefined>, domains: string[], now: Date): AcmeCertificate | undefined {
  const paths = acmePaths(dataDir);
  if (!existsSync(paths.cert) || !existsSync(paths.key)) return undefined;
  try {
    const cert = readFileSync(paths.cert, 'utf8');
    const key = readKey(paths.key, env, CERT_KEY_PURPOSE);
    const x509 = new X509Certificate(cert);
    if (!x509.checkPrivateKey(createPrivateKey(key))) return undefined;
    const notAfter = new Date(x509.validTo);
    if (notAfter.getTime() <= now.getTime()) return undefined;
    const names = (x509.subjectAltName ?? '').split(/,\s*/).flatMap((part) => (/^DNS:(.+)$/.exec(part)?.[1] ? [/^DNS:(.+)$/.exec(part)![1]!.toLowerCase()] : []));
    if (!domains.every((domain) => names.includes(domain))) return undefined;
    return { key, cert, notBefore: new Date(x509.validFrom), notAfter, names };
  } catch {
    return undefined;
  }
}
