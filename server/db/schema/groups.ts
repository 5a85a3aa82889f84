/**
 * Directory groups (spec claims-and-groups.md, "Groups"): who a person is in the team. Not the
 * SSO groups of applications.ts (the panel's "shared sign-in"). Flat; at most 1,000 groups, 200 per person.
 */
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, timestamp } from './columns.js';
import { people } from './people.js';

export const groups = sqliteTable(
  'groups',
  {
    id: text('id').primaryKey(), // `^[a-z0-9][a-z0-9._-]{0,63}$`, the value in the `groups` claim
    name: text('name').notNull(),
    description: text('description'),
    /** The LDAP directory's `gidNumber` (spec ldap.md): from the sequence people's uidNumber comes from. */
    gidNumber: integer('gid_number'),
    /** The directory source this group is mirrored from, and its DN there; null for local groups (read-only when set). */
    sourceId: text('source_id'),
    sourceDn: text('source_dn'),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [index('groups_created_idx').on(t.createdAt, t.id), uniqueIndex('groups_gid_number_uq').on(t.gidNumber)],
);

/**
 * Who is in which group. Goes with the person (cascade: at most 200 rows) and with the group: a
 * group's delete leaves its rows to the purge plan (a group may hold everyone), so every read
 * starts from `groups` (groups/queries.ts joins it).
 */
export const groupMembers = sqliteTable(
  'group_members',
  {
    groupId: text('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    addedAt: timestamp('added_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.personId] }), index('group_members_person_idx').on(t.personId, t.groupId)],
);

export type Group = typeof groups.$inferSelect;
export type GroupMember = typeof groupMembers.$inferSelect;
