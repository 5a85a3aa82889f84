/**
 * `GET|POST /api/auth/oauth2/userinfo` (OIDC Core §5.3): the person behind a valid access token
 * with the `openid` scope: the claims an ID token of the same scope carries (claims/compose.ts:
 * standard ones by scope, `groups`, the application's custom claims), as they are now, and never
 * cut to the ID token's size (all groups).
 * Cost (issue 27, ≤ 0.1 ms of CPU): one synchronous signature check (access-tokens.ts) and
 * prepared primary-key reads (the revoked list, the person, the application's claim settings);
 * the membership when the application has custom claims, the person's groups (one indexed read)
 * when the scope or a custom claim needs them. A `GET` of the exact path is answered before
 * Fastify (http/early-answers.ts) by the same function as the routes.
 */
import { eq, sql } from 'drizzle-orm';
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.js';
import { people } from '../db/schema.js';
import { preparedPerDb } from '../db/prepared.js';
import type { JsonAnswer } from '../http/early-answers.js';
import { JSON_SECURITY_HEADERS } from '../http/security-headers.js';
import { invalidToken, verifyAccessToken } from './bearer.js';
import { oauthClientById } from './client-auth.js';
import { CORS_HEADERS } from './cors.js';
import { failureAnswer, OAuthError, sendJsonAnswer } from './errors.js';
import type { KeyRing } from './keys.js';
import type { OAuthCall } from './params.js';
import { hasScope } from './scopes.js';
import { one } from '../db/store.js';
import { personClaims } from './claims/compose.js';
import { claimQueries } from './claims/queries.js';
import { claimGroups, memberSubject } from './claims/subject.js';

export const USERINFO_PATH = '/api/auth/oauth2/userinfo';

/** What userinfo reads of the person: the claims' sources only. */
const personById = preparedPerDb((db) =>
  db
    .select({
      id: people.id, email: people.email, emailVerified: people.emailVerified, name: people.name, username: people.username,
      givenName: people.givenName, familyName: people.familyName, updatedAt: people.updatedAt,
    })
    .from(people)
    .where(eq(people.id, sql.placeholder('id')))
    .prepare(),
);

const NO_STORE = { 'cache-control': 'no-store' };

/** The userinfo endpoint as a function of the call, for both transports. */
export function userinfoEndpoint(ctx: AppContext, keys: KeyRing, log: FastifyBaseLogger) {
  return async (call: Pick<OAuthCall, 'headers'>): Promise<JsonAnswer> => {
    try {
      const claims = await verifyAccessToken(ctx, keys, call);
      const scope = typeof claims.scope === 'string' ? claims.scope : '';
      if (!hasScope(scope, 'openid')) {
        throw new OAuthError('insufficient_scope', 'The access token lacks the openid scope.', 403, {
          'www-authenticate': 'Bearer realm="gatehouse", error="insufficient_scope", scope="openid"',
        });
      }
      const person = await one(personById(ctx.db), { id: String(claims.sub) });
      if (!person) throw invalidToken('The person behind this token no longer exists.');
      const found = oauthClientById(ctx.db, String(claims.client_id));
      const client = found instanceof Promise ? await found : found;
      if (!client) throw invalidToken('The application this token was issued to no longer exists.');
      // Custom claims read the membership as it is now; without one (removed since) they are left out.
      const member = client.customClaims.length && typeof claims.app_user?.id === 'string' ? await claimQueries(ctx.db).member(claims.app_user.id) : undefined;
      const settings = member ? client : { ...client, customClaims: [] };
      const groups = await claimGroups(ctx, settings, person.id, scope);
      const subject = memberSubject(member?.role ?? '', member?.profile ?? '{}');
      const body = { sub: person.id, ...personClaims(settings, { ...person, updatedAt: person.updatedAt.getTime() }, scope, subject, groups) };
      return { status: 200, headers: NO_STORE, body: JSON.stringify(body) };
    } catch (error) {
      return failureAnswer(error, log);
    }
  };
}

export const userinfoRoutes: FastifyPluginAsync<{ keys: KeyRing }> = async (app, { keys }) => {
  const answer = userinfoEndpoint(app.ctx, keys, app.log);
  app.earlyAnswers.addGet(USERINFO_PATH, { ...JSON_SECURITY_HEADERS, ...CORS_HEADERS }, answer);
  for (const method of ['GET', 'POST'] as const) {
    app.route({ method, url: USERINFO_PATH, schema: { hide: true }, handler: async (request, reply) => sendJsonAnswer(reply, await answer(request)) });
  }
};
