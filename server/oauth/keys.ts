/**
 * Signing keys (DESIGN §4.10, issue 38), stored in `signing_keys`: one chain per algorithm —
 * RS256 (RSA-2048), ES256 (P-256) and EdDSA (Ed25519) — so each application signs with the
 * algorithm it chose (`applications.signing_alg`) and every key is in the one JWKS, each with
 * its own `kid`, `alg`, `kty` (and `crv`) and `use: sig`. All three exist from the first start,
 * or from the first start after an upgrade (`ensureSigningKeys`), and rotate together.
 *
 * Rotation publishes first and signs later (issue 22): the next keys go into the JWKS at once but
 * signs only after the JWKS cache lifetime we announce (`Cache-Control: max-age`) plus clock skew,
 * so a verifier that cached the key set just before the rotation has fetched it again before it
 * sees a token with the new `kid` (jose's createRemoteJWKSet, for one, refetches at most every
 * 30 s and would otherwise refuse such tokens: "no applicable key found"). No column says when a
 * key starts: the previous key's `retiredAt` is set to that moment, and of an algorithm's keys not
 * retired yet the oldest signs. A retired key stays in the JWKS until every token it signed has
 * expired (`expiresAt` = retirement + the longest token lifetime + skew). One rotation publishes a
 * new key of every algorithm, with one hand-over moment for all.
 *
 * Status words, the same in the rotate answer and the key list: `next` (published, not signing
 * yet), `active` (signing), `retiring` (published for the tokens it signed), `retired` (gone).
 *
 * Each signing key is parsed once into a node:crypto `KeyObject` (jwt.ts signs with it); our own
 * access tokens are verified with node:crypto over public KeyObjects (access-tokens.ts), ID-token
 * hints at end-session with jose. A key verifies only tokens whose header names its own `alg`
 * (no algorithm confusion: an RS256 key never checks an "HS256" or "ES256" token).
 */
import { and, asc, desc, eq, gt, isNotNull, isNull, or, sql } from 'drizzle-orm';
import { importJWK, type JWK, type JWSHeaderParameters } from 'jose';
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
import { algRank, DEFAULT_SIGNING_ALG, generateKeyMaterial, isSigningAlg, keyFits, SIGNING_ALGS, type SigningAlg } from './signing-algorithms.js';
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

/** A signing key about to be stored: its kid, algorithm, public JWK and private PEM. */
export interface NewKey {
  kid: string;
  alg: SigningAlg;
  publicJwk: JWK;
  privateKeyPem: string;
}

async function generateSigningKey(alg: SigningAlg): Promise<NewKey> {
  const { jwk, privateKeyPem } = await generateKeyMaterial(alg);
  const kid = newId('kid');
  return { kid, alg, publicJwk: { ...jwk, kid, alg, use: 'sig' }, privateKeyPem };
}

/** A key's private PEM as stored: sealed under GATEHOUSE_KEY_SECRET in PostgreSQL mode (db/secrets-at-rest.ts). */
const pemPurpose = (kid: string) => `private key of signing key ${kid}`;
const storedKey = (db: Db, key: NewKey) => ({ ...key, privateKeyPem: sealAtRest(db, key.privateKeyPem, pemPurpose(key.kid)) });

/** RS256 first, then ES256 and EdDSA (algRank); within an algorithm the order given stays. */
const byAlg = <T extends { alg: string }>(rows: T[]): T[] => rows.sort((a, b) => algRank(a.alg) - algRank(b.alg));

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

/** The key of `alg` that signs at `now`: of its keys not retired yet, the oldest (a `next` key waits for it). */
async function activeKeyRow(db: Db, now: Date, alg: SigningAlg): Promise<SigningKey | undefined> {
  return await one(db
    .select()
    .from(signingKeys)
    .where(and(eq(signingKeys.alg, alg), unretired(now)))
    .orderBy(asc(signingKeys.createdAt), asc(signingKeys.kid)));
}

