/**
 * Daily activity counters (issue 25): sign-ins, failed sign-ins and distinct active people per
 * UTC day, per application and for the whole installation (`applicationId` ''). They are counted
 * where the events happen, in the caller's transaction when there is one, with statements
 * prepared once per database handle (db/prepared.ts): each is an index-backed upsert of one
 * small row, a few microseconds beside the sign-in's own work. The panel's charts read these
 * rows, never the audit log.
 *
 * - A sign-in is an authentication: password, external provider (accounts/sign-in.ts
 *   `signInPerson`). It counts for the application when the person is an active member of it.
 * - A failed sign-in is a refused password (wrong, or the address is locked).
 * - An active person is one whose membership was marked active (members/create.ts
 *   `touchMembership`: a sign-in, a code exchange, a refresh at most hourly), counted once a day.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { activityDaily, activityPeople, memberships } from '../db/schema.js';
import { exec, many, one, transaction } from '../db/store.js';

/** The whole installation's rows. */
export const INSTALLATION = '';

const DAY_MS = 24 * 3600 * 1000;
/** Days since 1970-01-01 in UTC. */
export const dayOf = (at: Date): number => Math.floor(at.getTime() / DAY_MS);

type Counter = 'signIns' | 'failedSignIns' | 'activePeople';

/** The statements on a handle: `.prepare()` on a transaction (rare paths) or the database (prepared once, below). */
function build(db: Tx) {
  const p = sql.placeholder;
  const t = activityDaily;
  const bump = (column: Counter) =>
    db
      .insert(t)
      .values({ applicationId: p('app'), day: p('day'), [column]: 1 })
      .onConflictDoUpdate({ target: [t.applicationId, t.day], set: { [column]: sql`${t[column]} + 1` } })
      .prepare();
  // The membership's person, marked active today for its application and for the installation;
  // a row that is already there is ignored (changes = 0), so each person counts once a day.
  const markForApp = db
    .insert(activityPeople)
    .select(
      db
        .select({ day: sql`${p('day')}`.as('day'), applicationId: memberships.applicationId, personId: memberships.personId })
        .from(memberships)
        .where(eq(memberships.id, p('membershipId'))),
    )
    .onConflictDoNothing()
    .returning({ applicationId: activityPeople.applicationId })
    .prepare();
  const markForInstallation = db
    .insert(activityPeople)
    .select(
      db
        .select({ day: sql`${p('day')}`.as('day'), applicationId: sql`${INSTALLATION}`.as('application_id'), personId: memberships.personId })
        .from(memberships)
        .where(eq(memberships.id, p('membershipId'))),
    )
    .onConflictDoNothing()
    .prepare();
  return {
    signIns: bump('signIns'),
    failedSignIns: bump('failedSignIns'),
    activePeople: bump('activePeople'),
    markForApp,
    markForInstallation,
  };
}
const statements = preparedPerDb(build);

/** The installation's row and the application's in one transaction (joining the caller's). */
async function count(db: Db, column: Counter, day: number, applicationId: string | undefined): Promise<void> {
  const s = statements(db);
  // Each bump is one atomic upsert (`+ 1` under the row lock on PostgreSQL): no read to race.
  await transaction(db, async () => {
    await exec(s[column], { app: INSTALLATION, day });
    if (applicationId) await exec(s[column], { app: applicationId, day });
  }, { isolation: 'read committed' });
}

/** A person authenticated; `applicationId` when it was for an application they are an active member of. */
export async function countSignIn(db: Db, at: Date, applicationId: string | undefined): Promise<void> {
  await count(db, 'signIns', dayOf(at), applicationId);
}

/** A password sign-in was refused (wrong password or locked address). */
export async function countFailedSignIn(db: Db, at: Date, applicationId: string | undefined): Promise<void> {
  await count(db, 'failedSignIns', dayOf(at), applicationId);
}

/** The membership's person was active at `at`: counted once a day per application and for the installation. */
export async function countActive(db: Db, at: Date, membershipId: string): Promise<void> {
  const s = statements(db);
  const day = dayOf(at);
  const marked = await one(s.markForApp, { day, membershipId });
  if (marked) await exec(s.activePeople, { app: marked.applicationId, day });
  if ((await exec(s.markForInstallation, { day, membershipId })) > 0) await exec(s.activePeople, { app: INSTALLATION, day });
}

export interface ActivityDay {
  /** `YYYY-MM-DD`, UTC. */
  date: string;
  signIns: number;
  failedSignIns: number;
  activePeople: number;
}

/** The last `days` days up to `now`'s day, oldest first, days without activity as zeros. One range read of the primary key. */
export async function activitySeries(db: Db, applicationId: string, now: Date, days: number): Promise<ActivityDay[]> {
  const last = dayOf(now);
  const first = last - days + 1;
  const rows = await many(db
    .select()
    .from(activityDaily)
    .where(and(eq(activityDaily.applicationId, applicationId), sql`${activityDaily.day} BETWEEN ${first} AND ${last}`)));
  const byDay = new Map(rows.map((r) => [r.day, r]));
  return Array.from({ length: days }, (_, i) => {
    const day = first + i;
    const r = byDay.get(day);
    return {
      date: new Date(day * DAY_MS).toISOString().slice(0, 10),
      signIns: r?.signIns ?? 0,
      failedSignIns: r?.failedSignIns ?? 0,
      activePeople: r?.activePeople ?? 0,
    };
  });
}
