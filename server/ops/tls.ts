/**
 * LAN HTTPS: a local certificate authority and a server certificate under `<data>/tls/`.
 *
 * Keys are generated with node:crypto (node-forge's pure-JS RSA generation takes seconds) and
 * handed to node-forge, which builds and signs the X.509 certificates (RSA-2048, SHA-256).
 *
 * The CA can vouch only for this appliance (issue 22): a critical nameConstraints extension
 * permits the host names and addresses the machine had when the CA was made (plus
 * GATEHOUSE_TLS_NAMES), nothing else, so its key (in a backup, say) cannot mint a certificate that
 * devices trusting the CA would accept for any other site. It lives two years; from 60 days before
 * expiry, and while the machine has names the CA does not cover, it is reported as due for renewal
 * (`renewLocalCa`: a new key and certificate, which devices install again). An expired CA is
 * renewed by itself. A CA from an older install (ten years, no constraints) keeps serving and is
 * reported until renewed.
 *
 * The server certificate lives a year (never past the CA) and is re-issued by the same CA
 * whenever it is within 30 days of expiry or no longer names every hostname and address the
 * machine answers on that the CA permits (a new DHCP lease, a renamed host).
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, X509Certificate, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { isIP } from '../util/ip-family.js';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type Forge from 'node-forge';
import { ConfigError } from '../config.js';

// node-forge (about 40 modules) loads only when a certificate is built or read, so a server
// without TLS never pays for it at start-up.
let forgeModule: typeof Forge | undefined;
const forge = (): typeof Forge => (forgeModule ??= createRequire(import.meta.url)('node-forge') as typeof Forge);

export const TLS_DIR = 'tls';
/** How long a local CA lives (devices install it again when it is renewed). */
export const CA_DAYS = 730;
/** From this many days before its expiry the CA is reported as due for renewal. */
export const CA_RENEWAL_WARNING_DAYS = 60;
const SERVER_DAYS = 365;
/** Re-issue the server certificate when it expires within this many days. */
export const RENEW_BEFORE_DAYS = 30;
const DAY = 24 * 3600 * 1000;

export interface TlsPaths {
  dir: string;
  ca: string;
  caKey: string;
  cert: string;
  key: string;
}

export function tlsPaths(dataDir: string): TlsPaths {
  const dir = join(dataDir, TLS_DIR);
  return {
    dir,
    ca: join(dir, 'ca.pem'),
    caKey: join(dir, 'ca-key.pem'),
    cert: join(dir, 'server.pem'),
    key: join(dir, 'server-key.pem'),
  };
}

/** What the HTTPS listener needs, plus facts for the start-up line and `gatehouse status`. */
export interface TlsMaterial {
  key: string;
  cert: string;
  /** PEM of the local CA; undefined when the administrator supplied their own certificate. */
  caPem?: string;
  /** `AB:CD:…` SHA-256 fingerprint of the CA (or of the certificate itself without a local CA). */
  fingerprint: string;
  notAfter: Date;
  /** True when this call issued a new server certificate. */
  issued: boolean;
}

export interface HostNames {
  dns: string[];
  ips: string[];
}

/** Every name and address clients on the LAN may use for this machine. */
export function hostNames(extra: string[] = []): HostNames {
  const dns = new Set<string>(['localhost']);
  const ips = new Set<string>(['127.0.0.1', normalizeIp('::1')]);
  const host = hostname().toLowerCase();
  if (host) {
    dns.add(host);
    if (!host.includes('.')) dns.add(`${host}.local`);
  }
  for (const list of Object.values(networkInterfaces())) {
    for (const info of list ?? []) {
      if (!info.internal) ips.add(normalizeIp(info.address));
    }
  }
  for (const raw of extra) {
    const name = raw.trim().toLowerCase();
    if (!name) continue;
    if (isIP(name)) ips.add(normalizeIp(name));
    else dns.add(name);
  }
  return { dns: [...dns].sort(), ips: [...ips].sort() };
}

/** Canonical text for an address so `::1` and `0:0:0:0:0:0:0:1` compare equal. */
export function normalizeIp(address: string): string {
  const plain = address.split('%')[0]!.toLowerCase();
  if (isIP(plain) !== 6) return plain;
  const [head = '', tail = ''] = plain.includes('::') ? plain.split('::') : [plain, ''];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  if (right.length && right[right.length - 1]!.includes('.')) {
    // IPv4-mapped tail: a.b.c.d → two hex groups
    const v4 = right.pop()!.split('.').map(Number);
    right.push(((v4[0]! << 8) | v4[1]!).toString(16), ((v4[2]! << 8) | v4[3]!).toString(16));
  }
  const fill = plain.includes('::') ? Array(8 - left.length - right.length).fill('0') : [];
  return [...left, ...fill, ...right].map((g) => parseInt(g, 16).toString(16)).join(':');
}