/** The key of `alg` (RS256 unless said) that signs at `now`, undefined before it exists: its kid and since when it exists. */
export async function activeKey(db: Db, now: Date, alg: SigningAlg = DEFAULT_SIGNING_ALG): Promise<{ kid: string; createdAt: Date } | undefined> {
  const row = await activeKeyRow(db, now, alg);
  return row && { kid: row.kid, createdAt: row.createdAt };
}

/** The algorithms that have no key not retired yet at `now`. */
async function keylessAlgs(db: Db, now: Date): Promise<SigningAlg[]> {
  const rows = await many(db.select({ alg: signingKeys.alg }).from(signingKeys).where(unretired(now)));
  return SIGNING_ALGS.filter((alg) => !rows.some((r) => r.alg === alg));
}

/**
 * Creates a signing key for every algorithm that has none: all three at the first start, ES256 and
 * EdDSA at the first start after the upgrade that brought them (the RS256 chain goes on as it was).
 * A key made here signs at once: no token of its algorithm exists yet, and an application can only
 * be switched to it once the server runs, by which time verifiers that fetch the JWKS see it.
 */
export async function ensureSigningKeys(
  db: Db,
  now: Date,
  /** Where new keys come from (the tests' helper hands out keys generated ahead: test/helpers/signing-key-pool.ts). */
  generate: (alg: SigningAlg) => Promise<NewKey> = generateSigningKey,
): Promise<void> {
  const missing = await keylessAlgs(db, now);
  if (!missing.length) return;
  const keys = await Promise.all(missing.map(generate));
  // Another process may have raced us between the check and here: only insert where still keyless.
  await transaction(db, async (tx) => {
    const still = await keylessAlgs(tx, now);
    for (const key of keys) if (still.includes(key.alg)) await exec(tx.insert(signingKeys).values({ ...storedKey(tx, key), createdAt: now }));
  });
  await noteKeyWrite(db);
}

/**
 * Publishes a new signing key of every algorithm, which take over after `KEY_ACTIVATION_DELAY_MS`;
 * the current ones sign until then and stay published `tokenLifetimeSeconds` (+ skew) longer.
 * While next keys wait, another rotation is 409 `key_rotation_pending` (it would retire keys that
 * never signed). Returns the new keys (RS256 first; `kid` is the RS256 one), when they start
 * signing, and the kids they take over from.
 */
export async function rotateSigningKey(db: Db, now: Date, tokenLifetimeSeconds: number, actor: string) {
  const keys = await Promise.all(SIGNING_ALGS.map(generateSigningKey));
  const activatesAt = new Date(now.getTime() + KEY_ACTIVATION_DELAY_MS);
  const expiresAt = new Date(activatesAt.getTime() + tokenLifetimeSeconds * 1000 + SKEW_MS);
  const rotated = await transaction(db, async (tx) => {
    const waiting = await one(tx
      .select({ retiredAt: signingKeys.retiredAt })
      .from(signingKeys)
      .where(and(isNotNull(signingKeys.retiredAt), gt(signingKeys.retiredAt, now))));
    if (waiting) {
      const next = byAlg(await many(tx.select({ kid: signingKeys.kid, alg: signingKeys.alg }).from(signingKeys).where(isNull(signingKeys.retiredAt))));
      const kids = next.map((k) => k.kid);
      throw conflict(
        'key_rotation_pending',
        `${kids.length === 1 ? 'Key' : 'Keys'} ${kids.join(', ') || '(unknown)'} ${kids.length === 1 ? 'is' : 'are'} published and ${kids.length === 1 ? 'starts' : 'start'} signing at ${waiting.retiredAt!.toISOString()}; rotate again after that.`,
      );
    }
    const retired = (await many(tx
      .update(signingKeys)
      .set({ retiredAt: activatesAt, expiresAt })
      .where(isNull(signingKeys.retiredAt))
      .returning({ kid: signingKeys.kid })))
      .map((r) => r.kid);
    for (const key of keys) await exec(tx.insert(signingKeys).values({ ...storedKey(tx, key), createdAt: now }));
    const kids = Object.fromEntries(keys.map((k) => [k.alg, k.kid]));
    // One rotation, one entry: its target is the RS256 key (the default algorithm's), details name them all.
    await recordAudit(tx, now, { actor, action: 'signing_key.rotated', target: keys[0]!.kid, details: { keys: kids, retired, activatesAt: activatesAt.toISOString() } });
    return { kid: keys[0]!.kid, keys: keys.map(({ kid, alg }) => ({ kid, alg })), activatesAt, retired };
  });
  await noteKeyWrite(db);
  return rotated;
}

