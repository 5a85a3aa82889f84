/**
 * Rate limiting at the token and revocation endpoints (DESIGN §5), by failures: an IP address
 * that collects `max` `invalid_client` / `invalid_grant` answers for one client within a minute
 * gets 429 `temporarily_unavailable` with `Retry-After` for that client until the minute is over.
 * Per address *and client*, because on an appliance several applications' back ends often share
 * one host (or a proxy): one of them looping on a stale refresh token must not lock out the
 * others. The client is the one the request names (form `client_id` or the Basic user), read
 * without judging it. Successful grants cost one map look-up, so legitimate high-rate refreshing
 * is never slowed down. `GATEHOUSE_TOKEN_FAILURE_LIMIT` sets `max` (default 60).
 *
 * PostgreSQL mode (issue 26): failures are counted in the shared `rate_limit_windows` table, so
 * the budget is one across instances; `check` still reads this instance's map, which learns the
 * callers that other instances put over budget within SHARED_REFRESH_MS.
 */
import type { AppContext } from '../context.js';
import { positiveIntegerEnv } from '../config.js';
import { OAuthError } from './errors.js';
import { decodeBasicPart } from './client-auth.js';
import type { OAuthCall } from './params.js';
import { engineOf } from '../db/store.js';
import { countInWindow, windowKey, windowsOver } from '../http/rate-limit-windows.js';

const WINDOW_MS = 60_000;
const DEFAULT_MAX = 60;
/** Beyond this many tracked (address, client) pairs, expired windows are swept. */
const SWEEP_AT = 10_000;
/** And beyond this many live ones (made-up client ids), the oldest are forgotten. */
const MAX_TRACKED = 50_000;
const MAX_CLIENT_ID = 200;

/** The client a request names, best effort and never throwing (it only picks a counter). */
function claimedClient(request: OAuthCall): string {
  const body = request.body as Record<string, unknown> | null | undefined;
  const fromBody = typeof body === 'object' && body !== null ? body.client_id : undefined;
  if (typeof fromBody === 'string') return fromBody.slice(0, MAX_CLIENT_ID);
  const header = request.headers.authorization;
  const basic = typeof header === 'string' ? /^Basic[ ]+([A-Za-z0-9+/=]{1,1000})/i.exec(header) : null;
  if (!basic) return '';
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  // Decoded as authentication decodes it, so `%77ebapp` counts against `webapp`.
  let clientId = user;
  try {
    clientId = decodeBasicPart(user);
  } catch {
    // A bad escape fails authentication; the raw value picks the counter.
  }
  return clientId.slice(0, MAX_CLIENT_ID);
}

const limitKey = (request: OAuthCall) => `${request.ip}\n${claimedClient(request)}`;

/** The scope of the failure counters in the shared table (http/rate-limit-windows.ts). */
const SHARED_SCOPE = 'token-failures';
/** PostgreSQL mode: how often an instance reads which callers the others have put over budget. */
export const SHARED_REFRESH_MS = 1_000;

export class FailureLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly max: number;
  /** PostgreSQL mode: failures are counted in the database, shared by every instance. */
  private readonly shared: boolean;
  private refreshedAt = 0;
  private refreshing: Promise<void> | undefined;

  constructor(private readonly ctx: AppContext) {
    this.max = positiveIntegerEnv(ctx.config.env, 'GATEHOUSE_TOKEN_FAILURE_LIMIT', DEFAULT_MAX);
    this.shared = engineOf(ctx.db) === 'postgres';
  }

  /**
   * PostgreSQL mode: the callers over budget, as counted by every instance, copied into this
   * instance's windows at most every SHARED_REFRESH_MS (wall clock), so `check` stays a map
   * look-up and a successful grant pays one timestamp comparison. A caller's own failures here
   * are counted in the database at once (`record`); those counted by other instances block here
   * within a second.
   */
  private refreshShared(): Promise<void> | undefined {
    if (Date.now() - this.refreshedAt < SHARED_REFRESH_MS) return undefined;
    this.refreshing ??= (async () => {
      try {
        const over = await windowsOver(this.ctx.db, SHARED_SCOPE, this.max, this.ctx.clock.now());
        for (const { key, count, endsAt } of over) this.track(key.slice(SHARED_SCOPE.length + 1), count, endsAt.getTime());
        this.refreshedAt = Date.now();
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** Notes a window for `key`, bounding the map as `record` always did. */
  private track(key: string, count: number, resetAt: number): void {
    const known = this.windows.get(key);
    if (known && known.resetAt === resetAt) known.count = Math.max(known.count, count);
    else {
      this.bound(this.ctx.clock.now().getTime());
      this.windows.set(key, { count, resetAt });
    }
  }

  /** Throws 429 when the caller's address is over its failure budget for the named client. */
  check(request: OAuthCall): void {
    if (this.windows.size === 0) return; // nobody has failed lately: no key to build
    const key = limitKey(request);
    const window = this.windows.get(key);
    if (!window) return;
    const now = this.ctx.clock.now().getTime();
    if (window.resetAt <= now) {
      this.windows.delete(key);
      return;
    }
    if (window.count >= this.max) {
      throw new OAuthError('temporarily_unavailable', 'Too many failed requests from this address; try again later.', 429, {
        'retry-after': String(Math.ceil((window.resetAt - now) / 1000)),
      });
    }
  }

  /** Counts `error` against the caller when it is a failed credential or grant. */
  record(request: OAuthCall, error: unknown): void | Promise<void> {
    if (!(error instanceof OAuthError) || (error.error !== 'invalid_client' && error.error !== 'invalid_grant')) return;
    const now = this.ctx.clock.now();
    const key = limitKey(request);
    if (this.shared) {
      // The database's count is every instance's failures for this caller.
      return countInWindow(this.ctx.db, windowKey(SHARED_SCOPE, key), WINDOW_MS, now).then(({ count, endsAt }) => this.track(key, count, endsAt.getTime()));
    }
    const window = this.windows.get(key);
    if (window && window.resetAt > now.getTime()) {
      window.count += 1;
      return;
    }
    this.bound(now.getTime());
    this.windows.set(key, { count: 1, resetAt: now.getTime() + WINDOW_MS });
  }

  /** Room for one more window: expired ones swept, then the oldest forgotten beyond MAX_TRACKED. */
  private bound(now: number): void {
    if (this.windows.size < SWEEP_AT) return;
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
    // Oldest first (Map keeps insertion order): a flood of made-up client ids cannot grow it.
    for (const k of this.windows.keys()) {
      if (this.windows.size < MAX_TRACKED) break;
      this.windows.delete(k);
    }
  }

  /** Runs `fn` under the limit: refuses when over budget, counts its failures. */
  async guard<T>(request: OAuthCall, fn: () => Promise<T>): Promise<T> {
    if (this.shared) await this.refreshShared();
    this.check(request);
    try {
      return await fn();
    } catch (error) {
      try {
        await this.record(request, error);
      } catch {
        // The answer stays the grant's own error: a count the database missed only delays a 429.
      }
      throw error;
    }
  }
}
