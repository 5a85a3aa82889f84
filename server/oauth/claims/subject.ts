/**
 * The member a token's claims are about, as the claim makers read them (compose.ts): their role,
 * their profile (parsed only when a custom claim reads it) and their directory groups (read only
 * when the scope or a custom claim needs them: queries.ts).
 */
import type { AppContext } from '../../context.js';
import type { Profile } from '../../db/schema.js';
import type { ClaimSubject } from './custom.js';
import { claimQueries } from './queries.js';

export const NO_GROUPS: readonly string[] = [];

/** A member's role and stored profile (JSON text) as a claim subject. */
export function memberSubject(role: string, profile: string): Omit<ClaimSubject, 'groups'> {
  let parsed: Profile | undefined;
  return { role, profile: () => (parsed ??= JSON.parse(profile) as Profile) };
}

/** The person's group ids, sorted: synchronous on SQLite unless a transaction holds the connection. */
export function groupIdsOf(ctx: AppContext, personId: string): readonly string[] | Promise<readonly string[]> {
  return claimQueries(ctx.db).groupIds(personId);
}
