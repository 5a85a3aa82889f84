/**
 * The username rule (spec claims-and-groups.md, "People"): a person's `preferred_username`, unique
 * across the directory, stored lower-case, `^[a-z0-9][a-z0-9._-]{0,63}$`. Set when the person is
 * created from the e-mail address's local part (lower-cased; every other character becomes `-`;
 * leading `.`, `_`, `-` dropped and cut to 64 characters), with `2`, `3`, … appended on a clash.
 * The same rule names existing people at the upgrade (username-backfill.ts) and everyone created
 * later (sign-up, external providers, invitations): one function, so the two never differ.
 */
import { inArray } from 'drizzle-orm';
import type { Db as Tx } from '../db/client.js';
import { people } from '../db/schema.js';
import { many } from '../db/store.js';
import { conflict, validationFailed } from '../http/problem.js';

export const USERNAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const USERNAME_MAX_LENGTH = 64;
/** What a local part with no letter or digit at all (`___@example.com`) becomes. */
const FALLBACK = 'user';
/** Candidates asked about in one query after the first (alone: usually free) was taken. */
const WINDOW = 50;

/** The name an e-mail address suggests before any clash: its local part made into a valid username. */
export function usernameBase(email: string): string {
  const at = email.lastIndexOf('@');
  const local = (at > 0 ? email.slice(0, at) : email).toLowerCase();
  // Per code point (`u`), so a character outside the BMP becomes one `-`, not two.
  const name = local.replace(/[^a-z0-9._-]/gu, '-').replace(/^[._-]+/, '').slice(0, USERNAME_MAX_LENGTH);
  return name === '' ? FALLBACK : name;
}

/** The `n`th candidate for `base` (1: the base itself; 2, 3, …: suffixed, the base cut so the whole stays ≤ 64). */
export function usernameCandidate(base: string, n: number): string {
  if (n <= 1) return base;
  const suffix = String(n);
  return `${base.slice(0, USERNAME_MAX_LENGTH - suffix.length)}${suffix}`;
}

/** Which of `names` people already have (an index look-up per name: `people_username_uq`). */
export async function takenUsernames(db: Tx, names: string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const rows = await many(db.select({ username: people.username }).from(people).where(inArray(people.username, names)));
  return new Set(rows.map((r) => r.username));
}

/**
 * The first free candidate for `base` from the `from`th on, skipping names in `reserved` too (names
 * given out but not yet written). Call it inside the transaction that writes the name: on SQLite
 * no one writes in between; on PostgreSQL the serializable transaction retries if someone did.
 */
export async function firstFreeUsername(db: Tx, base: string, from = 1, reserved: ReadonlySet<string> = new Set()): Promise<{ name: string; n: number }> {
  for (let start = from, size = 1; ; start += size, size = WINDOW) {
    const candidates = Array.from({ length: size }, (_, i) => usernameCandidate(base, start + i));
    const taken = await takenUsernames(db, candidates);
    const index = candidates.findIndex((name) => !taken.has(name) && !reserved.has(name));
    if (index >= 0) return { name: candidates[index]!, n: start + index };
  }
}

/** The username a new person with this e-mail address gets. */
export async function usernameForNewPerson(db: Tx, email: string): Promise<string> {
  return (await firstFreeUsername(db, usernameBase(email))).name;
}

/** A username as an administrator types it: case-insensitive, so compared and stored lower-case. */
export function normalizeUsername(text: string): string {
  return text.trim().toLowerCase();
}

/** An administrator's username, normalised; 400 `validation_failed` naming `body.username` when it breaks the rule. */
export function parseUsername(text: string): string {
  const username = normalizeUsername(text);
  if (!USERNAME_PATTERN.test(username)) {
    throw validationFailed(
      [{ path: 'body.username', message: 'must be 1 to 64 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit' }],
      'The username is not valid.',
    );
  }
  return username;
}

export const usernameTaken = (username: string) => conflict('username_taken', `The username "${username}" belongs to someone else.`);
