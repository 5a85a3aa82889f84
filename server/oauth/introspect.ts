/**
 * `POST /api/auth/oauth2/introspect` (RFC 7662, spec grants-and-logout.md): an application's back
 * end asks whether a token is active right now.
 * - Form-encoded `token` (required) and `token_type_hint` (only a hint: the token's shape says
 *   what it is). The caller authenticates with its client secret (`client_secret_basic` or
 *   `_post`); public clients cannot, so they are `invalid_client` (401), as are bad secrets,
 *   which count toward the token endpoint's failure limit.
 * - An application sees its own tokens, and those of the applications that list it among their
 *   `resourceServers` (spec claims-and-groups.md "Introspection": an IMAP server behind a webmail),
 *   which get the same answer the owner would; anyone else's, an expired, revoked or unknown one
 *   all answer exactly `{"active": false}` (§2.2), 200.
 * - An access token is active when our signature (a published key), `typ: at+jwt`, issuer and
 *   expiry hold, it was issued to the caller, and nothing has ended it since: revoked through
 *   /revoke, its refresh-token family revoked (its `jti` names the family, jwt.ts `familyJti`),
 *   its session ended, or its membership suspended or removed.
 * - A refresh token is active while it is the live (unrotated, unexpired) token of an unrevoked
 *   family of the caller's, for an active member.
 * - Active answers carry `scope` (absent for a client-credentials token, which has none),
 *   `client_id`, `sub`, `aud`, `iss`, `exp`, `iat`, `token_type` (`Bearer` or `refresh_token`),
 *   and `jti`, `sid` when the token has them; for a person's token also `username` (their
 *   `preferred_username`) and, when the token's scope has `email`, `email` (what mail servers
 *   such as Dovecot log the person in as). Always `Cache-Control: no-store`.
 *
 * Cost (≥ 5,000/s): the signature is checked synchronously with node:crypto on a cached public
 * KeyObject, once per token (access-tokens.ts remembers verified tokens: a back end asks about
 * the same token on every request it serves), and each check is one prepared primary-key read;
 * what can change (revocation, family, session, membership, the person's username and address)
 * is looked up every time. A resource server's call reads the owner application too (its key).
 */
import { eq, sql } from 'drizzle-orm';
import type { FastifyPluginAsync } from 'fastify';
import { memberships, people, refreshTokenFamilies, refreshTokens, sessions } from '../db/schema.js';
import { findApplication } from '../applications/lookup.js';
import { hasScope } from './scopes.js';
import { preparedPerDb } from '../db/prepared.js';
import { sha256 } from '../util/crypto.js';
import { authenticateClient, type OAuthClient } from './client-auth.js';
import { invalidClient } from './errors.js';
import type { FailureLimiter } from './failure-limit.js';
import { signedAccessClaims, type AccessClaims } from './access-tokens.js';
import { familyOfJti } from './jwt.js';
import type { KeyRing } from './keys.js';
import { requiredParam } from './params.js';
import { isAccessTokenRevoked } from './revoked-access-tokens.js';
import { formBody } from './token/route.js';
import { one } from '../db/store.js';

export const INTROSPECTION_PATH = '/api/auth/oauth2/introspect';

const INACTIVE = '{"active":false}';


const statements = preparedPerDb((db) => {
  const p = sql.placeholder;
  return {
    family: db.select({ revokedAt: refreshTokenFamilies.revokedAt }).from(refreshTokenFamilies).where(eq(refreshTokenFamilies.id, p('id'))).prepare(),
    session: db.select({ revokedAt: sessions.revokedAt }).from(sessions).where(eq(sessions.id, p('id'))).prepare(),
    membership: db.select({ status: memberships.status }).from(memberships).where(eq(memberships.id, p('id'))).prepare(),
    person: db.select({ username: people.username, email: people.email }).from(people).where(eq(people.id, p('id'))).prepare(),
    refresh: db
      .select({
        createdAt: refreshTokens.createdAt,
        expiresAt: refreshTokens.expiresAt,
        rotatedAt: refreshTokens.rotatedAt,
        family: {
          applicationId: refreshTokenFamilies.applicationId, personId: refreshTokenFamilies.personId, sessionId: refreshTokenFamilies.sessionId,
          scope: refreshTokenFamilies.scope, resource: refreshTokenFamilies.resource, revokedAt: refreshTokenFamilies.revokedAt,
        },
        membershipStatus: memberships.status,
      })
      .from(refreshTokens)
      .innerJoin(refreshTokenFamilies, eq(refreshTokenFamilies.id, refreshTokens.familyId))
      .leftJoin(memberships, eq(memberships.id, refreshTokenFamilies.membershipId))
      .where(eq(refreshTokens.tokenHash, p('hash')))
      .prepare(),
  };
});

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

