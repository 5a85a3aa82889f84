/**
 * Big deletes that never block the event loop (issue 21). Deleting an application, an SSO group or
 * a membership answers at once:
 * 1. In the request, one short transaction deletes the row itself and records a purge job. For an
 *    application or a membership the delete runs with foreign-key actions off, so SQLite does not
 *    cascade through everything that hangs off it in that one statement; the row is simply gone,
 *    and with it the application (or membership) from every read and every token decision, since
 *    each of them starts from that row (client look-up, membership join).
 * 2. The job's steps (purge-plans.ts) then remove what is left in bounded batches (batch.ts): a
 *    few milliseconds inline, which finishes a small one before the answer, and the rest in the
 *    background (`Purger`), pausing between batches so requests keep flowing.
 * 3. The job row keeps the id taken (`isPurging`: creating the same id answers 409) until the last
 *    batch, so nothing new inherits what is left; it holds the counts so far and survives a crash:
 *    `Purger.start()` resumes every job on start.
 */
import { and, asc, eq } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import type { Db, Tx } from '../db/client.js';
import { purgeJobs, type PurgeJob } from '../db/schema.js';
import { recordAudit } from '../audit/record.js';
import { addCounts, BatchSizer, pause, runBatch } from './batch.js';
import { planSteps, type PurgeKind } from './purge-plans.js';
import { exec, one, many, singleton, transaction } from '../db/store.js';

/** Work done inside the deleting request before it answers. */
export const INLINE_BUDGET_MS = 10;
/** A batch longer than this is logged: batches are sized to take a few milliseconds. */
const SLOW_BATCH_MS = 100;

/** The audit entry written when a job has removed everything (none for memberships: an internal detail). */
const PURGED_ACTION: Partial<Record<PurgeKind, string>> = { application: 'application.purged', sso_group: 'sso_group.purged' };

export interface NewPurge {
  kind: PurgeKind;
  target: string;
  params?: Record<string, string>;
  actor: string;
}

/** Whether a purge of this id is still under way (the id stays taken until it ends). */
export async function isPurging(db: Tx, kind: PurgeKind, target: string): Promise<boolean> {
  return await one(db.select({ kind: purgeJobs.kind }).from(purgeJobs).where(and(eq(purgeJobs.kind, kind), eq(purgeJobs.target, target)))) !== undefined;
}

/** Purges under way, oldest first (the admin operations view). */
export async function pendingPurges(db: Tx): Promise<PurgeJob[]> {
  return await many(db.select().from(purgeJobs).orderBy(asc(purgeJobs.requestedAt)));
}

/**
 * Deletes something big: `change` (the root row's delete, its audit entry and webhook events)
 * runs in one transaction with the new job, without foreign-key cascades when `cascade` is false
 * (SQLite: enforcement off for that transaction; PostgreSQL has no foreign key from what the
 * purge plans remove to the root rows, see scripts/pg-schema.ts); then the job gets a few milliseconds
 * inline and, if not finished, is handed to the background.
 */
export async function beginPurge(ctx: AppContext, job: NewPurge, change: (tx: Tx) => Promise<void>, options: { cascade: boolean }): Promise<void> {
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    await exec(tx.insert(purgeJobs)
      .values({ kind: job.kind, target: job.target, params: job.params ?? {}, actor: job.actor, requestedAt: now, removed: {} }));
    await change(tx);
  }, { sqliteForeignKeysOff: !options.cascade });
  // The delete itself is done; a batch that fails here (e.g. a full disk) is the background's to retry.
  let finished = false;
  try {
    finished = await advancePurge(ctx, job.kind, job.target, INLINE_BUDGET_MS);
  } catch {
    finished = false;
  }
  if (!finished) ctx.wakePurger();
}

const sizers = new WeakMap<Db, BatchSizer>();
const sizerFor = (db: Db) => sizers.get(db) ?? (sizers.set(db, BatchSizer.for(db)), sizers.get(db)!);

async function findJob(db: Db, kind: PurgeKind, target: string): Promise<PurgeJob | undefined> {
  return await one(db.select().from(purgeJobs).where(and(eq(purgeJobs.kind, kind), eq(purgeJobs.target, target))));
}

/**
 * One batch of the job's first unfinished step (finished steps cost an index probe); when every
 * step is done, the job ends: its row goes and its audit entry is written, in one transaction.
 *
 * Several instances on one PostgreSQL may work on the same job at once (the request that deleted
 * it, another instance's background purge): the counts are therefore added to the job row as it
 * is in the batch's transaction, not to this process's copy, and only the transaction that
 * deletes the job row writes the audit entry (SERIALIZABLE: the other one retries and finds none).
 */
