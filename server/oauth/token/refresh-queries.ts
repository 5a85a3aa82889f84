/**
 * The refresh grant's statements, the hottest path of the server: prepared once per database
 * handle (db/prepared.ts), in SQL on better-sqlite3 itself rather than through drizzle (issue 27:
 * drizzle's parameter filling and row mapping — nested objects, a Date per timestamp — cost about
 * as much as running the statements). Timestamps stay epoch milliseconds, as stored.
 *
 * The table and column names are the schema's (db/schema.ts); a column added there that the
 * refresh grant needs is added to `token` below (and to `TOKEN_PG`).
 *
 * PostgreSQL (several instances on one database): the same read, and the rotation as ONE
 * statement — the conditional update of the presented token and the insert of its successor in
 * one CTE — so of any number of concurrent uses, on any instances, exactly one finds the token
 * unrotated (a concurrent UPDATE of the row waits for the first and re-checks `rotated_at IS
 * NULL`); the others get no row and report reuse (refresh-token.ts). Never read-then-write.
 */
import type { Sql } from 'postgres';
import type { Db } from '../../db/client.js';
import { preparedPerDb } from '../../db/prepared.js';
import { touchMembership } from '../../members/create.js';
import { engineOf, sqliteNow, transaction } from '../../db/store.js';

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
  /** The membership's profile, as stored (JSON); read by custom claims. */
  memberProfile: string | null;
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

interface RefreshQueries {
  /** The presented token with its family and membership, by the token's SHA-256. */
  token(hash: string): PresentedToken | undefined | Promise<PresentedToken | undefined>;
  /** Rotates the presented token to its successor; false when someone rotated it first. */
  rotate(r: Rotation): boolean | Promise<boolean>;
}

function build(db: Db): RefreshQueries {
  if (engineOf(db) === 'postgres') return buildPostgres(db);
  const client = db.$client;
  const token = client.prepare<[string], PresentedToken>(`
    SELECT t.rotated_at AS rotatedAt, t.expires_at AS expiresAt,
           f.id AS familyId, f.application_id AS applicationId, f.person_id AS personId,
           f.membership_id AS membershipId, f.session_id AS sessionId, f.scope, f.resource,
           f.revoked_at AS revokedAt, f.amr,
           m.id AS memberId, m.status AS memberStatus, m.role AS memberRole, m.last_active_at AS memberLastActiveAt,
           m.profile AS memberProfile
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
    return true;
  });
  // Both run at once unless another async context has a transaction open (db/store.ts): the
  // native transaction would otherwise join it as a savepoint, and the read see its rows.
  return {
    /** The presented token with its family and membership, by the token's SHA-256. */
    token: (hash: string): PresentedToken | undefined | Promise<PresentedToken | undefined> => sqliteNow(() => token.get(hash)),
    /** The membership's hourly activity mark (rare) joins the rotation in a store transaction. */
    rotate: (r: Rotation): boolean | Promise<boolean> =>
      r.touchMembershipId === undefined
        ? sqliteNow(() => rotate(r))
        : transaction(db, async () => rotate(r) && (await touchMembership(db, r.touchMembershipId!, new Date(r.nowMs)), true)),
  };
}

/** Epoch milliseconds of a timestamptz, as a number (int8 is parsed as one, db/postgres.ts). */
const ms = (column: string) => `(extract(epoch FROM ${column}) * 1000)::int8`;

const TOKEN_PG = `
  SELECT ${ms('t.rotated_at')} AS "rotatedAt", ${ms('t.expires_at')} AS "expiresAt",
         f.id AS "familyId", f.application_id AS "applicationId", f.person_id AS "personId",
         f.membership_id AS "membershipId", f.session_id AS "sessionId", f.scope, f.resource,
         ${ms('f.revoked_at')} AS "revokedAt", f.amr::text AS amr,
         m.id AS "memberId", m.status AS "memberStatus", m.role AS "memberRole", ${ms('m.last_active_at')} AS "memberLastActiveAt",
         m.profile::text AS "memberProfile"
  FROM refresh_tokens t
  JOIN refresh_token_families f ON f.id = t.family_id
  LEFT JOIN memberships m ON m.id = f.membership_id
  WHERE t.token_hash = $1`;

/** The rotation in one statement: the successor is inserted only if this statement rotated the token. */
const ROTATE_PG = `
  WITH rotated AS (
    UPDATE refresh_tokens SET rotated_at = $1 WHERE token_hash = $2 AND rotated_at IS NULL RETURNING family_id
  )
  INSERT INTO refresh_tokens (token_hash, family_id, created_at, expires_at)
  SELECT $3, family_id, $1, $4 FROM rotated
  RETURNING 1`;

/** The same statements on postgres.js itself (named prepared statements; no store transaction involved). */
function buildPostgres(db: Db): RefreshQueries {
  const pool = db.$client as unknown as Sql;
  return {
    token: async (hash) => (await pool.unsafe<PresentedToken[]>(TOKEN_PG, [hash], { prepare: true }))[0],
    rotate: async (r) => {
      const rows = await pool.unsafe(ROTATE_PG, [r.nowMs, r.hash, r.successorHash, r.expiresAt], { prepare: true });
      if (rows.length !== 1) return false;
      // The hourly activity mark needs no atomicity with the rotation: a lost mark is taken next time.
      if (r.touchMembershipId !== undefined) await touchMembership(db, r.touchMembershipId, new Date(r.nowMs));
      return true;
    },
  };
}

export const refreshQueries = preparedPerDb(build);
