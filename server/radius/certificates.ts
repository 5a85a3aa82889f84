/**
 * Personal network certificates for EAP-TLS (spec radius.md, "What people authenticate with"):
 * issued by the appliance CA (credentials.ts) to a person for one application they are an active
 * member of, when that application has RADIUS clients; by the person on the account page or
 * `POST /api/me/network-certificates` (after a sign-in within 10 minutes, like an app password),
 * or by an administrator. At most NETWORK_CERTIFICATES_PER_PERSON live ones a person.
 *
 * What is answered, once: a PKCS#12 file (the key, the certificate and the CA) protected by a
 * one-time password, and an Apple `.mobileconfig` with the CA, the PKCS#12 (its password asked at
 * install, never in the profile) and a WPA2/WPA3-Enterprise Wi-Fi payload for EAP-TLS. The key is
 * made here and never kept: only the certificate's serial and SHA-256 fingerprint are stored.
 *
 * The certificate: RSA-2048, SHA-256, clientAuth, valid ≤ 1 year and never past the CA; subject CN
 * "<username> (network certificate)" (not a host name, so the CA's name constraints do not apply)
 * and the e-mail address as rfc822Name. Signing runs in node:crypto (node-forge builds the
 * structure only: its pure-JS RSA would hold the event loop), the key is generated on the thread pool.
 */
import { constants, createHash, generateKeyPair, privateEncrypt, randomBytes, randomUUID, X509Certificate } from 'node:crypto';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import type Forge from 'node-forge';
import type { AppContext } from '../context.js';
import type { Person } from '../db/schema.js';
import { membershipOf } from '../self-service/queries.js';
import { recordAudit } from '../audit/record.js';
import { transaction } from '../db/store.js';
import { conflict, forbidden, notFound } from '../http/problem.js';
import { iso } from '../http/schemas.js';
import { newId } from '../util/ids.js';
import { certificateNames } from '../ops/tls.js';
import { eapMaterial, issuingCa } from './credentials.js';
import { certificateById, certificatesOf, countLiveCertificates, insertCertificate, revokeCertificate, type CertificateRow } from './queries.js';

let forgeModule: typeof Forge | undefined;
const forge = (): typeof Forge => (forgeModule ??= createRequire(import.meta.url)('node-forge') as typeof Forge);

export const NETWORK_CERTIFICATES_PER_PERSON = 10;
const YEAR_MS = 365 * 24 * 3600 * 1000;
const generate = promisify(generateKeyPair);

export interface CertificateIssue {
  applicationId: string;
  name: string;
  /** The Wi-Fi network's name in the Apple profile; default: the application's name. */
  ssid?: string | undefined;
}

export function certificateRecord({ certificate, applicationName }: CertificateRow) {
  return {
    id: certificate.id,
    name: certificate.name,
    applicationId: certificate.applicationId,
    applicationName,
    serial: certificate.serial,
    fingerprint: certificate.fingerprint,
    notAfter: iso(certificate.notAfter)!,
    createdAt: iso(certificate.createdAt)!,
    revokedAt: iso(certificate.revokedAt),
    lastUsedAt: iso(certificate.lastUsedAt),
  };
}

export async function listCertificates(ctx: AppContext, personId: string) {
  return (await certificatesOf(ctx.db, personId)).map(certificateRecord);
}

/** A one-time password for the PKCS#12 file: 4 groups of 5 letters and digits (≈ 103 bits). */
function oneTimePassword(): string {
  const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
  const bytes = randomBytes(20);
  const chars = [...bytes].map((b) => alphabet[b % 32]);
  return [0, 5, 10, 15].map((i) => chars.slice(i, i + 5).join('')).join('-');
}

/** RFC 8017 §9.2: the DER DigestInfo prefix of SHA-256, for PKCS#1 v1.5 signing with node:crypto. */
const SHA256_DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex');

interface Issued {
  certPem: string;
  serial: string;
  fingerprint: string;
  notAfter: Date;
  pkcs12: Buffer;
}

