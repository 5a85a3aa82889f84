/**
 * Authorization codes (RFC 6749 §4.1.2, DESIGN §4.10): random 256-bit, stored hashed, single
 * use, valid 60 s, bound to client, redirect URI, PKCE challenge, resource, nonce and session.
 * Issuing and exchanging a code are on every sign-in, so their statements are prepared once
 * (db/prepared.ts).
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import { authorizationCodes, memberships, people } from '../../db/schema.js';
import { preparedPerDb } from '../../db/prepared.js';
import type { AppContext } from '../../context.js';
import { randomToken, sha256 } from '../../util/crypto.js';

export const CODE_TTL_MS = 60_000;

export interface NewCode {
  applicationId: string;
  personId: string;
  membershipId: string;
  sessionId: string;
  redirectUri: string;
  scope: string;
  resource: string;
  codeChallenge: string | null;
  nonce: string | null;
  authTime: Date;
}

const p = (name: string) => sql.placeholder(name);

export const codeQueries = preparedPerDb((db) => ({
  insert: db
    .insert(authorizationCodes)
    .values({
      codeHash: p('codeHash'), applicationId: p('applicationId'), personId: p('personId'), membershipId: p('membershipId'),
      sessionId: p('sessionId'), redirectUri: p('redirectUri'), scope: p('scope'), resource: p('resource'),
      codeChallenge: p('codeChallenge'), nonce: p('nonce'), authTime: p('authTime'), createdAt: p('createdAt'), expiresAt: p('expiresAt'),
    })
    .prepare(),
  /** The code with the membership and person it was issued for (either may be gone since). */
  exchange: db
    .select({
      code: authorizationCodes,
      membership: { id: memberships.id, status: memberships.status, role: memberships.role, lastActiveAt: memberships.lastActiveAt },
      person: { id: people.id, email: people.email, emailVerified: people.emailVerified, name: people.name },
    })
    .from(authorizationCodes)
    .leftJoin(memberships, eq(memberships.id, authorizationCodes.membershipId))
    .leftJoin(people, eq(people.id, authorizationCodes.personId))
    .where(eq(authorizationCodes.codeHash, p('codeHash')))
    .prepare(),
  /** Marks the code used unless it already is: the single-use guard against concurrent exchanges. */
  spend: db
    .update(authorizationCodes)
    .set({ usedAt: sql`${p('nowMs')}` }) // raw SQL: pass milliseconds
    .where(and(eq(authorizationCodes.codeHash, p('codeHash')), isNull(authorizationCodes.usedAt)))
    .prepare(),
}));

/** Stores a new code and returns it (the only time it exists in the clear). */
export function issueCode(ctx: AppContext, input: NewCode): string {
  const code = randomToken();
  const now = ctx.clock.now();
  codeQueries(ctx.db).insert.run({ ...input, codeHash: sha256(code), createdAt: now, expiresAt: new Date(now.getTime() + CODE_TTL_MS) });
  return code;
}
