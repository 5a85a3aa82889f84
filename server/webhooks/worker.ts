/**
 * The delivery worker (DESIGN §4.11): at-least-once delivery of an outbox. One class serves the
 * webhook outbox and the back-channel logout outbox (oauth/backchannel/); a `DeliveryChannel`
 * says which table and how one attempt is sent.
 *
 * - Rows are claimed with a lease, so a crash mid-delivery only delays that row until the lease
 *   runs out; a clean stop aborts attempts in flight and gives their leases back at once.
 * - Total concurrency is bounded, and so is each application's share: applications at their cap
 *   are left out of the claim query, so a slow endpoint never holds up another app's events.
 * - Decisions about time (what is due, when to retry) use `ctx.clock`; real timers only pace the
 *   polling. A nudge (`wake`) after a transaction wrote events makes delivery immediate.
 */
import { AsyncResource } from 'node:async_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import type { ClaimedRow, OutboxQueries } from './queries.js';
import { leaseMs, type WorkerSettings } from './settings.js';
import type { AttemptResult } from './send.js';

/** One outbox and how to send one of its rows. */
export interface DeliveryChannel<Row extends ClaimedRow> {
  queries: OutboxQueries<Row>;
  /**
   * One attempt at `at`. `final` ends the delivery at once, without retries (there is nowhere to
   * send it any more: the application's URL was removed after the row was written).
   */
  send(row: Row, at: Date, timeoutMs: number, stop: AbortSignal): Promise<AttemptResult & { final?: boolean }>;
}

export class DeliveryWorker<Row extends ClaimedRow> {
  private inFlight = new Map<string, Row>();
  private perApp = new Map<string, number>();
  private running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private pumpQueued = false;
  /**
   * The saturated-application set for which the outbox was last found to have no other due
   * rows. Until something outside the worker changes the outbox (a nudge) or time passes (the
   * poll), claiming again with the same set would only scan the whole backlog for nothing.
   */
  private exhaustedFor: string | undefined;
  private stopped = true;
  private readonly abort = new AbortController();

  constructor(
    private readonly ctx: AppContext,
    private readonly settings: WorkerSettings,
    private readonly channel: DeliveryChannel<Row>,
    private readonly log?: FastifyBaseLogger,
  ) {}

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Looks for due rows soon: new events were written or a delivery was made due. */
  wake(): void {
    this.exhaustedFor = undefined;
    this.schedulePump();
  }

  /**
   * The pump, bound to the async context the worker was made in. A wake comes from inside the
   * transaction that wrote the rows (oauth/backchannel/outbox.ts), and a callback scheduled there
   * would inherit that transaction's scope (db/store.ts): the claim would join the open
   * transaction and send rows not yet committed — which, if the transaction then fails or is
   * retried (PostgreSQL's SERIALIZABLE), were never written. Bound here, the claim runs as its
   * own transaction, after the writer's on SQLite (the gate) and beside it on PostgreSQL.
   */
  private readonly pumpSoon = AsyncResource.bind(async () => {
    this.pumpQueued = false;
    await this.pump();
  });

  /** Coalesced: many calls in one tick cause one look. */
  private schedulePump(): void {
    if (this.stopped || this.pumpQueued) return;
    this.pumpQueued = true;
    setImmediate(this.pumpSoon);
  }

  /** Aborts attempts in flight, gives their leases back and waits for them to settle. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.abort.abort();
    await Promise.allSettled([...this.running]);
  }

  /** Number of deliveries in flight (for tests and the benchmark). */
  get busy(): number {
    return this.inFlight.size;
  }

  private async pump(): Promise<void> {
    if (this.stopped) return;
    clearTimeout(this.timer);
    try {
      await this.claimWhileRoom();
    } catch (error) {
      this.log?.error({ err: error }, 'webhook outbox claim failed');
    }
    // The claim awaited: stopped meanwhile, or another pump (a wake) already set the next look.
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(async () => {
      this.exhaustedFor = undefined;
      await this.pump();
    }, this.settings.pollMs);
    this.timer.unref();
  }

  private async claimWhileRoom(): Promise<void> {
    const { concurrency, perApplication } = this.settings;
    while (this.inFlight.size < concurrency) {
      const now = this.ctx.clock.now();
      const saturated = this.saturated();
      if (saturated.join(' ') === this.exhaustedFor) return;
      const { claimed, exhausted } = await this.channel.queries.claimDue(
        this.ctx.db,
        now,
        new Date(now.getTime() + leaseMs(this.settings)),
        // Small pages: a page mostly holds rows of an app that has room for one more; a full
        // page just means looking again with that app saturated.
        Math.min(concurrency - this.inFlight.size, perApplication),
        saturated,
        (app) => perApplication - (this.perApp.get(app) ?? 0),
      );
      for (const delivery of claimed) this.launch(delivery);
      if (exhausted) {
        this.exhaustedFor = this.saturated().join(' ');
        return;
      }
    }
  }

  private saturated(): string[] {
    return [...this.perApp].filter(([, n]) => n >= this.settings.perApplication).map(([app]) => app).sort();
  }

  private launch(delivery: Row): void {
    this.inFlight.set(delivery.id, delivery);
    this.perApp.set(delivery.applicationId, (this.perApp.get(delivery.applicationId) ?? 0) + 1);
    const task = this.attempt(delivery)
      .catch((error: unknown) => this.log?.error({ err: error, delivery: delivery.id }, 'webhook delivery bookkeeping failed'))
      .finally(() => {
        this.running.delete(task);
        this.inFlight.delete(delivery.id);
        const left = (this.perApp.get(delivery.applicationId) ?? 1) - 1;
        if (left > 0) this.perApp.set(delivery.applicationId, left);
        else this.perApp.delete(delivery.applicationId);
        this.schedulePump();
      });
    this.running.add(task);
  }

  private async attempt(delivery: Row): Promise<void> {
    const attemptedAt = this.ctx.clock.now();
    const result = await this.channel.send(delivery, attemptedAt, this.settings.timeoutMs, this.abort.signal);
    if (this.stopped && !result.ok) {
      await this.channel.queries.releaseLease(this.ctx.db, [delivery.id]);
      return;
    }
    const finishedAt = this.ctx.clock.now();
    const attempts = delivery.attempts + 1;
    const delay = result.ok || result.final ? undefined : this.settings.retryScheduleMs[attempts - 1];
    await this.channel.queries.recordAttempt(this.ctx.db, delivery.id, attempts, {
      attemptedAt,
      finishedAt,
      ok: result.ok,
      statusCode: result.statusCode,
      error: result.error,
      nextAttemptAt: delay === undefined ? null : new Date(finishedAt.getTime() + delay),
    });
  }
}
