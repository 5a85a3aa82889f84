/**
 * Rate limiting at the token and revocation endpoints (DESIGN §5), by failures: an IP address
 * that collects `max` `invalid_client` / `invalid_grant` answers within a minute gets 429
 * `temporarily_unavailable` with `Retry-After` until the minute is over. Successful grants cost
 * one map look-up, so legitimate high-rate refreshing is never slowed down.
 * `GATEHOUSE_TOKEN_FAILURE_LIMIT` sets `max` (default 60).
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { OAuthError } from './errors.js';

const WINDOW_MS = 60_000;
const DEFAULT_MAX = 60;
/** Beyond this many tracked addresses, expired windows are swept. */
const SWEEP_AT = 10_000;

export class FailureLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly max: number;

  constructor(private readonly ctx: AppContext) {
    const raw = ctx.config.env.GATEHOUSE_TOKEN_FAILURE_LIMIT;
    this.max = raw && /^\d+$/.test(raw) && Number(raw) > 0 ? Number(raw) : DEFAULT_MAX;
  }

  /** Throws 429 when the caller's address is over its failure budget. */
  check(request: FastifyRequest): void {
    const window = this.windows.get(request.ip);
    if (!window) return;
    const now = this.ctx.clock.now().getTime();
    if (window.resetAt <= now) {
      this.windows.delete(request.ip);
      return;
    }
    if (window.count >= this.max) {
      throw new OAuthError('temporarily_unavailable', 'Too many failed requests from this address; try again later.', 429, {
        'retry-after': String(Math.ceil((window.resetAt - now) / 1000)),
      });
    }
  }

  /** Counts `error` against the caller when it is a failed credential or grant. */
  record(request: FastifyRequest, error: unknown): void {
    if (!(error instanceof OAuthError) || (error.error !== 'invalid_client' && error.error !== 'invalid_grant')) return;
    const now = this.ctx.clock.now().getTime();
    const window = this.windows.get(request.ip);
    if (window && window.resetAt > now) {
      window.count += 1;
      return;
    }
    if (this.windows.size >= SWEEP_AT) {
      for (const [ip, w] of this.windows) if (w.resetAt <= now) this.windows.delete(ip);
    }
    this.windows.set(request.ip, { count: 1, resetAt: now + WINDOW_MS });
  }

  /** Runs `fn` under the limit: refuses when over budget, counts its failures. */
  async guard<T>(request: FastifyRequest, fn: () => Promise<T>): Promise<T> {
    this.check(request);
    try {
      return await fn();
    } catch (error) {
      this.record(request, error);
      throw error;
    }
  }
}
