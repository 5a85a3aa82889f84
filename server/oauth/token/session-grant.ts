/**
 * The tokens of a grant a person gave in a browser session: an authorization code (authorize)
 * or an approved device authorization (the /device page). Both grants end here, so the same
 * rules hold for both (DESIGN §4.10):
 * - the grant's audience must still be the application's (it may since belong to another);
 * - the membership must still exist and be active;
 * - the session it was given in must not have ended (ending a session revokes the families born
 *   of it, accounts/session.ts, so none may be born after);
 * - the application is noted as holding tokens of the session (back-channel logout);
 * - a refresh-token family starts with `offline_access`, an ID token comes with `openid`; both
 *   carry the session's `amr` (and so `acr`) as it was when the grant was exchanged;
 * - the claims about the person (claims/compose.ts) are computed now, from the same read plus the
 *   person's groups when the scope or a custom claim needs them (one indexed read).
 * `hooks.claim(tx)` lets the caller spend its grant in the same transaction as the family is
 * born (the device code's exactly-once issue); it returns false when the grant was already
 * spent. `hooks.onFamily(id)` hears the new family's id at once, before any signing is awaited
 * (a replayed code must find it, authorization-code.ts).
 */
import { eq, sql } from 'drizzle-orm';
import { memberships, people, sessions, type AuthMethod } from '../../db/schema.js';
import type { Db, Tx } from '../../db/client.js';
import { accessTokenTtlOf, type OAuthClient } from '../client-auth.js';
import type { AppContext } from '../../context.js';
import { preparedPerDb } from '../../db/prepared.js';
import { activeMarkDue, touchMembership } from '../../members/create.js';
import { recordSessionClient } from '../backchannel/session-clients.js';
import { invalidGrant } from '../errors.js';
import { familyJti, signAccessToken, signIdToken } from '../jwt.js';
import type { KeyRing } from '../keys.js';
import { hasScope } from '../scopes.js';
import { startFamily, type TokenResponse } from './response.js';
import { accessTokenClaims, idTokenClaims } from '../claims/compose.js';
import { claimGroups, memberSubject } from '../claims/subject.js';
import type { ClaimPerson } from '../claims/standard.js';
import { engineOf, one, sqliteNow, transaction } from '../../db/store.js';

/** The membership a grant was given for, its person, and the grant's session. */
interface GrantRow {
  memberId: string;
  status: string;
  role: string;
  lastActiveAt: number;
  personId: string;
  email: string;
  emailVerified: number;
  name: string | null;
  username: string;
  givenName: string | null;
  familyName: string | null;
  personUpdatedAt: number;
  /** The membership's profile, as stored (JSON). */
  profile: string;
  /** Null when the session is gone. */
  sessionId: string | null;
  sessionRevokedAt: number | null;
  /** The session's `amr`, as stored (JSON). */
  sessionAmr: string | null;
}

/**
 * One read for what the grant is checked against in the store (no row: the membership or its
 * person was deleted since): on SQLite in SQL on better-sqlite3, as the refresh grant's statements
 * (refresh-queries.ts), because the exchange is a hot path and each read costs a lock round trip;
 * on PostgreSQL the same join through drizzle, its values brought to SQLite's shape.
 */
const grantQuery = preparedPerDb((db): ((membershipId: string, sessionId: string) => GrantRow | undefined | Promise<GrantRow | undefined>) => {
  if (engineOf(db) === 'postgres') return pgGrantQuery(db);
  const statement = db.$client.prepare<[{ membershipId: string; sessionId: string }], GrantRow>(`
    SELECT m.id AS memberId, m.status, m.role, m.last_active_at AS lastActiveAt, m.profile,
           p.id AS personId, p.email, p.email_verified AS emailVerified, p.name, p.username,
           p.given_name AS givenName, p.family_name AS familyName, p.updated_at AS personUpdatedAt,
           s.id AS sessionId, s.revoked_at AS sessionRevokedAt, s.amr AS sessionAmr
    FROM memberships m
    JOIN people p ON p.id = m.person_id
    LEFT JOIN sessions s ON s.id = @sessionId
    WHERE m.id = @membershipId`);
  return (membershipId: string, sessionId: string): GrantRow | undefined => statement.get({ membershipId, sessionId });
});

function pgGrantQuery(db: Db): (membershipId: string, sessionId: string) => Promise<GrantRow | undefined> {
  const m = memberships;
  const statement = db
    .select({
      memberId: m.id, status: m.status, role: m.role, lastActiveAt: m.lastActiveAt, profile: m.profile,
      personId: people.id, email: people.email, emailVerified: people.emailVerified, name: people.name, username: people.username,
      givenName: people.givenName, familyName: people.familyName, personUpdatedAt: people.updatedAt,
      sessionId: sessions.id, sessionRevokedAt: sessions.revokedAt, sessionAmr: sessions.amr,
    })
    .from(m)
    .innerJoin(people, eq(people.id, m.personId))
    .leftJoin(sessions, eq(sessions.id, sql.placeholder('sessionId')))
    .where(eq(m.id, sql.placeholder('membershipId')))
    .prepare();
  return async (membershipId, sessionId) => {
    const row = await one(statement, { membershipId, sessionId });
    return (
      row && {
        ...row,
        lastActiveAt: row.lastActiveAt.getTime(),
        personUpdatedAt: row.personUpdatedAt.getTime(),
        profile: JSON.stringify(row.profile),
        emailVerified: row.emailVerified ? 1 : 0,
        sessionRevokedAt: row.sessionRevokedAt?.getTime() ?? null,
        sessionAmr: row.sessionAmr === null ? null : JSON.stringify(row.sessionAmr),
      }
    );
  };
}

