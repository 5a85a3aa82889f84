/**
 * Verifying our own access tokens for the userinfo endpoint (RFC 6750 §3, RFC 9068 §4):
 * signed with a published key in that key's algorithm (RS256, ES256 or EdDSA), `typ: at+jwt`, our
 * issuer, unexpired (access-tokens.ts, `readAccessToken`: the one such check), and not
 * revoked (its `jti` is not on the revoked list, oauth/revoked-access-tokens.ts). Failures are
 * `invalid_token` with a `WWW-Authenticate: Bearer` challenge; a request without a token gets the
 * challenge alone.
 */
import type { AppContext } from '../context.js';
import { bearerToken } from '../http/bearer-token.js';
import { readAccessToken, type AccessClaims } from './access-tokens.js';
import { OAuthError } from './errors.js';
import type { OAuthCall } from './params.js';
import type { KeyRing } from './keys.js';
import { isAccessTokenRevoked } from './revoked-access-tokens.js';

export const invalidToken = (description: string) =>
  new OAuthError('invalid_token', description, 401, {
    'www-authenticate': `Bearer realm="gatehouse", error="invalid_token", error_description="${description.replaceAll('"', "'")}"`,
  });

export async function verifyAccessToken(ctx: AppContext, keys: KeyRing, request: Pick<OAuthCall, 'headers'>): Promise<AccessClaims> {
  const token = bearerToken(request);
  if (!token) {
    throw new OAuthError('invalid_request', 'An access token is required (Authorization: Bearer).', 401, {
      'www-authenticate': 'Bearer realm="gatehouse"',
    });
  }
  const claims = await readAccessToken(ctx, keys, token);
  if (!claims) throw invalidToken('The access token is invalid or expired.');
  if (typeof claims.jti !== 'string' || await isAccessTokenRevoked(ctx.db, claims.jti, ctx.clock.now())) throw invalidToken('The access token has been revoked.');
  return claims;
}