export async function purgeBatch(ctx: AppContext, job: PurgeJob): Promise<{ finished: boolean; ms: number }> {
  const started = performance.now();
  const thisJob = and(eq(purgeJobs.kind, job.kind), eq(purgeJobs.target, job.target));
  for (const step of planSteps(job)) {
    const result = await runBatch(ctx.db, step, sizerFor(ctx.db), async (tx, removed) => {
      if (Object.keys(removed).length === 0) return;
      const row = await one(tx.select({ removed: purgeJobs.removed }).from(purgeJobs).where(thisJob));
      if (!row) return; // finished by another instance meanwhile
      job.removed = addCounts({ ...row.removed }, removed);
      await exec(tx.update(purgeJobs).set({ removed: job.removed }).where(thisJob));
    });
    if (!result.done) return { finished: false, ms: performance.now() - started };
  }
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    const row = await one(tx.select({ removed: purgeJobs.removed }).from(purgeJobs).where(thisJob));
    if (!row || (await exec(tx.delete(purgeJobs).where(thisJob))) === 0) return; // another instance ended it
    job.removed = row.removed;
    const action = PURGED_ACTION[job.kind];
    if (action) {
      await recordAudit(tx, now, {
        actor: 'system',
        action,
        applicationId: job.kind === 'application' ? job.target : null,
        target: job.target,
        details: { removed: job.removed, requestedBy: job.actor, requestedAt: job.requestedAt.toISOString() },
      });
    }
  });
  return { finished: true, ms: performance.now() - started };
}

/** Runs batches of one job for up to `budgetMs`; true when the job has ended. */
export async function advancePurge(ctx: AppContext, kind: PurgeKind, target: string, budgetMs: number): Promise<boolean> {
  const job = await findJob(ctx.db, kind, target);
  if (!job) return true;
  const started = performance.now();
  do {
    if ((await purgeBatch(ctx, job)).finished) return true;
  } while (performance.now() - started < budgetMs);
  return false;
}

/** While another instance runs the background purge, this one looks again this often. */
const ELSEWHERE_RETRY_MS = 5_000;

/**
 * Background purges: one batch at a time, oldest job first, pausing as long as each batch took.
 * Started by the operations plugin when workers run; `start()` resumes jobs a crash interrupted.
 * On a shared PostgreSQL one instance at a time runs it (`singleton`); the others look again a
 * few seconds later, in case it finished its last job just before theirs arrived.
 */
export class Purger {
  private loop: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: AppContext,
    private readonly log: FastifyBaseLogger,
  ) {}

  async start(): Promise<void> {
    const pending = await pendingPurges(this.ctx.db);
    if (pending.length) this.log.info({ jobs: pending.map((j) => `${j.kind}:${j.target}`) }, 'resuming interrupted deletes');
    this.wake();
  }

  wake(): void {
    if (this.stopped) return;
    // A job recorded while the loop is finishing (it found none left) gets another round.
    if (this.loop) {
      this.again = true;
      return;
    }
    this.again = false;
    clearTimeout(this.retry);
    this.loop = singleton(this.ctx.db, 'purge', () => this.run())
      .then((job) => {
        if (!job.ran) this.retryIn(ELSEWHERE_RETRY_MS);
      })
      .catch((error: unknown) => {
        this.log.error({ err: error }, 'background delete could not start; retrying in 30 s');
        this.retryIn(30_000);
      })
      .finally(() => {
        this.loop = undefined;
        if (this.again) this.wake();
      });
  }

  private retryIn(ms: number): void {
    if (this.stopped) return;
    this.retry = setTimeout(() => this.wake(), ms);
    this.retry.unref();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const job = (await pendingPurges(this.ctx.db))[0];
      if (!job) return;
      try {
        const { finished, ms } = await purgeBatch(this.ctx, job);
        if (ms > SLOW_BATCH_MS) this.log.warn({ kind: job.kind, target: job.target, ms: Math.round(ms) }, 'slow delete batch');
        if (finished) this.log.info({ kind: job.kind, target: job.target, removed: job.removed }, 'delete finished');
        await pause(ms);
      } catch (error) {
        // A failing batch (e.g. the disk is full) is tried again later, not in a tight loop.
        this.log.error({ err: error, kind: job.kind, target: job.target }, 'delete batch failed; retrying in 30 s');
        this.retryIn(30_000);
        return;
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.loop;
  }
}