/**
 * Every key — RS256 first, then ES256 and EdDSA, each newest first — with its status and when it
 * started (or starts) signing; never the private part.
 */
export async function listKeys(db: Db, now: Date) {
  const rows = byAlg(await many(db.select().from(signingKeys).orderBy(desc(signingKeys.createdAt), desc(signingKeys.kid))));
  const signing = new Set<string>();
  for (const alg of SIGNING_ALGS) {
    const active = await activeKeyRow(db, now, alg);
    if (active) signing.add(active.kid);
  }
  return rows.map((row, i) => {
    // A key takes over when the one before it (in its algorithm's chain) retires; the first key of
    // a chain signed from its creation.
    const next = rows[i + 1];
    const previous = next?.alg === row.alg ? next : undefined;
    const activatesAt = previous?.retiredAt ?? row.createdAt;
    const status: KeyStatus =
      signing.has(row.kid)
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
    .select({ alg: signingKeys.alg, publicJwk: signingKeys.publicJwk })
    .from(signingKeys)
    .where(or(isNull(signingKeys.retiredAt), gt(signingKeys.expiresAt, sql.placeholder('nowMs')))) // raw placeholder: milliseconds
    .orderBy(desc(signingKeys.createdAt), desc(signingKeys.kid))
    .prepare(),
);

/** The JWKS: RS256 keys first (a client that ignores `kid` takes the first key), each algorithm's newest first. */
export function publishedJwks(db: Db, now: Date): { keys: JWK[] } {
  return { keys: byAlg(publishedKeys(db).all({ nowMs: now.getTime() })).map((r) => r.publicJwk as JWK) };
}

/**
 * The published set at `now` with when each key leaves it (epoch ms; Infinity while not retired):
 * a cache read once can then drop a retiring key at the exact store-clock moment, as
 * `publishedJwks` would (oauth/discovery.ts, PostgreSQL).
 */
export async function readPublishedKeys(db: Db, now: Date): Promise<Array<{ jwk: JWK; until: number }>> {
  const rows = await many(
    db
      .select({ alg: signingKeys.alg, publicJwk: signingKeys.publicJwk, retiredAt: signingKeys.retiredAt, expiresAt: signingKeys.expiresAt })
      .from(signingKeys)
      .where(or(isNull(signingKeys.retiredAt), gt(signingKeys.expiresAt, now)))
      .orderBy(desc(signingKeys.createdAt), desc(signingKeys.kid)),
  );
  return byAlg(rows).map((r) => ({ jwk: r.publicJwk as JWK, until: r.retiredAt === null ? Infinity : (r.expiresAt?.getTime() ?? 0) }));
}

/** An algorithm's key that signs right now, with its kid. */
export interface SigningKeyObject {
  kid: string;
  alg: SigningAlg;
  key: KeyObject;
}

/** A published key, parsed, with the one algorithm it verifies. */
export interface VerifyingKey {
  alg: SigningAlg;
  key: KeyObject;
}

/** The keys that sign right now, one per algorithm, cached as KeyObjects. */
export class KeyRing {
  /** The cached signing key of each algorithm, read at `loadedAt` (wall clock), good until `until` (store clock) when a hand-over is due. */
  private readonly current = new Map<SigningAlg, SigningKeyObject & { loadedAt: number; until: number | undefined }>();

  private initialised: Promise<void> | undefined;

  /** How long a read of the key table is trusted (wall clock). */
  private readonly reloadMs: number;

  constructor(private readonly ctx: AppContext) {
    this.reloadMs = engineOf(ctx.db) === 'postgres' ? PG_RELOAD_MS : RELOAD_MS;
  }

  /** Creates the keys the store lacks (first start, upgrade); later calls cost one resolved promise. */
  ensure(): Promise<void> {
    this.initialised ??= ensureSigningKeys(this.ctx.db, this.ctx.clock.now()).catch((error: unknown) => {
      this.initialised = undefined;
      throw error;
    });
    return this.initialised;
  }

  /** Drop the cache (after a rotation in this process). */
  invalidate(): void {
    this.current.clear();
  }

  /**
   * The cached signing key of `alg` while it is fresh (read within RELOAD_MS, PG_RELOAD_MS on
   * PostgreSQL, before a due hand-over), or undefined: then `signingKey()` reads the store.
   * Synchronous, so a signature needs no await for it on the token endpoint.
   */
  freshSigningKey(alg: SigningAlg): SigningKeyObject | undefined {
    const cached = this.current.get(alg);
    if (!cached || Date.now() - cached.loadedAt >= this.reloadMs) return undefined;
    return cached.until === undefined || this.ctx.clock.now().getTime() < cached.until ? cached : undefined;
  }

  async signingKey(alg: SigningAlg): Promise<SigningKeyObject> {
    const fresh = this.freshSigningKey(alg);
    if (fresh) return fresh;
    const cached = this.current.get(alg);
    const now = this.ctx.clock.now();
    await this.ensure();
    const row = await activeKeyRow(this.ctx.db, now, alg);
    if (!row) throw new Error(`no ${alg} signing key: the OAuth plugin did not initialise keys`);
    const key = cached?.kid === row.kid ? cached.key : createPrivateKey(openAtRest(this.ctx.db, row.privateKeyPem, pemPurpose(row.kid)));
    if (!keyFits(alg, key)) throw new Error(`signing key ${row.kid} is not an ${alg} key`);
    const entry = { kid: row.kid, alg, key, loadedAt: Date.now(), until: row.retiredAt?.getTime() };
    this.current.set(alg, entry);
    return entry;
  }

  private readonly verifiers = new Map<string, webcrypto.CryptoKey>();

  /**
   * jose key resolver for verifying our own tokens (ID-token hints): a key that is still
   * published, for a token whose header names that key's own algorithm.
   */
  readonly verificationKey = async (header: JWSHeaderParameters): Promise<webcrypto.CryptoKey> => {
    const kid = header.kid;
    const jwk = kid ? await this.publicKey(kid) : undefined;
    if (!kid || !jwk || !isSigningAlg(jwk.alg) || header.alg !== jwk.alg) throw new Error('unknown signing key');
    let key = this.verifiers.get(kid);
    if (!key) {
      key = (await importJWK(jwk, jwk.alg)) as webcrypto.CryptoKey;
      this.verifiers.set(kid, key);
    }
    return key;
  };

  private readonly publicKeyObjects = new Map<string, VerifyingKey & { checkedAt: number }>();

  /**
   * The public key with this kid as a node:crypto KeyObject, with its algorithm, while it is
   * published, for verifying our own tokens synchronously (oauth/access-tokens.ts). Parsed once
   * per kid; whether it is still published is asked again every RELOAD_MS (a key leaves the JWKS
   * once its last token has expired).
   */
  async verifyingKey(kid: string): Promise<VerifyingKey | undefined> {
    const cached = this.publicKeyObjects.get(kid);
    const now = Date.now();
    if (cached && now - cached.checkedAt < this.reloadMs) return cached;
    const jwk = await this.publicKey(kid);
    if (!jwk || !isSigningAlg(jwk.alg)) {
      this.publicKeyObjects.delete(kid);
      return undefined;
    }
    const entry = { alg: jwk.alg, key: cached?.key ?? createPublicKey({ key: jwk as JsonWebKeyInput['key'], format: 'jwk' }), checkedAt: now };
    this.publicKeyObjects.set(kid, entry);
    return entry;
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
