/**
 * Signing keys (DESIGN §4.10): RSA-2048, RS256, stored in `signing_keys`.
 *
 * Rotation publishes first and signs later (issue 22): the next key goes into the JWKS at once but
 * signs only after the JWKS cache lifetime we announce (`Cache-Control: max-age`) plus clock skew,
 * so a verifier that cached the key set just before the rotation has fetched it again before it
 * sees a token with the new `kid` (jose's createRemoteJWKSet, for one, refetches at most every
 * 30 s and would otherwise refuse such tokens: "no applicable key found"). No column says when a
 * key starts: the previous key's `retiredAt` is set to that moment, and of the keys not retired
 * yet the oldest signs. A retired key stays in the JWKS until every token it signed has expired
 * (`expiresAt` = retirement + the longest token lifetime + skew).
 *
 * Status words, the same in the rotate answer and the key list: `next` (published, not signing
 * yet), `active` (signing), `retiring` (published for the tokens it signed), `retired` (gone).
 *
 * The signing key is parsed once into a node:crypto `KeyObject` (jwt.ts signs with it); our own
 * access tokens are verified with node:crypto over public KeyObjects (access-tokens.ts), ID-token
 * hints at end-session with jose.
 */
import { and, asc, desc, eq, gt, isNotNull, isNull, or, sql } from 'drizzle-orm';
import { exportJWK, exportPKCS8, generateKeyPair, importJWK, type JWK, type JWSHeaderParameters } from 'jose';
import { signingKeys, type SigningKey } from '../db/schema.js';
import type { Db } from '../db/client.js';
import type { AppContext } from '../context.js';
import { createPrivateKey, createPublicKey, type JsonWebKeyInput, type KeyObject, type webcrypto } from 'node:crypto';
import { newId } from '../util/ids.js';
import { recordAudit } from '../audit/record.js';
import { conflict } from '../http/problem.js';
import { engineOf, exec, many, one, transaction } from '../db/store.js';
import { preparedPerDb } from '../db/prepared.js';
import { openAtRest, sealAtRest } from '../db/secrets-at-rest.js';

export const SIGNING_ALG = 'RS256';
/** Verifiers may be a little behind; keep a retired key published this much longer. */
const SKEW_MS = 60_000;
/** A CLI rotation in another process is noticed within this time (wall clock: a cache age). */
const RELOAD_MS = 5_000;
/**
 * PostgreSQL: other instances rotate keys too (the admin API, the scheduled rotation), and a
 * rotation there must reach this instance's ring within seconds, so the ring reads again sooner.
 */
const PG_RELOAD_MS = 1_000;
/** How long verifiers may cache the JWKS: its `Cache-Control: max-age`. */
export const JWKS_MAX_AGE_SECONDS = 60;
/** A rotated-in key signs this long after it was published: the announced cache lifetime plus skew. */
export const KEY_ACTIVATION_DELAY_MS = JWKS_MAX_AGE_SECONDS * 1000 + SKEW_MS;

export type KeyStatus = 'next' | 'active' | 'retiring' | 'retired';

/** Not retired yet at `now` (`retiredAt` unset, or a hand-over still ahead). */
const unretired = (now: Date) => or(isNull(signingKeys.retiredAt), gt(signingKeys.retiredAt, now));

async function generateSigningKey(): Promise<{ kid: string; publicJwk: JWK; privateKeyPem: string }> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { modulusLength: 2048, extractable: true });
  const kid = newId('kid');
  const { kty, n, e } = await exportJWK(publicKey);
  return { kid, publicJwk: { kty, n, e, kid, alg: SIGNING_ALG, use: 'sig' }, privateKeyPem: await exportPKCS8(privateKey) };
}

