/**
 * Rate limiting at the token and revocation endpoints (DESIGN §5), by failures: an IP address
 * that collects `max` `invalid_client` / `invalid_grant` answers for one client within a minute
 * gets 429 `temporarily_unavailable` with `Retry-After` for that client until the minute is over.
 * Per address *and client*, because on an appliance several applications' back ends often share
 * one host (or a proxy): one of them looping on a stale refresh token must not lock out the
 * others. The client is the one the request names (form `client_id` or the Basic user), read
 * without judging it. Successful grants cost one map look-up, so legitimate high-rate refreshing
 * is never slowed down. `GATEHOUSE_TOKEN_FAILURE_LIMIT` sets `max` (default 60).
 */
import type { AppContext } from '../context.js';
import { positiveIntegerEnv } from '../config.js';
import { OAuthError } from './errors.js';
import { decodeBasicPart } from './client-auth.js';
import type { OAuthCall } from './params.js';

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

export class FailureLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly max: number;

  constructor(private readonly ctx: AppContext) {
    this.max = positiveIntegerEnv(ctx.config.env, 'GATEHOUSE_TOKEN_FAILURE_LIMIT', DEFAULT_MAX);
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
  record(request: OAuthCall, error: unknown): void {
    if (!(error instanceof OAuthError) || (error.error !== 'invalid_client' && error.error !== 'invalid_grant')) return;
    const now = this.ctx.clock.now().getTime();
    const key = limitKey(request);
    const window = this.windows.get(key);
    if (window && window.resetAt > now) {
      window.count += 1;
      return;
    }
    if (this.windows.size >= SWEEP_AT) {
      for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
      // Oldest first (Map keeps insertion order): a flood of made-up client ids cannot grow it.
      for (const k of this.windows.keys()) {
        if (this.windows.size < MAX_TRACKED) break;
        this.windows.delete(k);
      }
    }
    this.windows.set(key, { count: 1, resetAt: now + WINDOW_MS });
  }

  /** Runs `fn` under the limit: refuses when over budget, counts its failures. */
  async guard<T>(request: OAuthCall, fn: () => Promise<T>): Promise<T> {
    this.check(request);
    try {
      return await fn();
    } catch (error) {
      this.record(request, error);
      throw error;
    }
  }
}
