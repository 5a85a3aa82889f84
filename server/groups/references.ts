/**
 * Which application settings name a directory group, so a group still named somewhere is not
 * deleted from under it (409 `group_in_use`, naming each application and field; decision 0101).
 * Refusing keeps what an administrator configured intact: a claim mapping or a proxy rule that
 * silently lost its group would change who gets a role or who gets in.
 *
 * ADDING A FIELD IS ONE ENTRY in GROUP_REFERENCES: the application column that holds the setting,
 * the field's name as the admin API spells it, and a function from the column's value to the
 * group ids it names: the group rule (`allowedGroups`) and the claims settings (`groupsFilter`,
 * `customClaims`) are registered below.
 *
 * Applications are few (tens to hundreds): the check reads their settings in pages of PAGE_SIZE
 * along `applications_created_idx`, only when a group is deleted.
 */
import { asc, sql } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/client.js';
import { applications, type CustomClaim } from '../db/schema.js';
import { groupsNamedByClaims } from '../applications/claim-settings.js';
import { many } from '../db/store.js';

export interface GroupReference {
  /** The setting's name on the wire (`allowedGroups`, `groupsFilter`, `customClaims`). */
  field: string;
  /** The `applications` column that holds it. */
  column: SQLiteColumn;
  /** The group ids the stored value names (the value as drizzle reads it; null when unset). */
  groupsNamed(value: unknown): readonly string[];
}

/** Every application setting that names directory groups: one entry per field (see above). */
export const GROUP_REFERENCES: GroupReference[] = [
  // The `groups` claim's filter (spec claims-and-groups.md, "Claims").
  { field: 'groupsFilter', column: applications.groupsFilter, groupsNamed: (value) => (value as string[] | null) ?? [] },
  // Custom claims' `inGroup` and `groupMap` sources.
  { field: 'customClaims', column: applications.customClaims, groupsNamed: (value) => groupsNamedByClaims((value as CustomClaim[] | null) ?? []) },
  // The group rule (applications/group-rule.ts): only members of one of these groups use the application.
  { field: 'allowedGroups', column: applications.allowedGroups, groupsNamed: (value) => (value as string[] | null) ?? [] },
];

export interface GroupUse {
  applicationId: string;
  applicationName: string;
  field: string;
}

const PAGE_SIZE = 200;

/** Where `groupId` is named, by application (creation order) then field (list order). */
export async function groupReferences(db: Db, groupId: string, references: readonly GroupReference[] = GROUP_REFERENCES): Promise<GroupUse[]> {
  if (references.length === 0) return [];
  const uses: GroupUse[] = [];
  const columns = Object.fromEntries(references.map((ref, i) => [`r${i}`, ref.column]));
  let after: { t: number; id: string } | undefined;
  for (;;) {
    const rows = await many(db
      .select({ id: applications.id, name: applications.name, createdAt: applications.createdAt, ...columns })
      .from(applications)
      .where(after ? sql`(${applications.createdAt}, ${applications.id}) > (${after.t}, ${after.id})` : undefined)
      .orderBy(asc(applications.createdAt), asc(applications.id))
      .limit(PAGE_SIZE)) as Array<{ id: string; name: string; createdAt: Date } & Record<string, unknown>>;
    for (const row of rows) {
      references.forEach((ref, i) => {
        if (ref.groupsNamed(row[`r${i}`] ?? null).includes(groupId)) uses.push({ applicationId: row.id, applicationName: row.name, field: ref.field });
      });
    }
    if (rows.length < PAGE_SIZE) return uses;
    const last = rows[rows.length - 1]!;
    after = { t: last.createdAt.getTime(), id: last.id };
  }
}
