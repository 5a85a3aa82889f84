/**
 * Per-IP rate limits on sign-in and sign-up (DESIGN §5), shared by the JSON endpoints and the
 * hosted forms. Answers are 429 `rate_limited` with `Retry-After`. The limits can be raised with
 * `GATEHOUSE_SIGN_IN_RATE_LIMIT` / `GATEHOUSE_SIGN_UP_RATE_LIMIT` (requests per minute per IP).
 *
 * @fastify/rate-limit gives every route its own counter (each route gets a `child()` store, and
 * each scope that registers the plugin its own store), so N routes would allow N times the limit.
 * A limit with a `groupId` is one budget per IP instead: every route that takes a password (JSON
 * and form sign-in, invitation sign-in, account-link proof, password change) draws on the
 * `sign-in` budget, every sign-up route on the `sign-up` budget, across all the scopes of one app,
 * through the store below. Limits without a `groupId` keep a counter per route.
 *
 * SQLite mode (one process) counts in memory; PostgreSQL mode counts in the database, so the
 * instances behind one load balancer share each budget (issue 26).
 */
import type { FastifyInstance } from 'fastify';
import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { positiveIntegerEnv, type Config } from '../config.js';
import type { AppContext } from '../context.js';
import { tooManyRequests } from '../http/problem.js';
import { countInWindow, windowKey } from '../http/rate-limit-windows.js';
import { engineOf } from '../db/store.js';

export const DEFAULT_SIGN_IN_PER_MINUTE = 30;
export const DEFAULT_SIGN_UP_PER_MINUTE = 10;
export const DEFAULT_PASSWORD_RESET_PER_MINUTE = 5;
/** Addresses remembered per counter (the library's LocalStore keeps 5,000); least recent go first. */
export const RATE_LIMIT_MAX_KEYS = 10_000;

function perMinute(config: Config, name: string, fallback: number): number {
  return positiveIntegerEnv(config.env, name, fallback);
}

export function authRateLimits(config: Config) {
  const signInMax = perMinute(config, 'GATEHOUSE_SIGN_IN_RATE_LIMIT', DEFAULT_SIGN_IN_PER_MINUTE);
  return {
    /** Every route that checks a password: one budget per IP. */
    signIn: { max: signInMax, timeWindow: 60_000, groupId: 'sign-in' },
    /** Every sign-up route: one budget per IP. */
    signUp: { max: perMinute(config, 'GATEHOUSE_SIGN_UP_RATE_LIMIT', DEFAULT_SIGN_UP_PER_MINUTE), timeWindow: 60_000, groupId: 'sign-up' },
    /** Starting an external-provider sign-in and its callback (no password): a counter per route. */
    providerSignIn: { max: signInMax, timeWindow: 60_000 },
    /** Asking for reset (and verification) e-mails. */
    passwordReset: { max: perMinute(config, 'GATEHOUSE_PASSWORD_RESET_RATE_LIMIT', DEFAULT_PASSWORD_RESET_PER_MINUTE), timeWindow: 60_000 },
  };
}

type ChildOptions = Parameters<FastifyRateLimitStore['child']>[0];

/**
 * Fixed-window counters per key (the library's LocalStore semantics: the window starts at a key's
 * first request), at most `RATE_LIMIT_MAX_KEYS` keys, the least recently seen evicted first.
 */
class WindowCounters implements FastifyRateLimitStore {
  private readonly windows = new Map<string, { count: number; startMs: number }>();

  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.startMs + timeWindow <= now) window = { count: 0, startMs: now };
    window.count++;
    this.windows.delete(key); // re-inserted last: a Map iterates oldest first
    this.windows.set(key, window);
    if (this.windows.size > RATE_LIMIT_MAX_KEYS) this.windows.delete(this.windows.keys().next().value!);
    callback(null, { current: window.count, ttl: window.startMs + timeWindow - now });
  }

  child(_options: ChildOptions): FastifyRateLimitStore {
    return new WindowCounters();
  }
}

/**
 * PostgreSQL mode (issue 26): the same fixed windows, counted in the database by one upsert per
 * counted request (http/rate-limit-windows.ts), so every instance draws on one budget. A group's
 * routes share the scope `group:<id>`; any other route counts under `route:<method> <url>`.
 */
class SharedWindowCounters implements FastifyRateLimitStore {
  constructor(
    private readonly ctx: AppContext,
    private readonly scope = 'route:',
  ) {}

  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
    const now = new Date();
    countInWindow(this.ctx.db, windowKey(this.scope, key), timeWindow, now).then(
      ({ count, endsAt }) => callback(null, { current: count, ttl: Math.max(0, endsAt.getTime() - now.getTime()) }),
      (error: Error) => callback(error),
    );
  }

  child(options: ChildOptions): FastifyRateLimitStore {
    const { groupId, routeInfo } = options as unknown as { groupId?: unknown; routeInfo?: { method?: unknown; url?: unknown } };
    const scope = typeof groupId === 'string' ? `group:${groupId}` : `route:${String(routeInfo?.method ?? '')} ${String(routeInfo?.url ?? '')}`;
    return new SharedWindowCounters(this.ctx, scope);
  }
}

const storeClasses = new WeakMap<AppContext, FastifyRateLimitStoreCtor>();

/**
 * The store class for one app: a route whose limit has a `groupId` gets that group's counters,
 * the same object in every scope; any other route gets counters of its own.
 */
function storeFor(ctx: AppContext): FastifyRateLimitStoreCtor {
  const known = storeClasses.get(ctx);
  if (known) return known;
  if (engineOf(ctx.db) === 'postgres') {
    const shared = class extends SharedWindowCounters {
      constructor() {
        super(ctx);
      }
    };
    storeClasses.set(ctx, shared);
    return shared;
  }
  const groups = new Map<string, WindowCounters>();
  const ctor = class extends WindowCounters {
    override child(options: ChildOptions): FastifyRateLimitStore {
      // The library passes the route's merged limit options (typed as its route options).
      const { groupId } = options as unknown as { groupId?: unknown };
      if (typeof groupId !== 'string') return new WindowCounters();
      let counters = groups.get(groupId);
      if (!counters) groups.set(groupId, (counters = new WindowCounters()));
      return counters;
    }
  };
  storeClasses.set(ctx, ctor);
  return ctor;
}

/**
 * Registers the limiter in the caller's scope; routes opt in with `config: { rateLimit }`. A scope
 * that authenticates in `onRequest` counts in `preHandler`, so refused strangers spend nothing.
 */
export async function registerRateLimit(app: FastifyInstance, hook: 'onRequest' | 'preHandler' = 'onRequest'): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    hook,
    store: storeFor(app.ctx),
    errorResponseBuilder: (_request, context) => tooManyRequests(context.ttl / 1000),
  });
}