function newKeyPair() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }) as string,
  };
}

function serialNumber(): string {
  // 16 random bytes, high bit cleared so the DER integer stays positive.
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString('hex');
}

function writeSecret(path: string, contents: string) {
  const temp = `${path}.tmp`;
  writeFileSync(temp, contents, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, path);
}

function writePublic(path: string, contents: string) {
  const temp = `${path}.tmp`;
  writeFileSync(temp, contents, { mode: 0o644 });
  renameSync(temp, path);
}

/** Bytes of an IP address (4 or 16), from its text. */
function ipBytes(ip: string): number[] {
  if (isIP(ip) === 4) return ip.split('.').map(Number);
  const groups = normalizeIp(ip).split(':');
  return groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]);
}

/**
 * The value of a nameConstraints extension (RFC 5280 §4.2.1.10) permitting exactly these DNS
 * names (each with its subdomains, as dNSName constraints do) and these addresses (one host each:
 * the address and an all-ones mask), nothing excluded.
 */
function nameConstraintsValue(names: HostNames) {
  const { asn1 } = forge();
  const subtree = (base: Forge.asn1.Asn1) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [base]);
  const dns = names.dns.map((name) => subtree(asn1.create(asn1.Class.CONTEXT_SPECIFIC, 2, false, name)));
  const ips = names.ips.map((ip) => {
    const bytes = ipBytes(ip);
    const range = String.fromCharCode(...bytes, ...bytes.map(() => 0xff));
    return subtree(asn1.create(asn1.Class.CONTEXT_SPECIFIC, 7, false, range));
  });
  const permitted = asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [...dns, ...ips]);
  return asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [permitted]);
}

function createCa(now: Date, names: HostNames): { certPem: string; keyPem: string } {
  const { keyPem, publicPem } = newKeyPair();
  const cert = forge().pki.createCertificate();
  cert.publicKey = forge().pki.publicKeyFromPem(publicPem);
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = new Date(now.getTime() - 3600_000);
  cert.validity.notAfter = new Date(now.getTime() + CA_DAYS * DAY);
  const subject = [
    { name: 'commonName', value: `Gatehouse local CA (${hostname()})` },
    { name: 'organizationName', value: 'Gatehouse' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
    // Critical: a client that cannot read it must refuse the CA rather than trust it for everything.
    { id: NAME_CONSTRAINTS_OID, name: 'nameConstraints', critical: true, value: nameConstraintsValue(names) },
  ]);
  cert.sign(forge().pki.privateKeyFromPem(keyPem), forge().md.sha256.create());
  return { certPem: forge().pki.certificateToPem(cert), keyPem };
}

const NAME_CONSTRAINTS_OID = '2.5.29.30';

/**
 * The DNS names and addresses a CA's nameConstraints permit, or null when it has none (a CA made
 * before issue 22). Only what this module writes is read back: permitted dNSName and one-host
 * iPAddress subtrees.
 */
export function caNameConstraints(caPem: string): HostNames | null {
  const ext = forge().pki.certificateFromPem(caPem).getExtension('nameConstraints') as
    | { permittedSubtrees?: { type: number; value: string }[] }
    | null;
  if (!ext?.permittedSubtrees) return null;
  const dns: string[] = [];
  const ips: string[] = [];
  for (const subtree of ext.permittedSubtrees) {
    if (subtree.type === 2) dns.push(subtree.value.toLowerCase());
    if (subtree.type === 7) {
      const bytes = Buffer.from(subtree.value, 'binary');
      const address = bytes.subarray(0, bytes.length / 2);
      ips.push(address.length === 4 ? [...address].join('.') : normalizeIp([...Array(8).keys()].map((i) => address.readUInt16BE(i * 2).toString(16)).join(':')));
    }
  }
  return { dns: dns.sort(), ips: ips.sort() };
}

/** Whether a dNSName constraint permits `name`: the name itself or any name below it. */
const dnsPermitted = (constraint: string, name: string) => name === constraint || name.endsWith(`.${constraint}`);

/** The machine's names split into those the CA may vouch for and those it may not. */
function coveredNames(caPem: string, names: HostNames): { covered: HostNames; uncovered: string[] } {
  const permitted = caNameConstraints(caPem);
  if (!permitted) return { covered: names, uncovered: [] };
  const dns = names.dns.filter((name) => permitted.dns.some((c) => dnsPermitted(c, name)));
  const ips = names.ips.filter((ip) => permitted.ips.includes(ip));
  return {
    covered: { dns, ips },
    uncovered: [...names.dns.filter((n) => !dns.includes(n)), ...names.ips.filter((ip) => !ips.includes(ip))],
  };
}

