/**
 * The IdP's signing keys (spec saml.md, "The identity provider"), in `saml_signing_keys`: an
 * RSA-2048 key with a self-signed X.509 certificate, 10 years, `CN=<issuer host> SAML signing`.
 *
 * Publish first, sign later, as the JWKS keys do (oauth/keys.ts): a rotation puts the next
 * certificate in the metadata at once and it signs only from `activates_at`, the activation delay
 * later (`GATEHOUSE_SAML_KEY_ACTIVATION_HOURS`, default a week: SPs that read the metadata pick it up
 * on their next refresh, and an operator has the week to paste it into SPs that pin a certificate).
 * The key it takes over from stays in the metadata for a day after that (an assertion lives five
 * minutes). While a next key waits, another rotation is 409 `key_rotation_pending`.
 * Status words as for the JWKS keys: `next`, `active`, `retiring`, `retired`.
 *
 * The private PEM is sealed under GATEHOUSE_KEY_SECRET in PostgreSQL mode (db/secrets-at-rest.ts);
 * backups carry the table like every other. The first key is made on first use (`ensureSamlKey`).
 * `SamlKeyRing` keeps the parsed keys and reads the table again every few seconds, so a rotation
 * made by the CLI or another instance is seen.
 */
import { createPrivateKey, generateKeyPair, randomBytes, X509Certificate, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { and, asc, desc, gt, isNotNull, isNull, lte, or } from 'drizzle-orm';
import type Forge from 'node-forge';
import type { Db } from '../db/client.js';
import { samlSigningKeys, type SamlSigningKey } from '../db/schema.js';
import { exec, many, one, transaction } from '../db/store.js';
import { openAtRest, sealAtRest } from '../db/secrets-at-rest.js';
import { recordAudit } from '../audit/record.js';
import { conflict } from '../http/problem.js';
import { newId } from '../util/ids.js';
import type { SigningMaterial } from './signature.js';

let forgeModule: typeof Forge | undefined;
const forge = (): typeof Forge => (forgeModule ??= createRequire(import.meta.url)('node-forge') as typeof Forge);

const HOUR = 3600_000;
export const CERTIFICATE_YEARS = 10;
/** How long a key that was taken over from stays in the metadata. */
export const RETIRING_MS = 24 * HOUR;
export const DEFAULT_ACTIVATION_HOURS = 168;
/** The ring reads the table again after this long (a rotation elsewhere is seen within it). */
const RELOAD_MS = 5_000;

export type SamlKeyStatus = 'next' | 'active' | 'retiring' | 'retired';

const generate = promisify(generateKeyPair);

/** The certificate's subject: `CN=<issuer host> SAML signing`. */
export const certificateName = (issuer: string) => `${new URL(issuer).hostname} SAML signing`;

/** A new RSA-2048 key and its self-signed certificate, valid from an hour ago for ten years. */
export async function newKeyMaterial(issuer: string, now: Date): Promise<{ certificatePem: string; privateKeyPem: string }> {
  const { publicKey, privateKey } = await generate('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const { pki, md } = forge();
  const cert = pki.createCertificate();
  cert.publicKey = pki.publicKeyFromPem(publicKey);
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  cert.serialNumber = serial.toString('hex');
  cert.validity.notBefore = new Date(now.getTime() - HOUR);
  const notAfter = new Date(now.getTime());
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + CERTIFICATE_YEARS);
  cert.validity.notAfter = notAfter;
  const subject = [{ name: 'commonName', value: certificateName(issuer) }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(pki.privateKeyFromPem(privateKey), md.sha256.create());
  return { certificatePem: pki.certificateToPem(cert), privateKeyPem: privateKey };
}

const pemPurpose = (id: string) => `private key of SAML signing key ${id}`;

/** Keys still published at `now`: not retired, or retiring until `expires_at`. */
const published = (now: Date) => or(isNull(samlSigningKeys.expiresAt), gt(samlSigningKeys.expiresAt, now));

async function insertKey(tx: Db, issuer: string, now: Date, activatesAt: Date): Promise<string> {
  const id = newId('sml');
  const material = await newKeyMaterial(issuer, now);
  await exec(tx.insert(samlSigningKeys).values({
    id, certificatePem: material.certificatePem, privateKeyPem: sealAtRest(tx, material.privateKeyPem, pemPurpose(id)), createdAt: now, activatesAt,
  }));
  return id;
}

/** Makes the first key when there is none (it signs at once: no SP trusts anything yet). */
export async function ensureSamlKey(db: Db, issuer: string, now: Date): Promise<void> {
  if (await one(db.select({ id: samlSigningKeys.id }).from(samlSigningKeys).limit(1))) return;
  const material = await newKeyMaterial(issuer, now);
  await transaction(db, async (tx) => {
    // Another instance may have made it meanwhile.
    if (await one(tx.select({ id: samlSigningKeys.id }).from(samlSigningKeys).limit(1))) return;
    const id = newId('sml');
    await exec(tx.insert(samlSigningKeys).values({
      id, certificatePem: material.certificatePem, privateKeyPem: sealAtRest(tx, material.privateKeyPem, pemPurpose(id)), createdAt: now, activatesAt: now,
    }));
  });
}

/** Every key, newest first, with its status; the status words of `listSamlKeys`. */
function statusOf(row: SamlSigningKey, activeId: string | undefined, now: Date): SamlKeyStatus {
  if (row.id === activeId) return 'active';
  if (row.activatesAt.getTime() > now.getTime()) return 'next';
  return row.expiresAt && row.expiresAt.getTime() > now.getTime() ? 'retiring' : 'retired';
}

/** The key that signs at `now`: of those whose moment has come, the latest. */
async function activeRow(db: Db, now: Date): Promise<SamlSigningKey | undefined> {
  return await one(db.select().from(samlSigningKeys).where(lte(samlSigningKeys.activatesAt, now)).orderBy(desc(samlSigningKeys.activatesAt), desc(samlSigningKeys.id)));
}

export interface SamlKeyInfo {
  id: string;
  status: SamlKeyStatus;
  certificate: string;
  /** SHA-256 fingerprint of the certificate, colon-separated hex (as SPs show it). */
  fingerprint: string;
  notAfter: string;
  createdAt: string;
  activatesAt: string;
  retiredAt: string | null;
  expiresAt: string | null;
}

function info(row: SamlSigningKey, status: SamlKeyStatus): SamlKeyInfo {
  const cert = new X509Certificate(row.certificatePem);
  return {
    id: row.id,
    status,
    certificate: row.certificatePem,
    fingerprint: cert.fingerprint256,
    notAfter: new Date(cert.validTo).toISOString(),
    createdAt: row.createdAt.toISOString(),
    activatesAt: row.activatesAt.toISOString(),
    retiredAt: row.retiredAt?.toISOString() ?? null,
    expiresAt: row.expiresAt?.toISOString() ?? null,
  };
}

/** Every key, newest first, with its status (never the private part). */
export async function listSamlKeys(db: Db, now: Date): Promise<SamlKeyInfo[]> {
  const rows = await many(db.select().from(samlSigningKeys).orderBy(desc(samlSigningKeys.createdAt), desc(samlSigningKeys.id)));
  const active = await activeRow(db, now);
  return rows.map((row) => info(row, statusOf(row, active?.id, now)));
}

/**
 * Publishes a new key that signs `activationHours` from now; the active one signs until then and
 * stays published a day longer. 409 `key_rotation_pending` while a next key waits.
 */
export async function rotateSamlKey(db: Db, issuer: string, now: Date, activationHours: number, actor: string): Promise<{ key: SamlKeyInfo; previous: SamlKeyInfo[] }> {
  const activatesAt = new Date(now.getTime() + activationHours * HOUR);
  const material = await newKeyMaterial(issuer, now);
  const done = await transaction(db, async (tx) => {
    const waiting = await one(tx.select().from(samlSigningKeys).where(gt(samlSigningKeys.activatesAt, now)));
    if (waiting) {
      throw conflict('key_rotation_pending', `SAML signing key ${waiting.id} is published and starts signing at ${waiting.activatesAt.toISOString()}; rotate again after that.`);
    }
    const previous = await many(tx
      .update(samlSigningKeys)
      .set({ retiredAt: activatesAt, expiresAt: new Date(activatesAt.getTime() + RETIRING_MS) })
      .where(and(isNull(samlSigningKeys.retiredAt), lte(samlSigningKeys.activatesAt, now)))
      .returning({ id: samlSigningKeys.id }));
    const id = newId('sml');
    await exec(tx.insert(samlSigningKeys).values({
      id, certificatePem: material.certificatePem, privateKeyPem: sealAtRest(tx, material.privateKeyPem, pemPurpose(id)), createdAt: now, activatesAt,
    }));
    await recordAudit(tx, now, { actor, action: 'saml.key_rotated', target: id, details: { retired: previous.map((p) => p.id), activatesAt: activatesAt.toISOString() } });
    return { id, previous: previous.map((p) => p.id) };
  });
  const all = await listSamlKeys(db, now);
  return { key: all.find((k) => k.id === done.id)!, previous: all.filter((k) => done.previous.includes(k.id)) };
}

/** What the metadata and the signer need, read from the table at once. */
interface KeySnapshot {
  /** Certificates in the metadata (PEM), the signing one first. */
  published: string[];
  signing: SigningMaterial;
  /** When this snapshot stops being right by the clock alone (a next key activates, a retiring one leaves). */
  validUntil: number;
}

/**
 * The keys of one app, parsed once: the signing key and the published certificates, read again
 * every few seconds (wall clock) or when the store clock passes a hand-over.
 */
export class SamlKeyRing {
  private snapshot: KeySnapshot | undefined;
  private readAt = 0;
  private loading: Promise<KeySnapshot> | undefined;

  constructor(
    private readonly db: Db,
    private readonly issuer: () => string,
    private readonly now: () => Date,
  ) {}

  /** Forget what was read (after a rotation made here). */
  invalidate(): void {
    this.snapshot = undefined;
  }

  async current(): Promise<KeySnapshot> {
    const now = this.now().getTime();
    const known = this.snapshot;
    if (known && now < known.validUntil && Date.now() - this.readAt < RELOAD_MS) return known;
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return await this.loading;
  }

  private async load(): Promise<KeySnapshot> {
    const at = this.now();
    await ensureSamlKey(this.db, this.issuer(), at);
    const rows = await many(this.db.select().from(samlSigningKeys).where(published(at)).orderBy(asc(samlSigningKeys.activatesAt), asc(samlSigningKeys.id)));
    const active = [...rows].reverse().find((row) => row.activatesAt.getTime() <= at.getTime());
    if (!active) throw new Error('no SAML signing key is active');
    const privateKey: KeyObject = createPrivateKey(openAtRest(this.db, active.privateKeyPem, pemPurpose(active.id)));
    const changes = rows.flatMap((row) => [row.activatesAt.getTime(), row.expiresAt?.getTime() ?? Infinity]).filter((t) => t > at.getTime());
    const snapshot: KeySnapshot = {
      published: [active.certificatePem, ...rows.filter((row) => row !== active).map((row) => row.certificatePem)],
      signing: { privateKey, certificatePem: active.certificatePem },
      validUntil: Math.min(Infinity, ...changes),
    };
    this.snapshot = snapshot;
    this.readAt = Date.now();
    return snapshot;
  }
}

/** Whether any key is retired but still in the table (listing only). */
export const hasRetiredKeys = async (db: Db) => !!(await one(db.select({ id: samlSigningKeys.id }).from(samlSigningKeys).where(isNotNull(samlSigningKeys.retiredAt))));
