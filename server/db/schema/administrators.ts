/**
 * Administrators (spec administrators-and-people.md; server/administrators/).
 */
import { index, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { createdAt, timestamp } from './columns.js';
import type { AdminRole } from './types.js';
import { people } from './people.js';
import { applications } from './applications.js';

/**
 * People who administer this installation, with their role. One row per person; an
 * `app_manager`'s applications are in `administrator_applications`. Goes with the person.
 */
export const administrators = sqliteTable(
  'administrators',
  {
    personId: text('person_id')
      .primaryKey()
      .references(() => people.id, { onDelete: 'cascade' }),
    role: text('role').$type<AdminRole>().notNull(),
    /** Who granted the role (an audit actor: `admin`, `person:<id>`, `setup`). */
    grantedBy: text('granted_by').notNull(),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  // Counting owners (the last one cannot go) and listing by role.
  (t) => [index('administrators_role_idx').on(t.role, t.personId)],
);

/** The applications an `app_manager` manages. */
export const administratorApplications = sqliteTable(
  'administrator_applications',
  {
    personId: text('person_id')
      .notNull()
      .references(() => administrators.personId, { onDelete: 'cascade' }),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.personId, t.applicationId] }), index('administrator_applications_app_idx').on(t.applicationId)],
);

export type Administrator = typeof administrators.$inferSelect;