/** A key's private PEM as stored: sealed under GATEHOUSE_KEY_SECRET in PostgreSQL mode (db/secrets-at-rest.ts). */
const pemPurpose = (kid: string) => `private key of signing key ${kid}`;
const storedKey = (db: Db, key: { kid: string; publicJwk: JWK; privateKeyPem: string }) => ({ ...key, privateKeyPem: sealAtRest(db, key.privateKeyPem, pemPurpose(key.kid)) });

/** Key writes made by this process, so caches of the key table know to look again at once. */
let keyWrites = 0;
export const keyWriteCount = (): number => keyWrites;

/**
 * Caches of the key table that read it asynchronously (PostgreSQL: the polled JWKS body) and must
 * have caught up before a key write of this process returns, per database handle.
 */
const keyWriteListeners = new WeakMap<object, Set<() => Promise<void>>>();

/** Calls `listener` after every key write on `db` made by this process; returns the unsubscribe. */
export function onKeyWrite(db: Db, listener: () => Promise<void>): () => void {
  let listeners = keyWriteListeners.get(db);
  if (!listeners) keyWriteListeners.set(db, (listeners = new Set()));
  listeners.add(listener);
  return () => listeners.delete(listener);
}

async function noteKeyWrite(db: Db): Promise<void> {
  keyWrites++;
  await Promise.all([...(keyWriteListeners.get(db) ?? [])].map((listener) => listener()));
}

/** The key that signs at `now`: of the keys not retired yet, the oldest (a `next` key waits for it). */
async function activeKeyRow(db: Db, now: Date): Promise<SigningKey | undefined> {
  return await one(db.select().from(signingKeys).where(unretired(now)).orderBy(asc(signingKeys.createdAt), asc(signingKeys.kid)));
}

/** The key that signs at `now` (undefined before the first key exists): its kid and since when it exists. */
export async function activeKey(db: Db, now: Date): Promise<{ kid: string; createdAt: Date } | undefined> {
  const row = await activeKeyRow(db, now);
  return row && { kid: row.kid, createdAt: row.createdAt };
}

/** Creates the first signing key when there is none (first start). */
export async function ensureSigningKey(db: Db, now: Date): Promise<void> {
  if (await activeKeyRow(db, now)) return;
  const key = await generateSigningKey();
  // Another process may have raced us between the check and here: only insert if still keyless.
  await transaction(db, async (tx) => {
    const existing = await one(tx.select({ kid: signingKeys.kid }).from(signingKeys).where(unretired(now)));
    if (!existing) await exec(tx.insert(signingKeys).values({ ...storedKey(tx, key), createdAt: now }));
  });
  await noteKeyWrite(db);
}

/**
 * Publishes a new signing key that takes over after `KEY_ACTIVATION_DELAY_MS`; the current one
 * signs until then and stays published `tokenLifetimeSeconds` (+ skew) longer. While a next key
 * waits, another rotation is 409 `key_rotation_pending` (it would retire a key that never signed).
 * Returns the new key's kid, when it starts signing, and the kids it takes over from.
 */
export async function rotateSigningKey(db: Db, now: Date, tokenLifetimeSeconds: number, actor: string) {
  const key = await generateSigningKey();
  const activatesAt = new Date(now.getTime() + KEY_ACTIVATION_DELAY_MS);
  const expiresAt = new Date(activatesAt.getTime() + tokenLifetimeSeconds * 1000 + SKEW_MS);
  const rotated = await transaction(db, async (tx) => {
    const waiting = await one(tx
      .select({ retiredAt: signingKeys.retiredAt })
      .from(signingKeys)
      .where(and(isNotNull(signingKeys.retiredAt), gt(signingKeys.retiredAt, now))));
    if (waiting) {
      const next = await one(tx.select({ kid: signingKeys.kid }).from(signingKeys).where(isNull(signingKeys.retiredAt)).orderBy(desc(signingKeys.createdAt)));
      throw conflict(
        'key_rotation_pending',
        `Key ${next?.kid ?? '(unknown)'} is published and starts signing at ${waiting.retiredAt!.toISOString()}; rotate again after that.`,
      );
    }
    const retired = (await many(tx
      .update(signingKeys)
      .set({ retiredAt: activatesAt, expiresAt })
      .where(isNull(signingKeys.retiredAt))
      .returning({ kid: signingKeys.kid })))
      .map((r) => r.kid);
    await exec(tx.insert(signingKeys).values({ ...storedKey(tx, key), createdAt: now }));
    await recordAudit(tx, now, { actor, action: 'signing_key.rotated', target: key.kid, details: { retired, activatesAt: activatesAt.toISOString() } });
    return { kid: key.kid, activatesAt, retired };
  });
  await noteKeyWrite(db);
  return rotated;
}

