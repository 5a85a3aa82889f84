/**
 * Seeding people, memberships and refresh-token families straight into the store, for tests of
 * the admin API that need members without walking the sign-up flow.
 */
import { eq } from 'drizzle-orm';
import { people, refreshTokenFamilies } from '../../server/db/schema.js';
import { createMembership } from '../../server/members/create.js';
import { newId } from '../../server/util/ids.js';
import { usernameForNewPerson } from '../../server/people/username.js';
import type { TestApp } from './app.js';
import { one } from '../../server/db/store.js';

export async function addPerson(t: TestApp, email: string, name: string | null = null) {
  const now = t.clock.now();
  return await one(t.db
    .insert(people)
    .values({ id: newId('usr'), email: email.toLowerCase(), username: await usernameForNewPerson(t.db, email), name, emailVerified: true, createdAt: now, updatedAt: now })
    .returning());
}

/** Adds a person (created when new) to an application; returns the membership row. */
export async function addMember(t: TestApp, applicationId: string, email: string, options: { name?: string; role?: 'member' | 'admin' } = {}) {
  const person =
    (await one(t.db.select().from(people).where(eq(people.email, email.toLowerCase())))) ?? (await addPerson(t, email, options.name ?? null));
  return { person, membership: await createMembership(t.db, t.clock.now(), applicationId, person, options.role) };
}

/** A live refresh-token family, as a code exchange would create. */
export async function addRefreshFamily(t: TestApp, applicationId: string, personId: string) {
  const now = t.clock.now();
  return await one(t.db
    .insert(refreshTokenFamilies)
    .values({
      id: newId('fam'),
      applicationId,
      personId,
      scope: 'openid offline_access',
      resource: 'https://notes.example.com/api',
      authTime: now,
      createdAt: now,
      expiresAt: new Date(now.getTime() + 30 * 24 * 3600 * 1000),
    })
    .returning());
}

export async function familyRevocation(t: TestApp, familyId: string) {
  const row = await one(t.db.select().from(refreshTokenFamilies).where(eq(refreshTokenFamilies.id, familyId)));
  return { revokedAt: row?.revokedAt ?? null, reason: row?.revokedReason ?? null };
}