function createServerCert(caCertPem: string, caKeyPem: string, names: HostNames, now: Date) {
  const ca = forge().pki.certificateFromPem(caCertPem);
  const { keyPem, publicPem } = newKeyPair();
  const cert = forge().pki.createCertificate();
  cert.publicKey = forge().pki.publicKeyFromPem(publicPem);
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = new Date(now.getTime() - 3600_000);
  // Never past the CA: a chain is only as valid as its shortest-lived link.
  cert.validity.notAfter = new Date(Math.min(now.getTime() + SERVER_DAYS * DAY, ca.validity.notAfter.getTime()));
  cert.setSubject([{ name: 'commonName', value: names.dns.find((n) => n !== 'localhost') ?? 'localhost' }]);
  cert.setIssuer(ca.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [...names.dns.map((value) => ({ type: 2, value })), ...names.ips.map((ip) => ({ type: 7, ip }))],
    },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(forge().pki.privateKeyFromPem(caKeyPem), forge().md.sha256.create());
  return { certPem: forge().pki.certificateToPem(cert), keyPem };
}

/** The DNS names and (normalized) addresses a certificate is valid for. */
export function certificateNames(certPem: string): HostNames {
  const cert = forge().pki.certificateFromPem(certPem);
  const ext = cert.getExtension('subjectAltName') as { altNames?: { type: number; value?: string; ip?: string }[] } | null;
  const dns: string[] = [];
  const ips: string[] = [];
  for (const alt of ext?.altNames ?? []) {
    if (alt.type === 2 && alt.value) dns.push(alt.value.toLowerCase());
    if (alt.type === 7 && alt.ip) ips.push(normalizeIp(alt.ip));
  }
  return { dns, ips };
}

/** Why a server certificate must be re-issued, or undefined when it is still good. */
export function renewalReason(certPem: string, caPem: string, names: HostNames, now: Date): string | undefined {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    return 'the certificate file is unreadable';
  }
  if (!cert.verify(new X509Certificate(caPem).publicKey)) return 'the certificate was not issued by the local CA';
  const caValidTo = new Date(new X509Certificate(caPem).validTo).getTime();
  const validTo = new Date(cert.validTo).getTime();
  // Near its own expiry, or cut short by an older CA's and renewable to last longer now.
  if (validTo - now.getTime() < RENEW_BEFORE_DAYS * DAY && validTo < caValidTo) return 'the certificate expires soon';
  const have = certificateNames(certPem);
  const missing = [...names.dns.filter((n) => !have.dns.includes(n)), ...names.ips.filter((ip) => !have.ips.includes(ip))];
  if (missing.length) return `the certificate does not cover ${missing.join(', ')}`;
  return undefined;
}

/** `AB:CD:…` SHA-256 fingerprint of a PEM certificate. */
export function fingerprint(certPem: string): string {
  return new X509Certificate(certPem).fingerprint256;
}

/**
 * Creates the CA on first use and (re-)issues the server certificate when needed. Returns the
 * key pair the HTTPS listener should serve.
 */
export function ensureLocalTls(dataDir: string, extraNames: string[], now: Date): TlsMaterial {
  const paths = tlsPaths(dataDir);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  // A missing CA is made; an expired one is replaced (nothing trusts it any more anyway).
  if (!existsSync(paths.ca) || !existsSync(paths.caKey) || new Date(new X509Certificate(readFileSync(paths.ca)).validTo).getTime() <= now.getTime()) {
    writeNewCa(paths, hostNames(extraNames), now);
  }
  const caPem = readFileSync(paths.ca, 'utf8');
  const names = coveredNames(caPem, hostNames(extraNames)).covered;
  let issued = false;
  const current = existsSync(paths.cert) && existsSync(paths.key) ? readFileSync(paths.cert, 'utf8') : undefined;
  if (current === undefined || renewalReason(current, caPem, names, now) !== undefined) {
    const server = createServerCert(caPem, readFileSync(paths.caKey, 'utf8'), names, now);
    writeSecret(paths.key, server.keyPem);
    writePublic(paths.cert, server.certPem);
    issued = true;
  }
  const cert = readFileSync(paths.cert, 'utf8');
  return {
    key: readFileSync(paths.key, 'utf8'),
    cert,
    caPem,
    fingerprint: fingerprint(caPem),
    notAfter: new Date(new X509Certificate(cert).validTo),
    issued,
  };
}

function writeNewCa(paths: TlsPaths, names: HostNames, now: Date): void {
  const ca = createCa(now, names);
  writeSecret(paths.caKey, ca.keyPem);
  writePublic(paths.ca, ca.certPem);
  // The server certificate of the old CA is worthless now: issue one from the new CA.
  rmSync(paths.cert, { force: true });
}

/**
 * Replaces the local CA (a new key, constraints for the machine's current names, two more years)
 * and issues a server certificate from it. Devices must install the new CA (`/ca.pem`); the old
 * one no longer verifies this server and should be removed from them.
 */
