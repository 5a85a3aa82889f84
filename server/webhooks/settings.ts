/**
 * Delivery worker settings (DESIGN §4.11). The defaults are the product's rules; the
 * `GATEHOUSE_WEBHOOK_*` environment variables tune them (tests shorten the timeout and the poll
 * interval; operators may lower concurrency on small machines).
 */
import { ConfigError } from '../config.js';

export interface WorkerSettings {
  /** Deliveries in flight at once, across all applications. */
  concurrency: number;
  /** Deliveries in flight at once for one application, so a slow endpoint holds only its own. */
  perApplication: number;
  /** Per-attempt timeout (connect + answer). */
  timeoutMs: number;
  /** How often the outbox is checked for due rows when nothing nudged the worker. */
  pollMs: number;
  /** Delay before retry n (1-based) after a failed attempt; past the end the delivery is `failed`. */
  retryScheduleMs: number[];
}

export const RETRY_SCHEDULE_MS = [5e3, 5 * 60e3, 30 * 60e3, 2 * 3600e3, 5 * 3600e3, 10 * 3600e3, 10 * 3600e3];

export const DEFAULT_SETTINGS: WorkerSettings = {
  concurrency: 64,
  perApplication: 8,
  timeoutMs: 15_000,
  pollMs: 1_000,
  retryScheduleMs: RETRY_SCHEDULE_MS,
};

/**
 * A claimed delivery is leased for this long: longer than any attempt, so a lease that runs out
 * means the process holding it died and the row may be attempted again (at-least-once).
 */
export function leaseMs(settings: WorkerSettings): number {
  return settings.timeoutMs + 60_000;
}

function positiveInt(env: Record<string, string | undefined>, name: string, fallback: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < 1 || value > max) {
    throw new ConfigError(`${name} must be a whole number between 1 and ${max}, got "${raw}".`);
  }
  return value;
}

export function settingsFromEnv(env: Record<string, string | undefined>): WorkerSettings {
  const scheduleRaw = env.GATEHOUSE_WEBHOOK_RETRY_SCHEDULE_MS;
  let retryScheduleMs = DEFAULT_SETTINGS.retryScheduleMs;
  if (scheduleRaw) {
    const parts = scheduleRaw.split(',').map((p) => p.trim());
    if (!parts.every((p) => /^\d+$/.test(p))) {
      throw new ConfigError(`GATEHOUSE_WEBHOOK_RETRY_SCHEDULE_MS must be comma-separated milliseconds, got "${scheduleRaw}".`);
    }
    retryScheduleMs = parts.map(Number);
  }
  return {
    concurrency: positiveInt(env, 'GATEHOUSE_WEBHOOK_CONCURRENCY', DEFAULT_SETTINGS.concurrency, 1000),
    perApplication: positiveInt(env, 'GATEHOUSE_WEBHOOK_PER_APP_CONCURRENCY', DEFAULT_SETTINGS.perApplication, 1000),
    timeoutMs: positiveInt(env, 'GATEHOUSE_WEBHOOK_TIMEOUT_MS', DEFAULT_SETTINGS.timeoutMs, 120_000),
    pollMs: positiveInt(env, 'GATEHOUSE_WEBHOOK_POLL_MS', DEFAULT_SETTINGS.pollMs, 600_000),
    retryScheduleMs,
  };
}
