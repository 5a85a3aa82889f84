/**
 * `GET|POST /api/auth/oauth2/userinfo` (OIDC Core §5.3): the person behind a valid access token
 * with the `openid` scope; `name` with `profile`, `email`/`email_verified` with `email`.
 * Cost (issue 27, ≤ 0.1 ms of CPU): one synchronous signature check (access-tokens.ts) and two
 * prepared primary-key reads (the revoked list, the person); a `GET` of the exact path is answered
 * before Fastify (http/early-answers.ts) by the same function as the routes.
 */
import { eq, sql } from 'drizzle-orm';
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.js';
import { people } from '../db/schema.js';
import { preparedPerDb } from '../db/prepared.js';
import type { JsonAnswer } from '../http/early-answers.js';
import { JSON_SECURITY_HEADERS } from '../http/security-headers.js';
import { invalidToken, verifyAccessToken } from './bearer.js';
import { CORS_HEADERS } from './cors.js';
import { failureAnswer, OAuthError, sendJsonAnswer } from './errors.js';
import { personClaims } from './jwt.js';
import type { KeyRing } from './keys.js';
import type { OAuthCall } from './params.js';
import { hasScope } from './scopes.js';

export const USERINFO_PATH = '/api/auth/oauth2/userinfo';

/** What userinfo reads of the person: the claims' sources only. */
const personById = preparedPerDb((db) =>
  db
    .select({ id: people.id, email: people.email, emailVerified: people.emailVerified, name: people.name })
    .from(people)
    .where(eq(people.id, sql.placeholder('id')))
    .prepare(),
);

const NO_STORE = { 'cache-control': 'no-store' };

/** The userinfo endpoint as a function of the call, for both transports. */
export function userinfoEndpoint(ctx: AppContext, keys: KeyRing, log: FastifyBaseLogger) {
  return (call: Pick<OAuthCall, 'headers'>): JsonAnswer => {
    try {
      const claims = verifyAccessToken(ctx, keys, call);
      const scope = typeof claims.scope === 'string' ? claims.scope : '';
      if (!hasScope(scope, 'openid')) {
        throw new OAuthError('insufficient_scope', 'The access token lacks the openid scope.', 403, {
          'www-authenticate': 'Bearer realm="gatehouse", error="insufficient_scope", scope="openid"',
        });
      }
      const person = personById(ctx.db).get({ id: String(claims.sub) });
      if (!person) throw invalidToken('The person behind this token no longer exists.');
      return { status: 200, headers: NO_STORE, body: JSON.stringify({ sub: person.id, ...personClaims(person, scope) }) };
    } catch (error) {
      return failureAnswer(error, log);
    }
  };
}

export const userinfoRoutes: FastifyPluginAsync<{ keys: KeyRing }> = async (app, { keys }) => {
  const answer = userinfoEndpoint(app.ctx, keys, app.log);
  app.earlyAnswers.addGet(USERINFO_PATH, { ...JSON_SECURITY_HEADERS, ...CORS_HEADERS }, answer);
  for (const method of ['GET', 'POST'] as const) {
    app.route({ method, url: USERINFO_PATH, schema: { hide: true }, handler: async (request, reply) => sendJsonAnswer(reply, answer(request)) });
  }
};
