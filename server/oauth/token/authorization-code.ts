/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.6, RFC 8707, DESIGN §4.10).
 * The code must be live, unused, issued to this client for this `redirect_uri`; a code sent with
 * a challenge needs the S256 verifier, and a verifier without a challenge is refused; `resource`,
 * when sent, must equal the one authorized. Using a code marks it spent; presenting a spent code
 * again revokes the refresh-token family its first exchange created.
 */
import { eq } from 'drizzle-orm';
import { authorizationCodes, type Application } from '../../db/schema.js';
import type { AppContext } from '../../context.js';
import { sha256 } from '../../util/crypto.js';
import { revokeFamilies } from '../revoke-families.js';
import { invalidGrant, invalidRequest, invalidTarget } from '../errors.js';
import { signAccessToken, signIdToken } from '../jwt.js';
import type { KeyRing } from '../keys.js';
import { param, requiredParam, type RawParams } from '../params.js';
import { verifiesChallenge } from '../pkce.js';
import { hasScope } from '../scopes.js';
import { startFamily, type TokenResponse } from './response.js';
import { LAST_ACTIVE_RESOLUTION_MS, refreshQueries } from './refresh-queries.js';
import { codeQueries } from '../authorize/code.js';

export async function authorizationCodeGrant(ctx: AppContext, keys: KeyRing, client: Application, body: RawParams): Promise<TokenResponse> {
  const code = requiredParam(body, 'code');
  const redirectUri = requiredParam(body, 'redirect_uri');
  const verifier = param(body, 'code_verifier');
  const resource = param(body, 'resource');
  const now = ctx.clock.now();
  const codeHash = sha256(code);

  const queries = codeQueries(ctx.db);
  const found = queries.exchange.get({ codeHash });
  const row = found?.code;
  if (!row || row.applicationId !== client.id) throw invalidGrant('The authorization code is not valid.');
  if (row.usedAt) {
    ctx.db.transaction((tx) => {
      if (row.issuedFamilyId) revokeFamilies(tx, now, { familyId: row.issuedFamilyId }, 'code_replayed');
    });
    throw invalidGrant('The authorization code has already been used.');
  }
  if (row.expiresAt.getTime() <= now.getTime()) throw invalidGrant('The authorization code has expired.');
  if (row.redirectUri !== redirectUri) throw invalidGrant('redirect_uri does not match the authorization request.');
  if (row.codeChallenge) {
    if (verifier === undefined) throw invalidRequest('code_verifier is required: the authorization request sent a code_challenge.');
    if (!verifiesChallenge(verifier, row.codeChallenge)) throw invalidGrant('code_verifier does not match the code_challenge.');
  } else if (verifier !== undefined) {
    throw invalidGrant('code_verifier was sent but the authorization request had no code_challenge.');
  }
  if (resource !== undefined && resource !== row.resource) throw invalidTarget('resource does not match the authorization request.');

  const membership = found.membership;
  if (!membership || membership.status !== 'active') throw invalidGrant('The person is no longer an active member of this application.');
  const person = found.person;
  if (!person) throw invalidGrant('The person no longer exists.');

  const touch = now.getTime() - membership.lastActiveAt.getTime() >= LAST_ACTIVE_RESOLUTION_MS;
  // The usual OIDC sign-in (no refresh token, membership touched within the hour) writes one
  // row: a single conditional UPDATE is atomic on its own, no transaction needed.
  const alone = !touch && !hasScope(row.scope, 'offline_access');
  const refresh = alone ? spend(queries, codeHash, now) : ctx.db.transaction((tx) => {
    if (spend(queries, codeHash, now) === 'raced') return 'raced';
    if (touch) {
      refreshQueries(ctx.db).touchMember.run({ id: membership.id, nowMs: now.getTime() });
    }
    if (!hasScope(row.scope, 'offline_access')) return undefined;
    const family = startFamily(tx, now, ctx.config.refreshTokenTtl, {
      applicationId: client.id,
      personId: person.id,
      membershipId: membership.id,
      sessionId: row.sessionId,
      scope: row.scope,
      resource: row.resource,
      authTime: row.authTime,
    });
    tx.update(authorizationCodes).set({ issuedFamilyId: family.familyId }).where(eq(authorizationCodes.codeHash, codeHash)).run();
    return family.token;
  });
  if (refresh === 'raced') throw invalidGrant('The authorization code has already been used.');

  const ttl = ctx.config.accessTokenTtl;
  const issuer = ctx.config.issuer;
  const [accessToken, idToken] = await Promise.all([
    signAccessToken(keys, {
      issuer, subject: person.id, audience: row.resource, clientId: client.id, scope: row.scope,
      appUser: membership, sessionId: row.sessionId, now, ttlSeconds: ttl,
    }),
    hasScope(row.scope, 'openid')
      ? signIdToken(keys, {
          issuer, person, clientId: client.id, scope: row.scope, nonce: row.nonce,
          authTime: row.authTime, sessionId: row.sessionId, now, ttlSeconds: ttl,
        })
      : undefined,
  ]);
  const response: TokenResponse = { access_token: accessToken, token_type: 'Bearer', expires_in: ttl, scope: row.scope };
  if (refresh) response.refresh_token = refresh;
  if (idToken) response.id_token = idToken;
  return response;
}

/** Marks the code used; 'raced' when a concurrent exchange spent it first. */
function spend(queries: ReturnType<typeof codeQueries>, codeHash: string, now: Date): 'raced' | undefined {
  const spent = queries.spend.run({ codeHash, nowMs: now.getTime() }) as unknown as { changes: number };
  return spent.changes === 1 ? undefined : 'raced';
}
