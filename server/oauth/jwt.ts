/**
 * The JWTs we sign (DESIGN §4.10, spec §2): access tokens (`typ: at+jwt`, RFC 9068 header) with
 * exactly `iss, sub, aud, azp, scope, iat, exp, jti, app_user` plus `client_id`, `sid` and the
 * application's custom claims marked `inAccessToken`, and OIDC ID tokens (`aud` = client id,
 * `auth_time`, `acr`, `amr`, `nonce`, `sid`, and the claims about the person that
 * claims/compose.ts makes: standard ones by scope, `groups`, custom ones), and logout tokens
 * (Back-Channel Logout 1.0 §2.4). One signature each (RFC 7515 compact serialisation), with the
 * algorithm of the application the token is for (`alg` of each input: its `signingAlg`, issue 38)
 * and that algorithm's current key.
 *
 * Signing is node:crypto's `sign()` over the KeyRing's cached KeyObject, on libuv's thread pool
 * for every algorithm (signing-algorithms.ts); each (kid, typ) header is encoded once. This leaves the event loop only the JSON and base64url of the payload (jose's
 * SignJWT, over WebCrypto, cost several times that in promise and validation work per token).
 */
import type { JWTPayload } from 'jose';
import type { AuthMethod } from '../db/schema.js';
import { acrOf } from '../accounts/second-factor/factors.js';
import type { KeyRing, SigningKeyObject } from './keys.js';
import { signInput, type SigningAlg } from './signing-algorithms.js';
import { randomBase64url } from '../util/crypto.js';

