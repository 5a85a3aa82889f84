/**
 * `POST /api/auth/oauth2/revoke` (RFC 7009). The client authenticates as at the token endpoint.
 * A refresh token of this client revokes its whole family. An unexpired access token of this
 * client is put on the revoked list until it expires (§2.2.1; oauth/revoked-access-tokens.ts), so
 * userinfo refuses it from then on. Unknown tokens and other clients' tokens answer 200 with
 * nothing revoked (§2.2: the answer must not reveal whether the token was valid).
 */
import { eq } from 'drizzle-orm';
import type { FastifyPluginAsync } from 'fastify';
import { refreshTokenFamilies, refreshTokens } from '../db/schema.js';
import { sha256 } from '../util/crypto.js';
import { authenticateClient } from './client-auth.js';
import { requiredParam } from './params.js';
import { revokeFamilies } from './revoke-families.js';
import { formBody } from './token/route.js';
import type { FailureLimiter } from './failure-limit.js';
import { readAccessToken } from './access-tokens.js';
import type { KeyRing } from './keys.js';
import { recordRevokedAccessToken } from './revoked-access-tokens.js';

export const revokeRoutes: FastifyPluginAsync<{ limiter: FailureLimiter; keys: KeyRing }> = async (app, { limiter, keys }) => {
  const { ctx } = app;
  app.post('/api/auth/oauth2/revoke', { schema: { hide: true } }, async (request, reply) => {
    const body = formBody(request);
    const client = await limiter.guard(request, async () => authenticateClient(ctx, request, body));
    const token = requiredParam(body, 'token');
    // token_type_hint only speeds up a search (§2.1); there is a single lookup here, so it is ignored.
    const row = ctx.db
      .select({ familyId: refreshTokens.familyId, applicationId: refreshTokenFamilies.applicationId })
      .from(refreshTokens)
      .innerJoin(refreshTokenFamilies, eq(refreshTokenFamilies.id, refreshTokens.familyId))
      .where(eq(refreshTokens.tokenHash, sha256(token)))
      .get();
    const now = ctx.clock.now();
    if (row) {
      if (row.applicationId === client.id) ctx.db.transaction((tx) => revokeFamilies(tx, now, { familyId: row.familyId }, 'revoked_by_client'));
    } else {
      const claims = readAccessToken(ctx, keys, token);
      if (claims && claims.client_id === client.id && typeof claims.jti === 'string' && typeof claims.exp === 'number') {
        recordRevokedAccessToken(ctx.db, claims.jti, new Date(claims.exp * 1000), now);
      }
    }
    return reply.status(200).header('cache-control', 'no-store').send();
  });
};
