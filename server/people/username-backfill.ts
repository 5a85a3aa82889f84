/**
 * Usernames for the people who existed before usernames did (decision 0100). The migration adds
 * the column empty; this names everyone by the rule of username.ts, oldest first, with clashes
 * numbered, before the server listens. It walks `people_created_idx` by keyset in batches of
 * `BATCH`, one short transaction each, and yields to the event loop between them, so a big
 * directory (100,000 people) never holds the loop for more than a batch. A start that finds nobody
 * without a name costs one index look-up (`people_username_uq`, where the NULLs are).
 *
 * On a shared PostgreSQL database, instances started together take turns (`singleton`); the ones
 * that waited find nothing left to do. A crash part-way loses nothing: the next start goes on.
 */
import { inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { people } from '../db/schema.js';
import { exec, many, one, singleton, transaction } from '../db/store.js';
import { takenUsernames, usernameBase, usernameCandidate } from './username.js';

export const BACKFILL_BATCH = 100;
const WAIT_FOR_OTHER_INSTANCE_MS = 200;
/** Numbered candidates proposed at least per base and round, so a run of taken numbers costs few rounds. */
const MIN_PROPOSALS = 8;
const MAX_PROPOSALS = 512;

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface BackfillResult {
  /** People named by this call. */
  assigned: number;
  /** Batches (transactions) it took. */
  batches: number;
}

/** Whether anyone still lacks a username (an index look-up). */
async function anyoneUnnamed(db: Db): Promise<boolean> {
  // The column is declared NOT NULL for the code; on an upgraded database it may still be NULL.
  return (await one(db.select({ id: people.id }).from(people).where(isNull(people.username)).limit(1))) !== undefined;
}

/** Names everyone without a username; returns how many it named (0 on every start after the first). */
export async function assignMissingUsernames(db: Db, options: { batch?: number } = {}): Promise<BackfillResult> {
  for (;;) {
    if (!(await anyoneUnnamed(db))) return { assigned: 0, batches: 0 };
    const run = await singleton(db, 'username-backfill', () => backfill(db, options.batch ?? BACKFILL_BATCH));
    if (run.ran) return run.value;
    // Another instance is naming people: wait for it, then look again.
    await new Promise((resolve) => setTimeout(resolve, WAIT_FOR_OTHER_INSTANCE_MS));
  }
}

async function backfill(db: Db, batch: number): Promise<BackfillResult> {
  const result: BackfillResult = { assigned: 0, batches: 0 };
  /** Per base named in this run: the candidate number to try next (1 is the bare base). */
  const next = new Map<string, number>();
  let cursor: { createdAt: Date; id: string } | undefined;
  for (;;) {
    // Keyset walk in creation order (people_created_idx); the rows already named are skipped here.
    const rows = await many(db
      .select({ id: people.id, email: people.email, username: people.username, createdAt: people.createdAt })
      .from(people)
      .where(cursor ? sql`(${people.createdAt}, ${people.id}) > (${cursor.createdAt.getTime()}, ${cursor.id})` : undefined)
      .orderBy(people.createdAt, people.id)
      .limit(batch));
    if (rows.length === 0) return result;
    const last = rows[rows.length - 1]!;
    cursor = { createdAt: last.createdAt, id: last.id };
    const unnamed = rows.filter((r) => r.username === null);
    if (unnamed.length > 0) {
      result.assigned += await nameBatch(db, unnamed, next);
      result.batches += 1;
    }
    await yieldToLoop();
  }
}

/**
 * Names one batch (in creation order) in one transaction; returns how many rows it wrote. In
 * rounds, each asking about its candidates in one query: every base proposes as many candidates
 * as it has people waiting (at least MIN_PROPOSALS once numbered), then the people take, oldest
 * first, the first free candidate of their base. The round ends at the first person whose base ran
 * out, so every name given is the one a one-by-one pass in creation order would give.
 */
async function nameBatch(db: Db, rows: Array<{ id: string; email: string }>, next: Map<string, number>): Promise<number> {
  return transaction(db, async (tx) => {
    let waiting = rows.map((row) => ({ id: row.id, base: usernameBase(row.email) }));
    const names = new Map<string, string>(); // id → username
    const given = new Set<string>();
    /** Per base, how many rounds it ran out of candidates: each doubles what it proposes next. */
    const shortfalls = new Map<string, number>();
    while (waiting.length > 0) {
      const counts = new Map<string, number>();
      for (const { base } of waiting) counts.set(base, (counts.get(base) ?? 0) + 1);
      const proposals = new Map<string, Array<{ n: number; name: string }>>();
      for (const [base, waitingForIt] of counts) {
        const from = next.get(base) ?? 1;
        // The bare name alone when one person wants it: most bases are nobody else's.
        const count = from === 1 && waitingForIt === 1 ? 1 : Math.max(waitingForIt, Math.min(MAX_PROPOSALS, MIN_PROPOSALS << (shortfalls.get(base) ?? 0)));
        proposals.set(base, Array.from({ length: count }, (_, i) => ({ n: from + i, name: usernameCandidate(base, from + i) })));
      }
      const taken = await takenUsernames(tx, [...proposals.values()].flat().map((p) => p.name));
      let served = 0;
      for (const person of waiting) {
        const candidates = proposals.get(person.base)!;
        let pick: { n: number; name: string } | undefined;
        while (candidates.length > 0 && !pick) {
          const candidate = candidates.shift()!;
          if (!taken.has(candidate.name) && !given.has(candidate.name)) pick = candidate;
          next.set(person.base, candidate.n + 1);
        }
        if (!pick) {
          // Its base ran out: the younger ones wait for the next round.
          shortfalls.set(person.base, (shortfalls.get(person.base) ?? 0) + 1);
          break;
        }
        names.set(person.id, pick.name);
        given.add(pick.name);
        served += 1;
      }
      waiting = waiting.slice(served);
    }
    // One statement for the batch, by primary key. (Not also `username IS NULL`: SQLite would then
    // walk the unique index's NULLs, every unnamed person, once per batch.) Nobody else names
    // people meanwhile: one writer on SQLite, the advisory lock on PostgreSQL.
    const cases = sql.join([...names].map(([id, username]) => sql`WHEN ${id} THEN ${username}`), sql` `);
    return exec(tx
      .update(people)
      .set({ username: sql`CASE ${people.id} ${cases} END` })
      .where(inArray(people.id, [...names.keys()])));
  });
}