export const introspectionRoutes: FastifyPluginAsync<{ keys: KeyRing; limiter: FailureLimiter }> = async (app, { keys, limiter }) => {
  const { ctx } = app;

  /** Whether `caller` may learn about the tokens of application `owner`: its own, or it is one of the owner's resource servers. */
  async function mayIntrospect(caller: OAuthClient, owner: unknown): Promise<boolean> {
    if (owner === caller.id) return true;
    if (typeof owner !== 'string') return false;
    return (await findApplication(ctx.db, owner))?.resourceServers.includes(caller.id) === true;
  }

  /** The claims of one of our access tokens, issued to `client` (or an application it serves), that nothing has ended; else undefined. */
  async function activeAccessToken(token: string, client: OAuthClient): Promise<AccessClaims | undefined> {
    const claims = await signedAccessClaims(keys, token);
    if (!claims || claims.iss !== ctx.config.issuer) return undefined;
    if (typeof claims.exp !== 'number' || claims.exp <= seconds(ctx.clock.now())) return undefined;
    if (!(await mayIntrospect(client, claims.client_id))) return undefined;
    const st = statements(ctx.db);
    const jti = typeof claims.jti === 'string' ? claims.jti : undefined;
    if (jti && await isAccessTokenRevoked(ctx.db, jti, ctx.clock.now())) return undefined;
    // Born of a family: every end of its session or membership revokes the family too
    // (accounts/session.ts `endSessions`), so the family alone answers.
    const familyId = jti ? familyOfJti(jti) : undefined;
    if (familyId) return (await one(st.family, { id: familyId }))?.revokedAt === null ? claims : undefined;
    if (typeof claims.sid === 'string' && (await one(st.session, { id: claims.sid }))?.revokedAt !== null) return undefined;
    const memberId = claims.app_user?.id;
    if (typeof memberId === 'string' && (await one(st.membership, { id: memberId }))?.status !== 'active') return undefined;
    return claims;
  }

  /**
   * `username` and (with the `email` scope) `email` of the person behind a token; nothing for a
   * client-credentials token, which has no person, or a person since deleted.
   */
  async function personFields(personId: string, scope: string | undefined): Promise<Record<string, string>> {
    const person = await one(statements(ctx.db).person, { id: personId });
    if (!person) return {};
    return scope !== undefined && hasScope(scope, 'email') ? { username: person.username, email: person.email } : { username: person.username };
  }

  async function accessAnswer(claims: AccessClaims): Promise<string> {
    const answer: Record<string, unknown> = { active: true };
    if (typeof claims.scope === 'string') answer.scope = claims.scope;
    Object.assign(answer, {
      client_id: claims.client_id, sub: claims.sub, aud: claims.aud, iss: claims.iss, exp: claims.exp, iat: claims.iat,
      token_type: 'Bearer', jti: claims.jti,
    });
    if (typeof claims.sid === 'string') answer.sid = claims.sid;
    if (claims.app_user && typeof claims.sub === 'string') Object.assign(answer, await personFields(claims.sub, answer.scope as string | undefined));
    return JSON.stringify(answer);
  }

  async function refreshAnswer(token: string, client: OAuthClient): Promise<string | undefined> {
    const row = await one(statements(ctx.db).refresh, { hash: sha256(token) });
    const now = ctx.clock.now();
    if (!row || row.family.revokedAt !== null || row.rotatedAt !== null) return undefined;
    if (row.expiresAt.getTime() <= now.getTime() || row.membershipStatus !== 'active') return undefined;
    if (!(await mayIntrospect(client, row.family.applicationId))) return undefined;
    const answer: Record<string, unknown> = {
      active: true, scope: row.family.scope, client_id: row.family.applicationId, sub: row.family.personId, aud: row.family.resource,
      iss: ctx.config.issuer, exp: seconds(row.expiresAt), iat: seconds(row.createdAt), token_type: 'refresh_token',
    };
    if (row.family.sessionId) answer.sid = row.family.sessionId;
    Object.assign(answer, await personFields(row.family.personId, row.family.scope));
    return JSON.stringify(answer);
  }

  app.post(INTROSPECTION_PATH, { schema: { hide: true } }, async (request, reply) => {
    const body = formBody(request);
    const client = await limiter.guard(request, async () => {
      const found = authenticateClient(ctx, request, body);
      const authenticated = found instanceof Promise ? await found : found;
      if (authenticated.clientType !== 'web') throw invalidClient('Introspection needs a confidential client authenticated with its secret.');
      return authenticated;
    });
    const token = requiredParam(body, 'token');
    // The shape decides (a JWT has two dots; refresh tokens are `ghr_…`): the hint cannot mislead.
    const claims = token.includes('.') ? await activeAccessToken(token, client) : undefined;
    const answer = claims ? await accessAnswer(claims) : token.startsWith('ghr_') ? await refreshAnswer(token, client) : undefined;
    return reply
      .header('cache-control', 'no-store')
      .header('pragma', 'no-cache')
      .type('application/json; charset=utf-8')
      .send(answer ?? INACTIVE);
  });
};
