/**
 * The reads claims need on the token path and userinfo, prepared once per database handle
 * (db/prepared.ts). As with the refresh grant's statements (token/refresh-queries.ts), SQLite's
 * are SQL on better-sqlite3 itself, run synchronously; PostgreSQL's the same SQL as named prepared
 * statements on postgres.js.
 * - A person's group ids, sorted: `group_members` by its (person_id, group_id) index, which holds
 *   both columns, so the read never touches the table and needs no sort (test/helpers/query-plan.ts);
 *   on PostgreSQL sorted in code, byte order whatever the database's collation.
 * - Which of the groups custom claims name the person is in (no `groups` scope: nothing else is
 *   needed), one probe of that index per named group.
 * - A membership's role and profile, by its key (userinfo's custom claims).
 * - A member and their person for the admin API's claims preview (drizzle: not a hot path).
 * Table and column names are the schema's (db/schema.ts).
 */
import type { Sql } from 'postgres';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/client.js';
import { preparedPerDb } from '../../db/prepared.js';
import { engineOf, one, sqliteNow } from '../../db/store.js';
import { and, eq } from 'drizzle-orm';
import { memberships, people } from '../../db/schema.js';

export const GROUP_IDS_OF_PERSON_SQL = 'SELECT group_id FROM group_members WHERE person_id = ? ORDER BY group_id';
/** Which of some groups (a JSON array of ids) the person is in: one probe of the same index per group. */
export const GROUP_IDS_AMONG_SQL = 'SELECT group_id FROM group_members WHERE person_id = ? AND group_id IN (SELECT value FROM json_each(?))';
/** The same for a few groups, listed: one statement per list length up to AMONG_LISTED. */
export const groupIdsAmongListed = (n: number) =>
  `SELECT group_id FROM group_members WHERE person_id = ? AND group_id IN (${Array.from({ length: n }, () => '?').join(', ')})`;
const AMONG_LISTED = 16;
export const GROUP_IDS_AMONG_PG = 'SELECT group_id FROM group_members WHERE person_id = $1 AND group_id = ANY($2::text[])';
export const MEMBER_CLAIMS_SQL = 'SELECT role, profile FROM memberships WHERE id = ?';

/** A membership's role and its profile as stored (JSON text). */
export interface MemberClaimsRow {
  role: string;
  profile: string;
}

interface ClaimQueries {
  groupIds(personId: string): string[] | Promise<string[]>;
  /** Which of `ids` the person is in (in no particular order). */
  groupIdsAmong(personId: string, ids: readonly string[]): string[] | Promise<string[]>;
  member(membershipId: string): MemberClaimsRow | undefined | Promise<MemberClaimsRow | undefined>;
}

const pg = (text: string) => text.replace('?', '$1');

function build(db: Db): ClaimQueries {
  if (engineOf(db) === 'postgres') {
    const pool = db.$client as unknown as Sql;
    return {
      // Sorted here, in code-unit order as SQLite's index gives them: the database's collation may differ.
      groupIds: async (personId) => (await pool.unsafe<{ group_id: string }[]>(pg(GROUP_IDS_OF_PERSON_SQL), [personId], { prepare: true })).map((row) => row.group_id).sort(),
      groupIdsAmong: async (personId, ids) =>
        (await pool.unsafe<{ group_id: string }[]>(GROUP_IDS_AMONG_PG, [personId, ids as string[]], { prepare: true })).map((row) => row.group_id),
      member: async (membershipId) => {
        const row = (await pool.unsafe<{ role: string; profile: unknown }[]>(pg(MEMBER_CLAIMS_SQL), [membershipId], { prepare: true }))[0];
        return row && { role: row.role, profile: JSON.stringify(row.profile) };
      },
    };
  }
  const groupIds = db.$client.prepare<[string], string>(GROUP_IDS_OF_PERSON_SQL).pluck();
  const amongJson = db.$client.prepare<[string, string], string>(GROUP_IDS_AMONG_SQL).pluck();
  // A statement per list length up to AMONG_LISTED (`IN (?, ?, …)`), cheaper than json_each's virtual table.
  const amongListed = new Map<number, Statement<unknown[], string>>();
  const groupIdsAmong = (personId: string, ids: readonly string[]): string[] => {
    if (ids.length > AMONG_LISTED) return amongJson.all(personId, JSON.stringify(ids));
    let statement = amongListed.get(ids.length);
    if (!statement) {
      statement = db.$client.prepare<unknown[], string>(groupIdsAmongListed(ids.length)).pluck();
      amongListed.set(ids.length, statement);
    }
    return statement.all(personId, ...ids);
  };
  const member = db.$client.prepare<[string], MemberClaimsRow>(MEMBER_CLAIMS_SQL);
  return {
    groupIds: (personId) => sqliteNow(() => groupIds.all(personId)),
    groupIdsAmong: (personId, ids) => sqliteNow(() => groupIdsAmong(personId, ids)),
    member: (membershipId) => sqliteNow(() => member.get(membershipId)),
  };
}

export const claimQueries = preparedPerDb(build);

/**
 * A member of an application with their person's claim sources (the admin API's claims preview;
 * not a hot path, so through drizzle): by the membership's key, within the application.
 */
export async function previewSubject(db: Db, applicationId: string, membershipId: string) {
  return await one(db
    .select({
      role: memberships.role, profile: memberships.profile,
      person: {
        id: people.id, email: people.email, emailVerified: people.emailVerified, name: people.name, username: people.username,
        givenName: people.givenName, familyName: people.familyName, updatedAt: people.updatedAt,
      },
    })
    .from(memberships)
    .innerJoin(people, eq(people.id, memberships.personId))
    .where(and(eq(memberships.id, membershipId), eq(memberships.applicationId, applicationId))));
}