export interface AppUserClaim {
  id: string;
  status: string;
  role: string;
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

const base64url = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64url');

/** The `typ` headers that tell our kinds of JWT apart (RFC 9068 §2.1, RFC 8725 §3.11, Back-Channel Logout §2.4). */
export const ACCESS_TOKEN_TYP = 'at+jwt';
export const ID_TOKEN_TYP = 'JWT';
export const LOGOUT_TOKEN_TYP = 'logout+jwt';

/** Encoded protected headers by `typ` and kid: a handful of entries (one per key and token type). */
const encodedHeaders = new Map<string, string>();

function encodedHeader(kid: string, alg: SigningAlg, typ: string): string {
  const cacheKey = `${typ} ${kid}`; // a kid has one algorithm
  let header = encodedHeaders.get(cacheKey);
  if (header === undefined) {
    header = base64url({ alg, typ, kid });
    encodedHeaders.set(cacheKey, header);
  }
  return header;
}

/** One JWT signed with `alg`'s current key: the cached key when fresh (no await), else the store's. */
function sign(keys: KeyRing, alg: SigningAlg, payload: JWTPayload, typ: string): Promise<string> {
  const fresh = keys.freshSigningKey(alg);
  if (!fresh) return keys.signingKey(alg).then((key) => signWith(key, payload, typ));
  const token = signWith(fresh, payload, typ);
  return typeof token === 'string' ? Promise.resolve(token) : token;
}

function signWith({ kid, alg, key }: SigningKeyObject, payload: JWTPayload, typ: string): string | Promise<string> {
  const signingInput = `${encodedHeader(kid, alg, typ)}.${base64url(payload)}`;
  const signature = signInput(alg, key, Buffer.from(signingInput));
  return typeof signature === 'string' ? `${signingInput}.${signature}` : signature.then((s) => `${signingInput}.${s}`);
}

/** What every token we sign says about its signature: the algorithm of the application it is for. */
interface Signed {
  /** The application's `signingAlg`. */
  alg: SigningAlg;
}

export interface AccessTokenInput extends Signed {
  issuer: string;
  subject: string;
  audience: string;
  clientId: string;
  /** Null for a client-credentials token asked without a scope (RFC 9068 §2.2.3: then no claim). */
  scope: string | null;
  /** Null for a client-credentials token: it acts for the application, not a member. */
  appUser: AppUserClaim | null;
  sessionId: string | null;
  now: Date;
  ttlSeconds: number;
  /** Chosen by the caller when it must record it (an audited client-credentials token); random otherwise. */
  jti?: string;
  /** The application's custom claims for the access token (claims/compose.ts); their names are never the ones above. */
  claims?: Record<string, unknown>;
}

export function signAccessToken(keys: KeyRing, t: AccessTokenInput): Promise<string> {
  const iat = seconds(t.now);
  const payload: JWTPayload = {
    iss: t.issuer,
    sub: t.subject,
    aud: t.audience,
    azp: t.clientId,
    client_id: t.clientId,
    iat,
    exp: iat + t.ttlSeconds,
    jti: t.jti ?? randomBase64url(16),
  };
  if (t.scope !== null) payload.scope = t.scope;
  if (t.appUser) payload.app_user = { id: t.appUser.id, status: t.appUser.status, role: t.appUser.role };
  if (t.sessionId) payload.sid = t.sessionId;
  if (t.claims) Object.assign(payload, t.claims);
  return sign(keys, t.alg, payload, ACCESS_TOKEN_TYP);
}

export interface IdTokenInput extends Signed {
  issuer: string;
  /** The person's id (`sub`). */
  subject: string;
  /** The claims about the person (claims/compose.ts, already fitted to the ID token's size). */
  claims: Record<string, unknown>;
  clientId: string;
  nonce: string | null;
  authTime: Date;
  /** RFC 8176 methods of the sign-in; empty for sessions from before they were recorded (then no `amr`). */
  amr: AuthMethod[];
  sessionId: string | null;
  now: Date;
  ttlSeconds: number;
}

export function signIdToken(keys: KeyRing, t: IdTokenInput): Promise<string> {
  const iat = seconds(t.now);
  const payload: JWTPayload = {
    iss: t.issuer,
    sub: t.subject,
    aud: t.clientId,
    iat,
    exp: iat + t.ttlSeconds,
    auth_time: seconds(t.authTime),
    acr: acrOf(t.amr),
    ...t.claims,
  };
  if (t.amr.length) payload.amr = t.amr;
  if (t.nonce) payload.nonce = t.nonce;
  if (t.sessionId) payload.sid = t.sessionId;
  return sign(keys, t.alg, payload, ID_TOKEN_TYP);
}

/**
 * The `jti` of an access token born of a refresh-token family: the family's id, a dot, and 96
 * random bits. Introspection reads the family back from it (`familyOfJti`), so revoking a family
 * makes every access token it gave out inactive there at once. Other access tokens' `jti` is
 * random only (no dot).
 */
export const familyJti = (familyId: string) => `${familyId}.${randomBase64url(12)}`;

/** The family id inside a `jti` made by `familyJti`, or undefined. */
export function familyOfJti(jti: string): string | undefined {
  const dot = jti.indexOf('.');
  return dot > 0 && jti.startsWith('fam_') ? jti.slice(0, dot) : undefined;
}

export interface LogoutTokenInput extends Signed {
  issuer: string;
  clientId: string;
  subject: string;
  /** The `sid` the session's ID tokens carried; null when no session is meant (member suspended). */
  sessionId: string | null;
  jti: string;
  now: Date;
}

/** How long a logout token is valid: the spec asks for a short life (§2.4, "≤ 2 minutes" here). */
export const LOGOUT_TOKEN_TTL_SECONDS = 120;

/**
 * A logout token (Back-Channel Logout 1.0 §2.4): `typ: logout+jwt`, `aud` = client id, `events`
 * with the back-channel logout event, `sub` and `sid` when known, and never a `nonce` (§2.4: a
 * nonce is forbidden, so a logout token can never pass as an ID token).
 */
export function signLogoutToken(keys: KeyRing, t: LogoutTokenInput): Promise<string> {
  const iat = seconds(t.now);
  const payload: JWTPayload = {
    iss: t.issuer,
    aud: t.clientId,
    iat,
    exp: iat + LOGOUT_TOKEN_TTL_SECONDS,
    jti: t.jti,
    sub: t.subject,
    events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
  };
  if (t.sessionId) payload.sid = t.sessionId;
  return sign(keys, t.alg, payload, LOGOUT_TOKEN_TYP);
}
