/**
 * Verifying our own access tokens for the userinfo endpoint (RFC 6750 §3, RFC 9068 §4):
 * RS256 with a published key, `typ: at+jwt`, our issuer, unexpired, and not revoked (its `jti`
 * is not on the revoked list, oauth/revoked-access-tokens.ts). Failures are `invalid_token` with
 * a `WWW-Authenticate: Bearer` challenge; a request without a token gets the challenge alone.
 */
import { jwtVerify, type JWTPayload } from 'jose';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { bearerToken } from '../http/admin-auth.js';
import { OAuthError } from './errors.js';
import { SIGNING_ALG, type KeyRing } from './keys.js';
import { isAccessTokenRevoked } from './revoked-access-tokens.js';

export const invalidToken = (description: string) =>
  new OAuthError('invalid_token', description, 401, {
    'www-authenticate': `Bearer realm="gatehouse", error="invalid_token", error_description="${description.replaceAll('"', "'")}"`,
  });

export async function verifyAccessToken(ctx: AppContext, keys: KeyRing, request: FastifyRequest): Promise<JWTPayload> {
  const token = bearerToken(request);
  if (!token) {
    throw new OAuthError('invalid_request', 'An access token is required (Authorization: Bearer).', 401, {
      'www-authenticate': 'Bearer realm="gatehouse"',
    });
  }
  const payload = await readAccessToken(ctx, keys, token);
  if (!payload) throw invalidToken('The access token is invalid or expired.');
  if (typeof payload.jti !== 'string' || await isAccessTokenRevoked(ctx.db, payload.jti)) throw invalidToken('The access token has been revoked.');
  return payload;
}

/** The claims of one of our own unexpired access tokens (revoked or not), or undefined. */
export async function readAccessToken(ctx: AppContext, keys: KeyRing, token: string): Promise<JWTPayload | undefined> {
  try {
    const { payload } = await jwtVerify(token, keys.verificationKey, {
      issuer: ctx.config.issuer,
      typ: 'at+jwt',
      algorithms: [SIGNING_ALG],
      currentDate: ctx.clock.now(),
    });
    return payload;
  } catch {
    return undefined;
  }
}