/** Every key, newest first, with its status and when it started (or starts) signing; never the private part. */
export async function listKeys(db: Db, now: Date) {
  const rows = await many(db.select().from(signingKeys).orderBy(desc(signingKeys.createdAt), desc(signingKeys.kid)));
  const signing = (await activeKeyRow(db, now))?.kid;
  return rows.map((row, i) => {
    // A key takes over when the one before it retires; the first key signed from its creation.
    const previous = rows[i + 1];
    const activatesAt = previous?.retiredAt ?? row.createdAt;
    const status: KeyStatus =
      row.kid === signing
        ? 'active'
        : !row.retiredAt || row.retiredAt.getTime() > now.getTime()
          ? 'next'
          : row.expiresAt && row.expiresAt.getTime() > now.getTime()
            ? 'retiring'
            : 'retired';
    return {
      kid: row.kid,
      alg: row.alg,
      status,
      createdAt: row.createdAt.toISOString(),
      activatesAt: activatesAt.toISOString(),
      retiredAt: row.retiredAt?.toISOString() ?? null,
      expiresAt: row.expiresAt?.toISOString() ?? null,
    };
  });
}

/**
 * The public key set: every key not retired yet (the next one included) and every retiring one.
 * SQLite: a prepared statement run synchronously, for the JWKS early answer (oauth/discovery.ts).
 */
const publishedKeys = preparedPerDb((db) =>
  db
    .select({ publicJwk: signingKeys.publicJwk })
    .from(signingKeys)
    .where(or(isNull(signingKeys.retiredAt), gt(signingKeys.expiresAt, sql.placeholder('nowMs')))) // raw placeholder: milliseconds
    .orderBy(desc(signingKeys.createdAt), desc(signingKeys.kid))
    .prepare(),
);

export function publishedJwks(db: Db, now: Date): { keys: JWK[] } {
  return { keys: publishedKeys(db).all({ nowMs: now.getTime() }).map((r) => r.publicJwk as JWK) };
}

/**
 * The published set at `now` with when each key leaves it (epoch ms; Infinity while not retired):
 * a cache read once can then drop a retiring key at the exact store-clock moment, as
 * `publishedJwks` would (oauth/discovery.ts, PostgreSQL).
 */
export async function readPublishedKeys(db: Db, now: Date): Promise<Array<{ jwk: JWK; until: number }>> {
  const rows = await many(
    db
      .select({ publicJwk: signingKeys.publicJwk, retiredAt: signingKeys.retiredAt, expiresAt: signingKeys.expiresAt })
      .from(signingKeys)
      .where(or(isNull(signingKeys.retiredAt), gt(signingKeys.expiresAt, now)))
      .orderBy(desc(signingKeys.createdAt), desc(signingKeys.kid)),
  );
  return rows.map((r) => ({ jwk: r.publicJwk as JWK, until: r.retiredAt === null ? Infinity : (r.expiresAt?.getTime() ?? 0) }));
}

/** The key that signs right now, with its kid. */
export interface SigningKeyObject {
  kid: string;
  key: KeyObject;
}

/** The key that signs right now, cached as a KeyObject. */
export class KeyRing {
  /** The cached signing key, read at `loadedAt` (wall clock), good until `until` (store clock) when a hand-over is due. */
  private current: (SigningKeyObject & { loadedAt: number; until: number | undefined }) | undefined;