async function issue(ctx: AppContext, person: Pick<Person, 'username' | 'email'>, password: string, now: Date): Promise<Issued> {
  const f = forge();
  const ca = issuingCa(ctx.config, now);
  const caCert = f.pki.certificateFromPem(ca.certPem);
  const { privateKey, publicKey } = await generate('rsa', { modulusLength: 2048 });
  const cert = f.pki.createCertificate();
  cert.publicKey = f.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }) as string);
  const serialBytes = randomBytes(16);
  serialBytes[0]! &= 0x7f;
  cert.serialNumber = serialBytes.toString('hex');
  cert.validity.notBefore = new Date(now.getTime() - 3600_000);
  cert.validity.notAfter = new Date(Math.min(now.getTime() + YEAR_MS, caCert.validity.notAfter.getTime()));
  cert.setSubject([{ name: 'commonName', value: `${person.username} (network certificate)` }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', clientAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 1, value: person.email }] },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  const caKey = ca.keyPem;
  cert.sign(
    {
      sign: (md: Forge.md.MessageDigest) =>
        privateEncrypt({ key: caKey, padding: constants.RSA_PKCS1_PADDING }, Buffer.concat([SHA256_DIGEST_INFO, Buffer.from(md.digest().getBytes(), 'binary')])).toString('binary'),
    } as unknown as Forge.pki.rsa.PrivateKey,
    f.md.sha256.create(),
  );
  const certPem = f.pki.certificateToPem(cert);
  const der = new X509Certificate(certPem).raw;
  const key = f.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }) as string);
  // 3DES and a SHA-1 MAC: what every OS's importer takes (Android and older macOS refuse AES-based PKCS#12).
  const p12 = f.pkcs12.toPkcs12Asn1(key, [cert, caCert], password, { algorithm: '3des', friendlyName: `${person.username} network certificate` });
  return {
    certPem,
    serial: cert.serialNumber,
    fingerprint: createHash('sha256').update(der).digest('hex'),
    notAfter: cert.validity.notAfter,
    pkcs12: Buffer.from(f.asn1.toDer(p12).getBytes(), 'binary'),
  };
}

const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * An Apple configuration profile (Apple's "Configuration Profile Reference": com.apple.security.root,
 * com.apple.security.pkcs12, com.apple.wifi.managed with EAPClientConfiguration AcceptEAPTypes 13).
 * The server's names are those of the EAP certificate, which the device then trusts for this network only.
 */
export function mobileconfig(input: { ssid: string; caDer: Buffer; pkcs12: Buffer; serverNames: string[]; label: string }): Buffer {
  const [profile, root, identity, wifi] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()].map((u) => u.toUpperCase()) as [string, string, string, string];
  const id = 'local.gatehouse.network';
  const b64 = (b: Buffer) => b.toString('base64').replace(/(.{64})/g, '$1\n');
  const plist = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>PayloadType</key><string>Configuration</string>
  <key>PayloadVersion</key><integer>1</integer>
  <key>PayloadIdentifier</key><string>${id}.${profile}</string>
  <key>PayloadUUID</key><string>${profile}</string>
  <key>PayloadDisplayName</key><string>${xml(input.ssid)} (Gatehouse)</string>
  <key>PayloadDescription</key><string>${xml(input.label)}</string>
  <key>PayloadContent</key>
  <array>
    <dict>
      <key>PayloadType</key><string>com.apple.security.root</string>
      <key>PayloadVersion</key><integer>1</integer>
      <key>PayloadIdentifier</key><string>${id}.ca.${root}</string>
      <key>PayloadUUID</key><string>${root}</string>
      <key>PayloadDisplayName</key><string>Gatehouse CA</string>
      <key>PayloadContent</key><data>
${b64(input.caDer)}
</data>
    </dict>
    <dict>
      <key>PayloadType</key><string>com.apple.security.pkcs12</string>
      <key>PayloadVersion</key><integer>1</integer>
      <key>PayloadIdentifier</key><string>${id}.identity.${identity}</string>
      <key>PayloadUUID</key><string>${identity}</string>
      <key>PayloadDisplayName</key><string>${xml(input.label)}</string>
      <key>PayloadContent</key><data>