export function renewLocalCa(dataDir: string, extraNames: string[], now: Date): TlsMaterial {
  const paths = tlsPaths(dataDir);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  writeNewCa(paths, hostNames(extraNames), now);
  return ensureLocalTls(dataDir, extraNames, now);
}

/** What devices and administrators need to know about the local CA (status, admin API, panel). */
export interface CaStatus {
  fingerprint: string;
  notBefore: string;
  notAfter: string;
  /** What the CA may vouch for; null for a CA without name constraints (an older install). */
  nameConstraints: HostNames | null;
  /** Names and addresses of this machine the CA does not cover (left out of the server certificate). */
  uncovered: string[];
  /** Expires within 60 days, has no name constraints, or leaves names uncovered: renew it. */
  renewalDue: boolean;
}

/** The local CA of `dataDir` and how it stands, or undefined when there is none. */
export function caStatus(dataDir: string, extraNames: string[], now: Date): CaStatus | undefined {
  const path = tlsPaths(dataDir).ca;
  if (!existsSync(path)) return undefined;
  const caPem = readFileSync(path, 'utf8');
  const x509 = new X509Certificate(caPem);
  const nameConstraints = caNameConstraints(caPem);
  const { uncovered } = coveredNames(caPem, hostNames(extraNames));
  const notAfter = new Date(x509.validTo);
  return {
    fingerprint: x509.fingerprint256,
    notBefore: new Date(x509.validFrom).toISOString(),
    notAfter: notAfter.toISOString(),
    nameConstraints,
    uncovered,
    renewalDue: !nameConstraints || uncovered.length > 0 || notAfter.getTime() - now.getTime() < CA_RENEWAL_WARNING_DAYS * DAY,
  };
}

function readTlsFile(variable: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EACCES' || code === 'EPERM' ? 'cannot be read (permission denied)' : code === 'EISDIR' ? 'is a directory' : 'cannot be read';
    throw new ConfigError(`${variable} names ${file}, which ${why}.`);
  }
}

/**
 * An administrator's own certificate and key (`GATEHOUSE_TLS_CERT` / `GATEHOUSE_TLS_KEY`), checked
 * here so a wrong file is one sentence naming it, not an OpenSSL error string at listen.
 */
export function loadOwnTls(certFile: string, keyFile: string): TlsMaterial {
  const cert = readTlsFile('GATEHOUSE_TLS_CERT', certFile);
  const key = readTlsFile('GATEHOUSE_TLS_KEY', keyFile);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new ConfigError(`GATEHOUSE_TLS_CERT names ${certFile}, which is not a PEM certificate.`);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError(`GATEHOUSE_TLS_KEY names ${keyFile}, which is not an unencrypted PEM private key.`);
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new ConfigError(`GATEHOUSE_TLS_KEY (${keyFile}) is not the private key of the certificate in GATEHOUSE_TLS_CERT (${certFile}).`);
  }
  return { key, cert, fingerprint: x509.fingerprint256, notAfter: new Date(x509.validTo), issued: false };
}

/** A key and certificate (chain) being served, as the listeners and `gatehouse status` describe it. */
export function servedMaterial(key: string, cert: string, issued: boolean, caPem?: string): TlsMaterial {
  const x509 = new X509Certificate(cert);
  return { key, cert, ...(caPem ? { caPem } : {}), fingerprint: x509.fingerprint256, notAfter: new Date(x509.validTo), issued };
}

/** SHA-256 hex of a PEM's DER bytes, for tests and logs that want a compact id. */
export function pemDigest(pem: string): string {
  return createHash('sha256').update(new X509Certificate(pem).raw).digest('hex');
}

/** What the panel shows about a certificate (issue 25), read with node:crypto alone (no node-forge). */
export interface CertificateSummary {
  subject: string;
  fingerprint: string;
  notBefore: Date;
  notAfter: Date;
  names: HostNames;
}

export function certificateSummary(certPem: string): CertificateSummary {
  const cert = new X509Certificate(certPem);
  const dns: string[] = [];
  const ips: string[] = [];
  // `DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1`
  for (const part of (cert.subjectAltName ?? '').split(/,\s*/)) {
    const dnsName = /^DNS:(.+)$/.exec(part);
    const ip = /^IP Address:(.+)$/.exec(part);
    if (dnsName) dns.push(dnsName[1]!.toLowerCase());
    if (ip) ips.push(normalizeIp(ip[1]!));
  }
  return {
    subject: cert.subject.replace(/\n/g, ', '),
    fingerprint: cert.fingerprint256,
    notBefore: new Date(cert.validFrom),
    notAfter: new Date(cert.validTo),
    names: { dns, ips },
  };
}
