/**
 * `grant_type=client_credentials` (RFC 6749 §4.4, RFC 9068, spec grants-and-logout.md): a
 * machine (an application's back end) asks for an access token for itself.
 * - Confidential (`web`) clients only, authenticated as for the code grant; the grant type must
 *   be among the application's `grantTypes` (route.ts checks, `unauthorized_client`).
 * - `resource`, when sent, must be the application's audience (`invalid_target`); it is `aud`.
 * - `scope`: Gatehouse's scopes all speak of a person (`openid`, `profile`, `email`) or of refresh
 *   tokens (`offline_access`), so none applies to a machine: any is `invalid_scope`, and the token
 *   carries no `scope` claim (RFC 9068 §2.2.3). Under `unknownScopes: ignore` unknown names are
 *   dropped, so a request asking only for those gets a token without a scope.
 * - The token: a JWT in the application's signing algorithm, `typ: at+jwt`, `sub` = `client_id` =
 *   `azp` = the application id, no `app_user`, no `sid`; no refresh token and no ID token (§4.4.3).
 * - Each issued token is audited (`token.client_credentials`, its `jti` as target), in one
 *   prepared insert; the token endpoint's failure limit applies as to every grant.
 */
import { sql } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import { auditLog } from '../../db/schema.js';
import { accessTokenTtlOf, type OAuthClient } from '../client-auth.js';
import { preparedPerDb } from '../../db/prepared.js';
import { newId } from '../../util/ids.js';
import { randomBase64url } from '../../util/crypto.js';
import { invalidScope, invalidTarget, OAuthError } from '../errors.js';
import { signAccessToken } from '../jwt.js';
import type { KeyRing } from '../keys.js';
import { param, type RawParams } from '../params.js';
import { parseScope, unknownScopeNames } from '../scopes.js';
import type { TokenResponse } from './response.js';
import { exec } from '../../db/store.js';

/** The audit insert, prepared once: a busy machine client asks often. */
const auditInsert = preparedPerDb((db) =>
  db
    .insert(auditLog)
    .values({
      id: sql.placeholder('id'), at: sql.placeholder('at'), actor: sql.placeholder('actor'), action: 'token.client_credentials',
      applicationId: sql.placeholder('applicationId'), target: sql.placeholder('jti'), details: sql.placeholder('details'),
    })
    .prepare(),
);

export async function clientCredentialsGrant(ctx: AppContext, keys: KeyRing, client: OAuthClient, body: RawParams): Promise<TokenResponse> {
  if (client.clientType !== 'web') throw new OAuthError('unauthorized_client', 'Client credentials need a confidential (web) client.');
  if (Array.isArray(body.resource)) throw invalidTarget('Only one resource may be requested.');
  const resource = param(body, 'resource');
  if (resource !== undefined && resource !== client.audience) throw invalidTarget("The requested resource is not this application's audience.");
  const scope = param(body, 'scope');
  if (scope !== undefined && !(client.unknownScopes === 'ignore' && unknownScopeNames(scope).join(' ') === scope.split(' ').filter(Boolean).join(' '))) {
    parseScope(scope, client.unknownScopes); // unknown names are named as such (under reject)
    throw invalidScope('Client credentials act for the application itself: openid, profile, email and offline_access need a person.');
  }

  const now = ctx.clock.now();
  let ttl = accessTokenTtlOf(client, ctx.config.accessTokenTtl);
  let claims: Record<string, unknown> | undefined;
  // What plugins add to a token about to be issued (plugin-api/hooks.ts); nothing at all without one.
  if (ctx.hooks.tokenIssuing.length) ({ claims, ttlSeconds: ttl } = ctx.hooks.issuing({ client, grantType: 'client_credentials', personId: undefined, scope: '', ttlSeconds: ttl }, undefined));
  const jti = randomBase64url(16);
  const accessToken = await signAccessToken(keys, {
    alg: client.signingAlg, issuer: ctx.config.issuer, subject: client.id, audience: client.audience, clientId: client.id, scope: null,
    appUser: null, sessionId: null, now, ttlSeconds: ttl, jti, claims,
  });
  await exec(auditInsert(ctx.db), {
    id: newId('aud'), at: now, actor: `client:${client.id}`, applicationId: client.id, jti, details: { audience: client.audience },
  });
  return { access_token: accessToken, token_type: 'Bearer', expires_in: ttl };
}
