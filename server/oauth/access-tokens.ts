/**
 * Reading our own access tokens back (RFC 9068 §4): userinfo, revocation, introspection — and
 * every other check of "an access token Gatehouse signed" (forward auth, the admin API's panel
 * tokens): `readAccessToken` is that one check, `signedAccessClaims` its signature part. A token
 * passes if — and only if — we signed it as an access token: `typ: at+jwt`, a `kid` whose key is
 * still published, an `alg` that is that key's own algorithm (RS256, ES256 or EdDSA, issue 38; so
 * `none`, HS256 or an algorithm other than the key's is refused: no algorithm confusion), and a
 * valid signature. The check is synchronous, node:crypto's `verify` over the KeyRing's cached public
 * KeyObject (issue 27: jose's `jwtVerify` goes through WebCrypto, a thread-pool job and several
 * promises per token, about ten times this cost); a token of ours carries nothing jose's other
 * checks would look at (`crit`, `b64`, `nbf`).
 *
 * A client presents the same token many times (a back end introspects it on every request it
 * serves; a browser application reads userinfo on each page load), and a signature that verified
 * once always will while the token lives: its key stays published until every token it signed
 * has expired (keys.ts). So a verified token is remembered, by its SHA-256, per KeyRing (at most
 * VERIFIED_CACHE_SIZE, the oldest forgotten first); what can change — expiry, revocation, the
 * family, session or membership — is checked on every use by the callers.
 *
 * The time and issuer rules are `readAccessToken`'s; introspection applies its own on top of
 * `signedAccessClaims` (the caller must be the token's client, its family must be alive, …).
 */
import type { AppContext } from '../context.js';
import { sha256 } from '../util/crypto.js';
import { ACCESS_TOKEN_TYP } from './jwt.js';
import type { KeyRing } from './keys.js';
import { verifyInput } from './signing-algorithms.js';

/** The claims we put in access tokens (jwt.ts), as read back: types are checked where used. */
export interface AccessClaims {
  iss?: unknown;
  sub?: unknown;
  aud?: unknown;
  azp?: unknown;
  client_id?: unknown;
  scope?: unknown;
  iat?: unknown;
  exp?: unknown;
  jti?: unknown;
  sid?: unknown;
  app_user?: { id?: unknown; status?: unknown; role?: unknown };
}

/** Access tokens whose signature verified, remembered (~400 bytes each) per KeyRing. */
export const VERIFIED_CACHE_SIZE = 5_000;

const verifiedByKeys = new WeakMap<KeyRing, Map<string, AccessClaims>>();

function parseJson(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The claims of a token we signed as an access token with a published key; no time or issuer check. */
export async function signedAccessClaims(keys: KeyRing, token: string): Promise<AccessClaims | undefined> {
  let verified = verifiedByKeys.get(keys);
  if (!verified) verifiedByKeys.set(keys, (verified = new Map()));
  const id = sha256(token);
  const known = verified.get(id);
  if (known) return known;
  const claims = await verifySignature(keys, token);
  if (!claims) return undefined;
  if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value!);
  verified.set(id, claims);
  return claims;
}

async function verifySignature(keys: KeyRing, token: string): Promise<AccessClaims | undefined> {
  const [headerPart, payloadPart, signaturePart, extra] = token.split('.');
  if (!headerPart || !payloadPart || !signaturePart || extra !== undefined) return undefined;
  const header = parseJson(headerPart) as { alg?: unknown; typ?: unknown; kid?: unknown } | undefined;
  if (typeof header?.alg !== 'string' || header.typ !== ACCESS_TOKEN_TYP || typeof header.kid !== 'string') return undefined;
  const key = await keys.verifyingKey(header.kid);
  // The header's algorithm must be the key's own: a key verifies for one algorithm only.
  if (!key || header.alg !== key.alg) return undefined;
  const signingInput = Buffer.from(`${headerPart}.${payloadPart}`);
  if (!verifyInput(key.alg, key.key, signingInput, Buffer.from(signaturePart, 'base64url'))) return undefined;
  const claims = parseJson(payloadPart);
  return claims && typeof claims === 'object' && !Array.isArray(claims) ? (claims as AccessClaims) : undefined;
}

/**
 * The claims of one of our own access tokens for this issuer, unexpired at the store clock
 * (revoked or not), or undefined: THE check of "an access token Gatehouse signed", for every
 * algorithm it signs with. Callers add their own rules (revocation, audience, membership).
 */
export async function readAccessToken(ctx: AppContext, keys: KeyRing, token: string): Promise<AccessClaims | undefined> {
  const claims = await signedAccessClaims(keys, token);
  if (!claims || claims.iss !== ctx.config.issuer) return undefined;
  if (typeof claims.exp !== 'number' || claims.exp * 1000 <= ctx.clock.now().getTime()) return undefined;
  return claims;
}
