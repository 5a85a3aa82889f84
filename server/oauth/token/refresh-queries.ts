/**
 * The refresh grant's statements, the hottest path of the server: prepared once per database
 * handle (db/prepared.ts), in SQL on better-sqlite3 itself rather than through drizzle (issue 27:
 * drizzle's parameter filling and row mapping — nested objects, a Date per timestamp — cost about
 * as much as running the statements). Timestamps stay epoch milliseconds, as stored.
 *
 * The table and column names are the schema's (db/schema.ts); a column added there that the
 * refresh grant needs is added to `token` below.
 */
import type { Db } from '../../db/client.js';
import { preparedPerDb } from '../../db/prepared.js';
import { touchMembership } from '../../members/create.js';

/** The presented token, its family and the family's membership (null when the member is gone). */
export interface PresentedToken {
  rotatedAt: number | null;
  expiresAt: number;
  familyId: string;
  applicationId: string;
  personId: string;
  membershipId: string | null;
  sessionId: string | null;
  scope: string;
  resource: string;
  revokedAt: number | null;
  /** The family's `amr`, as stored (JSON). */
  amr: string;
  memberId: string | null;
  memberStatus: string | null;
  memberRole: string | null;
  memberLastActiveAt: number | null;
}

export interface Rotation {
  hash: string;
  successorHash: string;
  familyId: string;
  nowMs: number;
  expiresAt: number;
  /** Membership to mark active, when its `lastActiveAt` is stale. */
  touchMembershipId: string | undefined;
}

function build(db: Db) {
  const client = db.$client;
  const token = client.prepare<[string], PresentedToken>(`
    SELECT t.rotated_at AS rotatedAt, t.expires_at AS expiresAt,
           f.id AS familyId, f.application_id AS applicationId, f.person_id AS personId,
           f.membership_id AS membershipId, f.session_id AS sessionId, f.scope, f.resource,
           f.revoked_at AS revokedAt, f.amr,
           m.id AS memberId, m.status AS memberStatus, m.role AS memberRole, m.last_active_at AS memberLastActiveAt
    FROM refresh_tokens t
    JOIN refresh_token_families f ON f.id = t.family_id
    LEFT JOIN memberships m ON m.id = f.membership_id
    WHERE t.token_hash = ?`);
  // Only a token not rotated yet is rotated: the guard against two concurrent uses.
  const markRotated = client.prepare<[number, string]>('UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL');
  const insert = client.prepare<[string, string, number, number]>(
    'INSERT INTO refresh_tokens (token_hash, family_id, created_at, expires_at) VALUES (?, ?, ?, ?)',
  );
  /**
   * Marks the presented token rotated and stores its successor, in one native transaction built
   * once. False when someone rotated it first.
   */
  const rotate = client.transaction((r: Rotation): boolean => {
    if (markRotated.run(r.nowMs, r.hash).changes !== 1) return false;
    insert.run(r.successorHash, r.familyId, r.nowMs, r.expiresAt);
    if (r.touchMembershipId) touchMembership(db, r.touchMembershipId, new Date(r.nowMs));
    return true;
  });
  return {
    /** The presented token with its family and membership, by the token's SHA-256. */
    token: (hash: string): PresentedToken | undefined => token.get(hash),
    rotate: (r: Rotation): boolean => rotate(r),
  };
}

export const refreshQueries = preparedPerDb(build);
