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
 * - The access token's custom claims (`inAccessToken`) are computed again now (claims/compose.ts):
 *   a refresh sees the member's current role, profile and groups.
 * Cost: one joined read, one conditional update, one insert, one signature (no ID token here);
 * the membership's `lastActiveAt` is touched at most hourly; the person's groups are read (one
 * indexed read) only when an access-token claim names groups, and then only those groups.
 */
import type { AuthMethod } from '../../db/schema.js';
import { accessTokenTtlOf, type OAuthClient } from '../client-auth.js';
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
import { refreshQueries, type PresentedToken } from './refresh-queries.js';
import { activeMarkDue } from '../../members/create.js';
import { transaction } from '../../db/store.js';
import { accessTokenClaims } from '../claims/compose.js';
import { claimGroups, memberSubject } from '../claims/subject.js';

export async function refreshTokenGrant(ctx: AppContext, keys: KeyRing, client: OAuthClient, body: RawParams): Promise<TokenResponse> {
  const presented = requiredParam(body, 'refresh_token');
  const scopeParam = param(body, 'scope');
  const resource = param(body, 'resource');
  const now = ctx.clock.now();
  const nowMs = now.getTime();
  const tokenHash = sha256(presented);

  const queries = refreshQueries(ctx.db);
  const row = await queries.token(tokenHash);
  if (!row || row.applicationId !== client.id) throw invalidGrant('The refresh token is not valid.');
  if (row.revokedAt !== null) throw invalidGrant('The refresh token has been revoked.');
  if (row.rotatedAt !== null) {
    await reportReuse(ctx, now, row);
    throw invalidGrant('The refresh token has already been used; its whole family is now revoked.');
  }
  if (row.expiresAt <= nowMs) throw invalidGrant('The refresh token has expired.');
  if (row.memberId === null || row.memberStatus !== 'active') throw invalidGrant('The person is no longer an active member of this application.');
  if (resource !== undefined && resource !== row.resource) throw invalidTarget('resource does not match the original grant.');
  // The family's tokens carry the audience it was granted for; after the application's audience
  // changed, that value may belong to another application (audiences are unique, not reserved).
  if (row.resource !== client.audience) throw invalidGrant("The application's audience has changed since this grant; sign in again.");
  // Refresh keeps the family's `amr`/`acr` (those of the session it came from): an application
  // that has come to require MFA since stops a password-only family instead of raising it.
  if (mfaRequired(client) && !isMultiFactor(JSON.parse(row.amr) as AuthMethod[])) {
    throw invalidGrant('This application now requires a second factor; sign in again.');
  }
  let scope = row.scope;
  if (scopeParam !== undefined) {
    const granted = row.scope.split(' ');
    const asked = parseScope(scopeParam, client.unknownScopes);
    if (asked.some((s) => !granted.includes(s))) throw invalidScope('A refresh may not widen the granted scope.');
    scope = asked.join(' ');
  }

  const successor = newRefreshToken();
  const rotated = await queries.rotate({
    hash: tokenHash,
    successorHash: sha256(successor),
    familyId: row.familyId,
    nowMs,
    expiresAt: row.expiresAt,
    touchMembershipId: activeMarkDue(new Date(row.memberLastActiveAt!), now) ? row.memberId : undefined,
  });
  // Two concurrent uses of one token: the loser is a reuse like any other.
  if (!rotated) {
    await reportReuse(ctx, now, row);
    throw invalidGrant('The refresh token has already been used; its whole family is now revoked.');
  }

  let ttl = accessTokenTtlOf(client, ctx.config.accessTokenTtl);
  let claims = client.customClaims.length ? refreshedClaims(ctx, client, row) : undefined;
  if (claims instanceof Promise) claims = await claims;
  // What plugins add to a token about to be issued (plugin-api/hooks.ts); nothing at all without one.
  if (ctx.hooks.tokenIssuing.length) ({ claims, ttlSeconds: ttl } = ctx.hooks.issuing({ client, grantType: 'refresh_token', personId: row.personId, scope, ttlSeconds: ttl }, claims));
  const accessToken = await signAccessToken(keys, {
    alg: client.signingAlg, issuer: ctx.config.issuer, subject: row.personId, audience: row.resource, clientId: client.id, scope,
    appUser: { id: row.memberId, status: row.memberStatus, role: row.memberRole! }, sessionId: row.sessionId, now, ttlSeconds: ttl,
    jti: familyJti(row.familyId), claims,
  });
  return { access_token: accessToken, token_type: 'Bearer', expires_in: ttl, scope, refresh_token: successor };
}

/** The access token's custom claims for the family's member, as they are now (synchronous on SQLite, as the grant). */
function refreshedClaims(ctx: AppContext, client: OAuthClient, row: PresentedToken): Record<string, unknown> | undefined | Promise<Record<string, unknown> | undefined> {
  const subject = memberSubject(row.memberRole!, row.memberProfile ?? '{}');
  const groups = claimGroups(ctx, client, row.personId, undefined, true);
  return groups instanceof Promise ? groups.then((ids) => accessTokenClaims(client, subject, ids)) : accessTokenClaims(client, subject, groups);
}

/** Revokes the family of a reused token and tells the application, once. */
async function reportReuse(ctx: AppContext, now: Date, family: PresentedToken): Promise<void> {
  const revoked = await transaction(ctx.db, async (tx) => {
    if (await revokeFamilies(tx, now, { familyId: family.familyId }, 'refresh_token_reused') === 0) return false;
    const data = { familyId: family.familyId, userId: family.personId, membershipId: family.membershipId, clientId: family.applicationId };
    await recordEvent(tx, now, family.applicationId, 'security.refresh_token_reused', data);
    await recordAudit(tx, now, {
      actor: 'system',
      action: 'security.refresh_token_reused',
      applicationId: family.applicationId,
      target: family.familyId,
      details: { userId: family.personId, sessionId: family.sessionId },
    });
    return true;
    // The revocation is a conditional update (only a live family): of concurrent reports, on
    // PostgreSQL from any instance, exactly one revokes and tells; no serialisable retries needed.
  }, { isolation: 'read committed' });
  if (revoked) ctx.wakeWebhooks();
}
