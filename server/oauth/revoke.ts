/**
 * `POST /api/auth/oauth2/revoke` (RFC 7009). The client authenticates as at the token endpoint.
 * A refresh token of this client revokes its whole family. Access tokens are stateless JWTs and
 * expire on their own; unknown tokens, access tokens and other clients' tokens all answer 200
 * with nothing revoked (§2.2: the answer must not reveal whether the token was valid).
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

export const revokeRoutes: FastifyPluginAsync<{ limiter: FailureLimiter }> = async (app, { limiter }) => {
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
    if (row && row.applicationId === client.id) {
      const now = ctx.clock.now();
      ctx.db.transaction((tx) => revokeFamilies(tx, now, { familyId: row.familyId }, 'revoked_by_client'));
    }
    return reply.status(200).header('cache-control', 'no-store').send();
  });
};