  private initialised: Promise<void> | undefined;

  /** How long a read of the key table is trusted (wall clock). */
  private readonly reloadMs: number;

  constructor(private readonly ctx: AppContext) {
    this.reloadMs = engineOf(ctx.db) === 'postgres' ? PG_RELOAD_MS : RELOAD_MS;
  }

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

  /**
   * The cached signing key while it is fresh (read within RELOAD_MS, PG_RELOAD_MS on PostgreSQL, before a due hand-over), or
   * undefined: then `signingKey()` reads the store. Synchronous, so a signature needs no await
   * for it on the token endpoint.
   */
  freshSigningKey(): SigningKeyObject | undefined {
    const cached = this.current;
    if (!cached || Date.now() - cached.loadedAt >= this.reloadMs) return undefined;
    return cached.until === undefined || this.ctx.clock.now().getTime() < cached.until ? cached : undefined;
  }

  async signingKey(): Promise<SigningKeyObject> {
    const fresh = this.freshSigningKey();
    if (fresh) return fresh;
    const cached = this.current;
    const now = this.ctx.clock.now();
    await this.ensure();
    const row = await activeKeyRow(this.ctx.db, now);
    if (!row) throw new Error('no signing key: the OAuth plugin did not initialise keys');
    const key = cached?.kid === row.kid ? cached.key : createPrivateKey(openAtRest(this.ctx.db, row.privateKeyPem, pemPurpose(row.kid)));
    this.current = { kid: row.kid, key, loadedAt: Date.now(), until: row.retiredAt?.getTime() };
    return this.current;
  }

  private readonly verifiers = new Map<string, webcrypto.CryptoKey>();

  /** jose key resolver for verifying our own tokens: only RS256 keys that are still published. */
  readonly verificationKey = async (header: JWSHeaderParameters): Promise<webcrypto.CryptoKey> => {
    const kid = header.kid;
    const jwk = kid && header.alg === SIGNING_ALG ? await this.publicKey(kid) : undefined;
    if (!kid || !jwk) throw new Error('unknown signing key');
    let key = this.verifiers.get(kid);
    if (!key) {
      key = (await importJWK(jwk, SIGNING_ALG)) as webcrypto.CryptoKey;
      this.verifiers.set(kid, key);
    }
    return key;
  };

  private readonly publicKeyObjects = new Map<string, { key: KeyObject; checkedAt: number }>();

  /**
   * The public key with this kid as a node:crypto KeyObject while it is published, for verifying
   * our own tokens synchronously (oauth/access-tokens.ts). Parsed once per kid; whether it is
   * still published is asked again every RELOAD_MS (a key leaves the JWKS once its last token
   * has expired).
   */
  async verifyingKey(kid: string): Promise<KeyObject | undefined> {
    const cached = this.publicKeyObjects.get(kid);
    const now = Date.now();
    if (cached && now - cached.checkedAt < this.reloadMs) return cached.key;
    const jwk = await this.publicKey(kid);
    if (!jwk) {
      this.publicKeyObjects.delete(kid);
      return undefined;
    }
    const key = cached?.key ?? createPublicKey({ key: jwk as JsonWebKeyInput['key'], format: 'jwk' });
    this.publicKeyObjects.set(kid, { key, checkedAt: now });
    return key;
  }

  /** The public JWK with this kid if it is still published. */
  async publicKey(kid: string): Promise<JWK | undefined> {
    const row = await one(this.ctx.db
      .select({ publicJwk: signingKeys.publicJwk })
      .from(signingKeys)
      .where(and(eq(signingKeys.kid, kid), or(isNull(signingKeys.retiredAt), gt(signingKeys.expiresAt, this.ctx.clock.now())))));
    return row?.publicJwk as JWK | undefined;
  }
}
