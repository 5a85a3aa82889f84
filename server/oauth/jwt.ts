/**
 * The JWTs we sign (DESIGN §4.10, spec §2): access tokens (`typ: at+jwt`, RFC 9068 header) with
 * exactly `iss, sub, aud, azp, scope, iat, exp, jti, app_user` plus `client_id` and `sid`, and
 * OIDC ID tokens (`aud` = client id, `auth_time`, `nonce`, `sid`, profile/e-mail claims by
 * scope). One RS256 signature each, through WebCrypto.
 */
import { randomBytes } from 'node:crypto';
import { SignJWT, type JWTPayload } from 'jose';
import type { Person } from '../db/schema.js';
import { SIGNING_ALG, type KeyRing } from './keys.js';
import { hasScope } from './scopes.js';

export interface AppUserClaim {
  id: string;
  status: string;
  role: string;
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

async function sign(keys: KeyRing, payload: JWTPayload, typ: string): Promise<string> {
  const { kid, key } = await keys.signingKey();
  return new SignJWT(payload).setProtectedHeader({ alg: SIGNING_ALG, typ, kid }).sign(key);
}

export interface AccessTokenInput {
  issuer: string;
  subject: string;
  audience: string;
  clientId: string;
  scope: string;
  appUser: AppUserClaim;
  sessionId: string | null;
  now: Date;
  ttlSeconds: number;
}

export function signAccessToken(keys: KeyRing, t: AccessTokenInput): Promise<string> {
  const iat = seconds(t.now);
  const payload: JWTPayload = {
    iss: t.issuer,
    sub: t.subject,
    aud: t.audience,
    azp: t.clientId,
    client_id: t.clientId,
    scope: t.scope,
    iat,
    exp: iat + t.ttlSeconds,
    jti: randomBytes(16).toString('base64url'),
    app_user: { id: t.appUser.id, status: t.appUser.status, role: t.appUser.role },
  };
  if (t.sessionId) payload.sid = t.sessionId;
  return sign(keys, payload, 'at+jwt');
}

export interface IdTokenInput {
  issuer: string;
  person: Pick<Person, 'id' | 'email' | 'emailVerified' | 'name'>;
  clientId: string;
  scope: string;
  nonce: string | null;
  authTime: Date;
  sessionId: string | null;
  now: Date;
  ttlSeconds: number;
}

/** Profile and e-mail claims shared by the ID token and userinfo. */
export function personClaims(person: IdTokenInput['person'], scope: string): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  if (hasScope(scope, 'profile')) claims.name = person.name ?? null;
  if (hasScope(scope, 'email')) {
    claims.email = person.email;
    claims.email_verified = person.emailVerified;
  }
  return claims;
}

export function signIdToken(keys: KeyRing, t: IdTokenInput): Promise<string> {
  const iat = seconds(t.now);
  const payload: JWTPayload = {
    iss: t.issuer,
    sub: t.person.id,
    aud: t.clientId,
    iat,
    exp: iat + t.ttlSeconds,
    auth_time: seconds(t.authTime),
    ...personClaims(t.person, t.scope),
  };
  if (t.nonce) payload.nonce = t.nonce;
  if (t.sessionId) payload.sid = t.sessionId;
  return sign(keys, payload, 'JWT');
}
