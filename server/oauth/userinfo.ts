/**
 * `GET|POST /api/auth/oauth2/userinfo` (OIDC Core §5.3): the person behind a valid access token
 * with the `openid` scope; `name` with `profile`, `email`/`email_verified` with `email`.
 * Cost (issue 27, ≤ 0.1 ms of CPU): one synchronous signature check (access-tokens.ts) and two
 * prepared primary-key reads (the revoked list, the person).
 */
import { eq, sql } from 'drizzle-orm';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { people } from '../db/schema.js';
import { preparedPerDb } from '../db/prepared.js';
import { invalidToken, verifyAccessToken } from './bearer.js';
import { OAuthError } from './errors.js';
import { personClaims } from './jwt.js';
import type { KeyRing } from './keys.js';
import { hasScope } from './scopes.js';

/** What userinfo reads of the person: the claims' sources only. */
const personById = preparedPerDb((db) =>
  db
    .select({ id: people.id, email: people.email, emailVerified: people.emailVerified, name: people.name })
    .from(people)
    .where(eq(people.id, sql.placeholder('id')))
    .prepare(),
);

export const userinfoRoutes: FastifyPluginAsync<{ keys: KeyRing }> = async (app, { keys }) => {
  const { ctx } = app;
  const handler = (request: FastifyRequest) => {
    const claims = verifyAccessToken(ctx, keys, request);
    const scope = typeof claims.scope === 'string' ? claims.scope : '';
    if (!hasScope(scope, 'openid')) {
      throw new OAuthError('insufficient_scope', 'The access token lacks the openid scope.', 403, {
        'www-authenticate': 'Bearer realm="gatehouse", error="insufficient_scope", scope="openid"',
      });
    }
    const person = personById(ctx.db).get({ id: String(claims.sub) });
    if (!person) throw invalidToken('The person behind this token no longer exists.');
    return { sub: person.id, ...personClaims(person, scope) };
  };
  for (const method of ['GET', 'POST'] as const) {
    app.route({
      method,
      url: '/api/auth/oauth2/userinfo',
      schema: { hide: true },
      handler: async (request, reply) => reply.header('cache-control', 'no-store').send(handler(request)),
    });
  }
};
