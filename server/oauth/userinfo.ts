/**
 * `GET|POST /api/auth/oauth2/userinfo` (OIDC Core §5.3): the person behind a valid access token
 * with the `openid` scope; `name` with `profile`, `email`/`email_verified` with `email`.
 */
import { eq } from 'drizzle-orm';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { people } from '../db/schema.js';
import { invalidToken, verifyAccessToken } from './bearer.js';
import { OAuthError } from './errors.js';
import { personClaims } from './jwt.js';
import type { KeyRing } from './keys.js';
import { hasScope } from './scopes.js';
import { one } from '../db/store.js';

export const userinfoRoutes: FastifyPluginAsync<{ keys: KeyRing }> = async (app, { keys }) => {
  const { ctx } = app;
  const handler = async (request: FastifyRequest) => {
    const claims = await verifyAccessToken(ctx, keys, request);
    const scope = typeof claims.scope === 'string' ? claims.scope : '';
    if (!hasScope(scope, 'openid')) {
      throw new OAuthError('insufficient_scope', 'The access token lacks the openid scope.', 403, {
        'www-authenticate': 'Bearer realm="gatehouse", error="insufficient_scope", scope="openid"',
      });
    }
    const person = await one(ctx.db.select().from(people).where(eq(people.id, String(claims.sub))));
    if (!person) throw invalidToken('The person behind this token no longer exists.');
    return { sub: person.id, ...personClaims(person, scope) };
  };
  for (const method of ['GET', 'POST'] as const) {
    app.route({
      method,
      url: '/api/auth/oauth2/userinfo',
      schema: { hide: true },
      handler: async (request, reply) => reply.header('cache-control', 'no-store').send(await handler(request)),
    });
  }
};
