/**
 * `grant_type=refresh_token` (RFC 6749 §6, OAuth 2.1 §4.3.1, DESIGN §4.10).
 * - The token must belong to this client, to a live family, and be unexpired.
 * - Rotation on every use: the presented token is marked rotated and a successor issued.
 * - Presenting a rotated token again is reuse: the whole family is revoked, and the application
 *   hears `security.refresh_token_reused` (webhook + audit), in one transaction.
 * - The membership is re-checked: only an active member gets new tokens.
 * - The family keeps the `amr`/`acr` of the session it came from; an application that requires MFA
 *   refuses a password-only family.
 * - `scope` may narrow this access token; `resource` must equal the family's, and the family's
 *   must still be the application's audience.
 * Cost: one joined read, one conditional update, one insert, one signature (no ID token here);
 * the membership's `lastActiveAt` is touched at most hourly.
 */
import { refreshTokenFamilies, type Application } from '../../db/schema.js';
import type { AppContext } from '../../context.js';
import { recordAudit } from '../../audit/record.js';
import { sha256 } from '../../util/crypto.js';
import { recordEvent } from '../../webhooks/outbox.js';
import { revokeFamilies } from '../revoke-families.js';
import { invalidGrant, invalidScope, invalidTarget } from '../errors.js';
import { familyJti, signAccessToken } from '../jwt.js';
import type { KeyRing } from '../keys.js';
import { param, requiredParam, type RawParams } from '../params.js';
import { parseScope } from '../scopes.js';
import { isMultiFactor, mfaRequired } from '../../accounts/second-factor/factors.js';
import { newRefreshToken, type TokenResponse } from './response.js';
import { refreshQueries } from './refresh-queries.js';
import { activeMarkDue } from '../../members/create.js';
import { one, transaction } from '../../db/store.js';

export async function refreshTokenGrant(ctx: AppContext, keys: KeyRing, client: Application, body: RawParams): Promise<TokenResponse> {
  const presented = requiredParam(body, 'refresh_token');
  const scopeParam = param(body, 'scope');
  const resource = param(body, 'resource');
  const now = ctx.clock.now();
  const tokenHash = sha256(presented);

  const queries = refreshQueries(ctx.db);
  const row = await queries.token(tokenHash);
  if (!row || row.family.applicationId !== client.id) throw invalidGrant('The refresh token is not valid.');
  const family = row.family;
  if (family.revokedAt) throw invalidGrant('The refresh token has been revoked.');
  if (row.rotatedAt) {
    await reportReuse(ctx, now, family);
    throw invalidGrant('The refresh token has already been used; its whole family is now revoked.');
  }
  if (row.expiresAt.getTime() <= now.getTime()) throw invalidGrant('The refresh token has expired.');
  const membership = row.membership;
  if (!membership || membership.status !== 'active') throw invalidGrant('The person is no longer an active member of this application.');
  if (resource !== undefined && resource !== family.resource) throw invalidTarget('resource does not match the original grant.');
  // The family's tokens carry the audience it was granted for; after the application's audience
  // changed, that value may belong to another application (audiences are unique, not reserved).
  if (family.resource !== client.audience) throw invalidGrant("The application's audience has changed since this grant; sign in again.");
  // Refresh keeps the family's `amr`/`acr` (those of the session it came from): an application
  // that has come to require MFA since stops a password-only family instead of raising it.
  if (mfaRequired(client) && !isMultiFactor(family.amr)) {
    throw invalidGrant('This application now requires a second factor; sign in again.');
  }
  let scope = family.scope;
  if (scopeParam !== undefined) {
    const granted = family.scope.split(' ');
    const asked = parseScope(scopeParam);
    if (asked.some((s) => !granted.includes(s))) throw invalidScope('A refresh may not widen the granted scope.');
    scope = asked.join(' ');
  }

  const successor = newRefreshToken();
  const rotated = await queries.rotateToken({
    hash: tokenHash,
    successorHash: sha256(successor),
    familyId: family.id,
    now,
    expiresAt: row.expiresAt,
    touchMembershipId: activeMarkDue(membership.lastActiveAt, now) ? membership.id : undefined,
  });
  // Two concurrent uses of one token: the loser is a reuse like any other.
  if (!rotated) {
    await reportReuse(ctx, now, family);
    throw invalidGrant('The refresh token has already been used; its whole family is now revoked.');
  }

  const ttl = ctx.config.accessTokenTtl;
  const accessToken = await signAccessToken(keys, {
    issuer: ctx.config.issuer, subject: family.personId, audience: family.resource, clientId: client.id, scope,
    appUser: membership, sessionId: family.sessionId, now, ttlSeconds: ttl, jti: familyJti(family.id),
  });
  return { access_token: accessToken, token_type: 'Bearer', expires_in: ttl, scope, refresh_token: successor };
}

/** Revokes the family of a reused token and tells the application, once. */
async function reportReuse(ctx: AppContext, now: Date, family: typeof refreshTokenFamilies.$inferSelect): Promise<void> {
  const revoked = await transaction(ctx.db, async (tx) => {
    if (await revokeFamilies(tx, now, { familyId: family.id }, 'refresh_token_reused') === 0) return false;
    const data = { familyId: family.id, userId: family.personId, membershipId: family.membershipId, clientId: family.applicationId };
    await recordEvent(tx, now, family.applicationId, 'security.refresh_token_reused', data);
    await recordAudit(tx, now, {
      actor: 'system',
      action: 'security.refresh_token_reused',
      applicationId: family.applicationId,
      target: family.id,
      details: { userId: family.personId, sessionId: family.sessionId },
    });
    return true;
  });
  if (revoked) ctx.wakeWebhooks();
}