export interface SessionGrant {
  membershipId: string;
  sessionId: string;
  scope: string;
  resource: string;
  nonce: string | null;
  authTime: Date;
  /** How errors name the grant: "this code was issued", "this device sign-in was approved". */
  given: string;
  /** The grant type it is exchanged with (what `tokenIssuing` listeners see). */
  grantType: string;
}

export async function issueSessionTokens(
  ctx: AppContext,
  keys: KeyRing,
  client: OAuthClient,
  grant: SessionGrant,
  hooks: { claim?: (tx: Tx) => Promise<boolean>; onFamily?: (familyId: string) => void | Promise<void> } = {},
): Promise<TokenResponse> {
  const { claim, onFamily } = hooks;
  const now = ctx.clock.now();
  // Tokens carry the audience the grant was given for; once the application's audience has
  // changed, that value may already belong to another application's backend.
  if (grant.resource !== client.audience) throw invalidGrant(`The application's audience has changed since ${grant.given}; start the sign-in again.`);
  const found = await sqliteNow(() => grantQuery(ctx.db)(grant.membershipId, grant.sessionId));
  if (!found || found.status !== 'active') throw invalidGrant('The person is no longer an active member of this application.');
  if (found.sessionId === null || found.sessionRevokedAt !== null) throw invalidGrant(`The sign-in session ${grant.given} in has ended.`);
  const membership = { id: found.memberId, status: found.status, role: found.role };
  const person: ClaimPerson = {
    id: found.personId, email: found.email, emailVerified: found.emailVerified === 1, name: found.name, username: found.username,
    givenName: found.givenName, familyName: found.familyName, updatedAt: found.personUpdatedAt,
  };
  // How the session signed in (spec second-factor.md, "Tokens"): the ID token's `amr`/`acr`, kept by the family.
  const amr = JSON.parse(found.sessionAmr ?? '[]') as AuthMethod[];

  // This application now holds tokens of the session: it hears a back-channel logout when the session ends.
  await recordSessionClient(ctx.db, grant.sessionId, client.id, now);
  const touch = activeMarkDue(new Date(found.lastActiveAt), now);
  const offline = hasScope(grant.scope, 'offline_access');
  let family: { familyId: string; token: string } | undefined;
  if (touch || offline || claim) {
    family = await transaction(ctx.db, async (tx) => {
      if (claim && !(await claim(tx))) throw invalidGrant('This grant has already been used.');
      if (touch) await touchMembership(ctx.db, membership.id, now);
      if (!offline) return undefined;
      const started = await startFamily(tx, now, ctx.config.refreshTokenTtl, {
        applicationId: client.id, personId: person.id, membershipId: membership.id, sessionId: grant.sessionId,
        scope: grant.scope, resource: grant.resource, authTime: grant.authTime, amr,
      });
      // Noted in the family's transaction (PostgreSQL: the code's row), so a replay finds it once it commits.
      const noted = onFamily?.(started.familyId);
      if (noted) await noted;
      return started;
    });
  }

  let ttl = accessTokenTtlOf(client, ctx.config.accessTokenTtl);
  const issuer = ctx.config.issuer;
  const openid = hasScope(grant.scope, 'openid');
  const subject = memberSubject(found.role, found.profile);
  const groups = await claimGroups(ctx, client, person.id, grant.scope, !openid);
  let claims = accessTokenClaims(client, subject, groups);
  // What plugins add to a token about to be issued (plugin-api/hooks.ts); nothing at all without one.
  if (ctx.hooks.tokenIssuing.length) ({ claims, ttlSeconds: ttl } = ctx.hooks.issuing({ client, grantType: grant.grantType, personId: person.id, scope: grant.scope, ttlSeconds: ttl }, claims));
  const [accessToken, idToken] = await Promise.all([
    signAccessToken(keys, {
      alg: client.signingAlg, issuer, subject: person.id, audience: grant.resource, clientId: client.id, scope: grant.scope,
      appUser: membership, sessionId: grant.sessionId, now, ttlSeconds: ttl, jti: family ? familyJti(family.familyId) : undefined,
      claims,
    }),
    openid
      ? signIdToken(keys, {
          alg: client.signingAlg, issuer, subject: person.id, clientId: client.id, nonce: grant.nonce,
          claims: idTokenClaims(client, person, grant.scope, subject, groups, { issuer, nonce: grant.nonce, sessionId: grant.sessionId }),
          authTime: grant.authTime, amr, sessionId: grant.sessionId, now, ttlSeconds: ttl,
        })
      : undefined,
  ]);
  const response: TokenResponse = { access_token: accessToken, token_type: 'Bearer', expires_in: ttl, scope: grant.scope };
  if (family) response.refresh_token = family.token;
  if (idToken) response.id_token = idToken;
  return response;
}
