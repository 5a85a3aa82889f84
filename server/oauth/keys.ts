/**
 * Signing keys (DESIGN §4.10): RSA-2048, RS256, stored in `signing_keys`. The newest unretired
 * key signs; rotation retires it, and a retired key stays in the JWKS until every token it
 * signed has expired (`expiresAt` = retirement + the longest token lifetime + clock skew).
 *
 * The signing key is parsed once into a node:crypto `KeyObject` (jwt.ts signs with it on libuv's
 * thread pool); verification of our own tokens stays on jose with WebCrypto public keys.
 */
import { and, desc, eq, gt, isNull, or } from 'drizzle-orm';
import { exportJWK, exportPKCS8, generateKeyPair, importJWK, type JWK, type JWSHeaderParameters } from 'jose';
import { signingKeys, type SigningKey } from '../db/schema.js';
import type { Db } from '../db/client.js';
import type { AppContext } from '../context.js';
import { createPrivateKey, type KeyObject, type webcrypto } from 'node:crypto';
import { newId } from '../util/ids.js';
import { recordAudit } from '../audit/record.js';

export const SIGNING_ALG = 'RS256';
/** Verifiers may be a little behind; keep a retired key published this much longer. */
const SKEW_MS = 60_000;
/** A CLI rotation in another process is noticed within this time (wall clock: a cache age). */
const RELOAD_MS = 5_000;

export type KeyStatus = 'active' | 'retiring' | 'retired';

export function keyStatus(row: SigningKey, now: Date): KeyStatus {
  if (!row.retiredAt) return 'active';
  return row.expiresAt && row.expiresAt.getTime() > now.getTime() ? 'retiring' : 'retired';
}

async function generateSigningKey(): Promise<{ kid: string; publicJwk: JWK; privateKeyPem: string }> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { modulusLength: 2048, extractable: true });
  const kid = newId('kid');
  const { kty, n, e } = await exportJWK(publicKey);
  return { kid, publicJwk: { kty, n, e, kid, alg: SIGNING_ALG, use: 'sig' }, privateKeyPem: await exportPKCS8(privateKey) };
}

/** Key writes made by this process, so caches of the key table know to look again at once. */
let keyWrites = 0;
export const keyWriteCount = (): number => keyWrites;

function activeKeyRow(db: Db): SigningKey | undefined {
  return db.select().from(signingKeys).where(isNull(signingKeys.retiredAt)).orderBy(desc(signingKeys.createdAt)).get();
}

/** Creates the first signing key when there is none (first start). */
export async function ensureSigningKey(db: Db, now: Date): Promise<void> {
  if (activeKeyRow(db)) return;
  const key = await generateSigningKey();
  // Another process may have raced us between the check and here: only insert if still keyless.
  db.transaction((tx) => {
    const existing = tx.select({ kid: signingKeys.kid }).from(signingKeys).where(isNull(signingKeys.retiredAt)).get();
    if (!existing) tx.insert(signingKeys).values({ ...key, createdAt: now }).run();
  });
  keyWrites++;
}

/**
 * Adds a new signing key and retires the current one, keeping it published for
 * `tokenLifetimeSeconds` (+ skew). Returns the new key's kid and the retired kids.
 */
export async function rotateSigningKey(db: Db, now: Date, tokenLifetimeSeconds: number, actor: string) {
  const key = await generateSigningKey();
  const expiresAt = new Date(now.getTime() + tokenLifetimeSeconds * 1000 + SKEW_MS);
  const rotated = db.transaction((tx) => {
    const retired = tx
      .update(signingKeys)
      .set({ retiredAt: now, expiresAt })
      .where(isNull(signingKeys.retiredAt))
      .returning({ kid: signingKeys.kid })
      .all()
      .map((r) => r.kid);
    tx.insert(signingKeys).values({ ...key, createdAt: now }).run();
    recordAudit(tx, now, { actor, action: 'signing_key.rotated', target: key.kid, details: { retired } });
    return { kid: key.kid, retired };
  });
  keyWrites++;
  return rotated;
}

/** Every key, newest first, with its status; never the private part. */
export function listKeys(db: Db, now: Date) {
  return db
    .select()
    .from(signingKeys)
    .orderBy(desc(signingKeys.createdAt), desc(signingKeys.kid))
    .all()
    .map((row) => ({
      kid: row.kid,
      alg: row.alg,
      createdAt: row.createdAt.toISOString(),
      retiredAt: row.retiredAt?.toISOString() ?? null,
      expiresAt: row.expiresAt?.toISOString() ?? null,
      status: keyStatus(row, now),
    }));
}

/** The public key set: the active key and every retiring one. */
export function publishedJwks(db: Db, now: Date): { keys: JWK[] } {
  const rows = db
    .select({ publicJwk: signingKeys.publicJwk })
    .from(signingKeys)
    .where(or(isNull(signingKeys.retiredAt), gt(signingKeys.expiresAt, now)))
    .orderBy(desc(signingKeys.createdAt), desc(signingKeys.kid))
    .all();
  return { keys: rows.map((r) => r.publicJwk as JWK) };
}

/** The key that signs right now, with its kid. */
export interface SigningKeyObject {
  kid: string;
  key: KeyObject;
}

/** The key that signs right now, cached as a KeyObject. */
export class KeyRing {
  private current: (SigningKeyObject & { loadedAt: number }) | undefined;

  private initialised: Promise<void> | undefined;

  constructor(private readonly ctx: AppContext) {}

  /** Creates the first key if the store has none; later calls cost one resolved promise. */
  ensure(): Promise<void> {
    this.initialised ??= ensureSigningKey(this.ctx.db, this.ctx.clock.now()).catch((error: unknown) => {
      this.initialised = undefined;
      throw error;
    });
    return this.initialised;
  }

  /** Drop the cache (after a rotation in this process). */
  invalidate(): void {
    this.current = undefined;
  }

  async signingKey(): Promise<SigningKeyObject> {
    const cached = this.current;
    if (cached && Date.now() - cached.loadedAt < RELOAD_MS) return cached;
    await this.ensure();
    const row = activeKeyRow(this.ctx.db);
    if (!row) throw new Error('no signing key: the OAuth plugin did not initialise keys');
    const key = cached?.kid === row.kid ? cached.key : createPrivateKey(row.privateKeyPem);
    this.current = { kid: row.kid, key, loadedAt: Date.now() };
    return this.current;
  }

  private readonly verifiers = new Map<string, webcrypto.CryptoKey>();

  /** jose key resolver for verifying our own tokens: only RS256 keys that are still published. */
  readonly verificationKey = async (header: JWSHeaderParameters): Promise<webcrypto.CryptoKey> => {
    const kid = header.kid;
    const jwk = kid && header.alg === SIGNING_ALG ? this.publicKey(kid) : undefined;
    if (!kid || !jwk) throw new Error('unknown signing key');
    let key = this.verifiers.get(kid);
    if (!key) {
      key = (await importJWK(jwk, SIGNING_ALG)) as webcrypto.CryptoKey;
      this.verifiers.set(kid, key);
    }
    return key;
  };

  /** The public JWK with this kid if it is still published. */
  publicKey(kid: string): JWK | undefined {
    const row = this.ctx.db
      .select({ publicJwk: signingKeys.publicJwk })
      .from(signingKeys)
      .where(and(eq(signingKeys.kid, kid), or(isNull(signingKeys.retiredAt), gt(signingKeys.expiresAt, this.ctx.clock.now()))))
      .get();
    return row?.publicJwk as JWK | undefined;
  }
}