${b64(input.pkcs12)}
</data>
    </dict>
    <dict>
      <key>PayloadType</key><string>com.apple.wifi.managed</string>
      <key>PayloadVersion</key><integer>1</integer>
      <key>PayloadIdentifier</key><string>${id}.wifi.${wifi}</string>
      <key>PayloadUUID</key><string>${wifi}</string>
      <key>PayloadDisplayName</key><string>${xml(input.ssid)}</string>
      <key>SSID_STR</key><string>${xml(input.ssid)}</string>
      <key>HIDDEN_NETWORK</key><false/>
      <key>AutoJoin</key><true/>
      <key>EncryptionType</key><string>WPA</string>
      <key>PayloadCertificateUUID</key><string>${identity}</string>
      <key>EAPClientConfiguration</key>
      <dict>
        <key>AcceptEAPTypes</key><array><integer>13</integer></array>
        <key>PayloadCertificateAnchorUUID</key><array><string>${root}</string></array>
        <key>TLSTrustedServerNames</key><array>${input.serverNames.map((n) => `<string>${xml(n)}</string>`).join('')}</array>
      </dict>
    </dict>
  </array>
</dict>
</plist>
`;
  return Buffer.from(plist, 'utf8');
}

/**
 * Issues a certificate for `personId` (the person themself, `actor` `person:<id>`, or an
 * administrator). The answer carries `password`, `pkcs12` and `mobileconfig` (base64), shown this once.
 */
export async function issueCertificate(ctx: AppContext, person: Pick<Person, 'id' | 'username' | 'email'>, input: CertificateIssue, actor: string) {
  const row = await membershipOf(ctx.db, person.id, input.applicationId);
  if (!row) throw notFound('membership_not_found', `No membership of an application "${input.applicationId}".`);
  if (row.m.status !== 'active') throw forbidden('membership_suspended', `The membership of "${row.app.name}" is suspended.`);
  if (!row.app.radius?.clients.length) {
    throw conflict('radius_not_configured', `"${row.app.name}" has no RADIUS clients, so a network certificate for it would open nothing.`);
  }
  const now = ctx.clock.now();
  if ((await countLiveCertificates(ctx.db, person.id, now)) >= NETWORK_CERTIFICATES_PER_PERSON) {
    throw conflict('network_certificate_limit', `There are ${NETWORK_CERTIFICATES_PER_PERSON} network certificates already; revoke one no longer used first.`);
  }
  const password = oneTimePassword();
  const issued = await issue(ctx, person, password, now);
  const id = newId('ncr');
  await transaction(ctx.db, async (tx) => {
    await insertCertificate(tx, {
      id,
      personId: person.id,
      applicationId: row.app.id,
      membershipId: row.m.id,
      name: input.name,
      serial: issued.serial,
      fingerprint: issued.fingerprint,
      notAfter: issued.notAfter,
      createdAt: now,
    });
    await recordAudit(tx, now, { actor, action: 'network_certificate.issued', applicationId: row.app.id, target: id, details: { name: input.name, personId: person.id, serial: issued.serial } });
  });
  const material = eapMaterial(ctx.config, now);
  const names = certificateNames(material.cert);
  const profile = mobileconfig({
    ssid: input.ssid ?? row.app.name,
    caDer: new X509Certificate(material.ca).raw,
    pkcs12: issued.pkcs12,
    serverNames: [...names.dns, ...names.ips].filter((n) => n !== 'localhost'),
    label: `${input.name} — ${person.username}`,
  });
  const created = await certificateById(ctx.db, id);
  return {
    ...certificateRecord({ certificate: created!, applicationName: row.app.name }),
    password,
    pkcs12: issued.pkcs12.toString('base64'),
    mobileconfig: profile.toString('base64'),
  };
}

/** Revokes one of `personId`'s certificates: the next EAP-TLS authentication with it is refused. */
export async function revokeNetworkCertificate(ctx: AppContext, personId: string, id: string, actor: string): Promise<void> {
  const now = ctx.clock.now();
  const row = await certificateById(ctx.db, id);
  if (!row || row.personId !== personId) throw notFound('network_certificate_not_found', `No network certificate "${id}".`);
  if (row.revokedAt) return;
  await transaction(ctx.db, async (tx) => {
    await revokeCertificate(tx, id, now);
    await recordAudit(tx, now, { actor, action: 'network_certificate.revoked', applicationId: row.applicationId, target: id, details: { name: row.name, personId } });
  });
}
