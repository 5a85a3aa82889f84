/**
 * Per-IP rate limits on sign-in and sign-up (DESIGN §5), shared by the JSON endpoints and the
 * hosted forms. Answers are 429 `rate_limited` with `Retry-After`. The limits can be raised with
 * `GATEHOUSE_SIGN_IN_RATE_LIMIT` / `GATEHOUSE_SIGN_UP_RATE_LIMIT` (requests per minute per IP).
 */
import type { FastifyInstance } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Config } from '../config.js';
import { tooManyRequests } from '../http/problem.js';

export const DEFAULT_SIGN_IN_PER_MINUTE = 30;
export const DEFAULT_SIGN_UP_PER_MINUTE = 10;
export const DEFAULT_PASSWORD_RESET_PER_MINUTE = 5;

function perMinute(config: Config, name: string, fallback: number): number {
  const raw = config.env[name];
  return raw && /^\d+$/.test(raw) && Number(raw) > 0 ? Number(raw) : fallback;
}

export function authRateLimits(config: Config) {
  return {
    signIn: { max: perMinute(config, 'GATEHOUSE_SIGN_IN_RATE_LIMIT', DEFAULT_SIGN_IN_PER_MINUTE), timeWindow: 60_000 },
    signUp: { max: perMinute(config, 'GATEHOUSE_SIGN_UP_RATE_LIMIT', DEFAULT_SIGN_UP_PER_MINUTE), timeWindow: 60_000 },
    /** Asking for reset (and verification) e-mails. */
    passwordReset: { max: perMinute(config, 'GATEHOUSE_PASSWORD_RESET_RATE_LIMIT', DEFAULT_PASSWORD_RESET_PER_MINUTE), timeWindow: 60_000 },
  };
}

/** Registers the limiter in the caller's scope; routes opt in with `config: { rateLimit }`. */
export async function registerRateLimit(app: FastifyInstance): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_request, context) => tooManyRequests(context.ttl / 1000),
  });
}
