/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.6, RFC 8707, DESIGN §4.10).
 * The code must be live, unused, issued to this client for this `redirect_uri`; a code sent with
 * a challenge needs the S256 verifier, and a verifier without a challenge is refused; `resource`,
 * when sent, must equal the one authorized, and the session it was issued in must not have ended.
 * Any exchange attempt by its client spends the code, successful or not; presenting a spent code
 * again revokes the refresh-token family its first exchange created. Codes are kept in memory
 * (authorize/code.ts).
 */
import { eq, sql } from 'drizzle-orm';
import { memberships, people, sessions, type Application } from '../../db/schema.js';
import type { AppContext } from '../../context.js';
import { preparedPerDb } from '../../db/prepared.js';
import { revokeFamilies } from '../revoke-families.js';
import { invalidGrant, invalidRequest, invalidTarget } from '../errors.js';
import { signAccessToken, signIdToken } from '../jwt.js';
import type { KeyRing } from '../keys.js';
import { param, requiredParam, type RawParams } from '../params.js';
import { verifiesChallenge } from '../pkce.js';
import { hasScope } from '../scopes.js';
import { startFamily, type TokenResponse } from './response.js';
import { activeMarkDue, touchMembership } from '../../members/create.js';

/** The membership a code was issued for, with its person (gone if either was deleted since). */
const memberQuery = preparedPerDb((db) =>
  db
    .select({
      membership: { id: memberships.id, status: memberships.status, role: memberships.role, lastActiveAt: memberships.lastActiveAt },
      person: { id: people.id, email: people.email, emailVerified: people.emailVerified, name: people.name },
    })
    .from(memberships)
    .innerJoin(people, eq(people.id, memberships.personId))
    .where(eq(memberships.id, sql.placeholder('id')))
    .prepare(),
);

/** Whether the sign-in session a code was issued in has been ended since (sign-out, revocation). */
const sessionQuery = preparedPerDb((db) =>
  db.select({ revokedAt: sessions.revokedAt }).from(sessions).where(eq(sessions.id, sql.placeholder('id'))).prepare(),
);

export async function authorizationCodeGrant(ctx: AppContext, keys: KeyRing, client: Application, body: RawParams): Promise<TokenResponse> {
  const code = requiredParam(body, 'code');
  const redirectUri = requiredParam(body, 'redirect_uri');
  const verifier = param(body, 'code_verifier');
  const resource = param(body, 'resource');
  const now = ctx.clock.now();
  const row = ctx.codes.find(code, now);
  if (!row || row.applicationId !== client.id) throw invalidGrant('The authorization code is not valid.');
  if (row.spent) {
    if (row.issuedFamilyId) {
      const familyId = row.issuedFamilyId;
      ctx.db.transaction((tx) => revokeFamilies(tx, now, { familyId }, 'code_replayed'));
    }
    throw invalidGrant('The authorization code has already been used.');
  }
  // Spent by this attempt whatever its outcome: a code that failed a check once (wrong verifier,
  // wrong redirect_uri) is not tried again (the OAuth security BCP, RFC 9700). From here to the
  // signing there is no await, and one process serves the data directory, so a concurrent
  // exchange of the same code finds it spent.
  row.spent = true;
  if (row.expiresAt <= now.getTime()) throw invalidGrant('The authorization code has expired.');
  if (row.redirectUri !== redirectUri) throw invalidGrant('redirect_uri does not match the authorization request.');
  if (row.codeChallenge) {
    if (verifier === undefined) throw invalidRequest('code_verifier is required: the authorization request sent a code_challenge.');
    if (!verifiesChallenge(verifier, row.codeChallenge)) throw invalidGrant('code_verifier does not match the code_challenge.');
  } else if (verifier !== undefined) {
    throw invalidGrant('code_verifier was sent but the authorization request had no code_challenge.');
  }
  if (resource !== undefined && resource !== row.resource) throw invalidTarget('resource does not match the authorization request.');
  // Tokens carry the audience the code was issued for; once the application's audience has
  // changed, that value may already belong to another application's backend.
  if (row.resource !== client.audience) throw invalidGrant("The application's audience has changed since this code was issued; start the sign-in again.");

  const found = memberQuery(ctx.db).get({ id: row.membershipId });
  if (!found || found.membership.status !== 'active') throw invalidGrant('The person is no longer an active member of this application.');
  const { membership, person } = found;
  // A sign-out between authorize and exchange ends what the code stood for: ending a session
  // revokes the token families born of it (accounts/session.ts), so none may be born after.
  if (sessionQuery(ctx.db).get({ id: row.sessionId })?.revokedAt !== null) {
    throw invalidGrant('The sign-in session this code was issued in has ended.');
  }

  const touch = activeMarkDue(membership.lastActiveAt, now);
  let refresh: string | undefined;
  if (touch || hasScope(row.scope, 'offline_access')) {
    refresh = ctx.db.transaction((tx) => {
      if (touch) touchMembership(ctx.db, membership.id, now);
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
      row.issuedFamilyId = family.familyId;
      return family.token;
    });
  }

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
