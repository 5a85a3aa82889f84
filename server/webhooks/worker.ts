/**
 * The delivery worker (DESIGN §4.11): at-least-once delivery of the outbox.
 *
 * - Rows are claimed with a lease, so a crash mid-delivery only delays that row until the lease
 *   runs out; a clean stop aborts attempts in flight and gives their leases back at once.
 * - Total concurrency is bounded, and so is each application's share: applications at their cap
 *   are left out of the claim query, so a slow endpoint never holds up another app's events.
 * - Decisions about time (what is due, when to retry) use `ctx.clock`; real timers only pace the
 *   polling. A nudge (`wake`) after a transaction wrote events makes delivery immediate.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import { claimDue, recordAttempt, releaseLease, type ClaimedDelivery } from './queries.js';
import { leaseMs, type WorkerSettings } from './settings.js';
import { activeSecrets, webhookHeaders } from './sign.js';
import { postWebhook, type AttemptResult } from './send.js';
import type { TargetPolicy } from './target-address.js';

export class DeliveryWorker {
  private inFlight = new Map<string, ClaimedDelivery>();
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
    private readonly policy: TargetPolicy,
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

  /** Coalesced: many calls in one tick cause one look. */
  private schedulePump(): void {
    if (this.stopped || this.pumpQueued) return;
    this.pumpQueued = true;
    setImmediate(() => {
      this.pumpQueued = false;
      this.pump();
    });
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

  private pump(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    try {
      this.claimWhileRoom();
    } catch (error) {
      this.log?.error({ err: error }, 'webhook outbox claim failed');
    }
    this.timer = setTimeout(() => {
      this.exhaustedFor = undefined;
      this.pump();
    }, this.settings.pollMs);
    this.timer.unref();
  }

  private claimWhileRoom(): void {
    const { concurrency, perApplication } = this.settings;
    while (this.inFlight.size < concurrency) {
      const now = this.ctx.clock.now();
      const saturated = this.saturated();
      if (saturated.join(' ') === this.exhaustedFor) return;
      const { claimed, exhausted } = claimDue(
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

  private launch(delivery: ClaimedDelivery): void {
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

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const attemptedAt = this.ctx.clock.now();
    const secrets = activeSecrets(delivery, attemptedAt);
    let result: AttemptResult;
    if (!delivery.webhookUrl || !secrets.length) {
      // The URL was removed after the event was written: nothing to send to.
      result = { ok: false, statusCode: null, error: 'webhook_not_configured' };
    } else {
      const headers = webhookHeaders(delivery.id, attemptedAt, delivery.payload, secrets);
      result = await postWebhook(delivery.webhookUrl, delivery.payload, headers, this.settings.timeoutMs, this.policy, this.abort.signal);
    }
    if (this.stopped && !result.ok) {
      releaseLease(this.ctx.db, [delivery.id]);
      return;
    }
    const finishedAt = this.ctx.clock.now();
    const attempts = delivery.attempts + 1;
    const delay = result.ok || !delivery.webhookUrl ? undefined : this.settings.retryScheduleMs[attempts - 1];
    recordAttempt(this.ctx.db, delivery.id, attempts, {
      attemptedAt,
      finishedAt,
      ...result,
      nextAttemptAt: delay === undefined ? null : new Date(finishedAt.getTime() + delay),
    });
  }
}
