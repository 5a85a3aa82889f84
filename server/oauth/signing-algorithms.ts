/**
 * The JWS algorithms Gatehouse signs with (issue 38), one place for what differs between them:
 * - RS256: RSASSA-PKCS1-v1_5 with SHA-256 over an RSA-2048 key (RFC 7518 §3.3), the default;
 * - ES256: ECDSA over P-256 with SHA-256 (RFC 7518 §3.4), the signature as R‖S (64 bytes, IEEE
 *   P1363), not DER;
 * - EdDSA: Ed25519 (RFC 8037 §3.1), which hashes internally (no digest named).
 * Each is node:crypto over a KeyObject: its `sign`/`verify` take the digest and, for ECDSA, the
 * signature encoding; the JWK export gives `kty`, `crv` and the public coordinates.
 *
 * Where a signature runs (docs/decisions/0200-signing-algorithms.md, measured with `npm run bench
 * -- refresh --alg ...`): on libuv's thread pool for every algorithm. For RS256 (0.25 ms) that
 * was issue 27's choice; for ES256 and EdDSA (0.03–0.04 ms) signing on the event loop looked
 * cheaper alone, but under load it cost the server more CPU per grant than the hand-off does (the
 * event loop paid about twice the signature's own cost), in five comparisons of six.
 */
import { generateKeyPair, sign, verify, type KeyObject, type SignKeyObjectInput } from 'node:crypto';
import { promisify } from 'node:util';
import { SIGNING_ALGS, type SigningAlg } from '../db/schema.js';

export { SIGNING_ALGS, type SigningAlg };

/** The algorithm of applications that choose none, and of every application from before issue 38. */
export const DEFAULT_SIGNING_ALG: SigningAlg = 'RS256';

interface Algorithm {
  /** node:crypto's name of the key type (`KeyObject.asymmetricKeyType`). */
  keyType: 'rsa' | 'ec' | 'ed25519';
  /** The digest node:crypto's sign/verify take; null for Ed25519. */
  digest: 'sha256' | null;
  /** JWK members of the public key, in the order published. */
  jwkMembers: readonly string[];
  /** Signed on libuv's pool (callback form) rather than on the event loop. */
  onPool: boolean;
  generate(): Promise<{ publicKey: KeyObject; privateKey: KeyObject }>;
}

const generate = promisify(generateKeyPair);

const ALGORITHMS: Record<SigningAlg, Algorithm> = {
  RS256: {
    keyType: 'rsa', digest: 'sha256', jwkMembers: ['kty', 'n', 'e'], onPool: true,
    generate: () => generate('rsa', { modulusLength: 2048 }),
  },
  ES256: {
    keyType: 'ec', digest: 'sha256', jwkMembers: ['kty', 'crv', 'x', 'y'], onPool: true,
    generate: () => generate('ec', { namedCurve: 'P-256' }),
  },
  EdDSA: {
    keyType: 'ed25519', digest: null, jwkMembers: ['kty', 'crv', 'x'], onPool: true,
    generate: () => generate('ed25519'),
  },
};

/**
 * For `npm run bench` only (server/cli/bench-metrics.ts, `bench-signing`): which algorithms sign on
 * libuv's pool — these, when given — so one server can be measured both ways, window by window.
 */
export function signOnPool(algs?: readonly SigningAlg[]): SigningAlg[] {
  if (algs) for (const alg of SIGNING_ALGS) ALGORITHMS[alg].onPool = algs.includes(alg);
  return SIGNING_ALGS.filter((alg) => ALGORITHMS[alg].onPool);
}

export const isSigningAlg = (value: unknown): value is SigningAlg => typeof value === 'string' && (SIGNING_ALGS as readonly string[]).includes(value);

/** RS256 first, then ES256, EdDSA: the order of the JWKS and the key list. */
export const algRank = (alg: string): number => {
  const rank = (SIGNING_ALGS as readonly string[]).indexOf(alg);
  return rank < 0 ? SIGNING_ALGS.length : rank;
};

/** A new key pair of this algorithm: its public JWK (without kid, alg, use) and its private PKCS#8 PEM. */
export async function generateKeyMaterial(alg: SigningAlg): Promise<{ jwk: Record<string, string>; privateKeyPem: string }> {
  const algorithm = ALGORITHMS[alg];
  const { publicKey, privateKey } = await algorithm.generate();
  const exported = publicKey.export({ format: 'jwk' }) as Record<string, string>;
  const jwk = Object.fromEntries(algorithm.jwkMembers.map((name) => [name, exported[name]!]));
  return { jwk, privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

/** Whether a parsed key is of this algorithm's type (a key of another type never signs or verifies for it). */
export const keyFits = (alg: SigningAlg, key: KeyObject): boolean => key.asymmetricKeyType === ALGORITHMS[alg].keyType;

/** ES256 signatures are R‖S in JWS (RFC 7518 §3.4), not node's default DER. */
const keyInput = (alg: SigningAlg, key: KeyObject): KeyObject | SignKeyObjectInput => (alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key);

/**
 * The base64url signature of `input`: a promise when it runs on libuv's pool (every algorithm, as
 * built), the value itself when on the event loop (a benchmark's switch, `signOnPool`).
 */
export function signInput(alg: SigningAlg, key: KeyObject, input: Buffer): string | Promise<string> {
  const { digest, onPool } = ALGORITHMS[alg];
  if (!onPool) return sign(digest, input, keyInput(alg, key)).toString('base64url');
  return new Promise((resolve, reject) => {
    sign(digest, input, keyInput(alg, key), (error, signature) => {
      if (error) reject(error);
      else resolve(signature.toString('base64url'));
    });
  });
}

/** Whether `signature` is this algorithm's signature of `input` by `key` (false for a malformed one). */
export function verifyInput(alg: SigningAlg, key: KeyObject, input: Buffer, signature: Buffer): boolean {
  if (!keyFits(alg, key)) return false;
  try {
    return verify(ALGORITHMS[alg].digest, input, keyInput(alg, key), signature);
  } catch {
    return false;
  }
}
