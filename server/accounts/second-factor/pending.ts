/**
 * Sign-ins waiting for their second step (spec second-factor.md, "Sign-in"), and WebAuthn
 * challenges waiting for their answer. Both live in memory, like authorization codes
 * (oauth/authorize/code.ts): one process serves a data directory, each entry lives minutes, and a
 * restart only means signing in again. Nothing here grows without bound: entries expire and at
 * most MAX_ENTRIES are kept, the oldest forgotten first.
 *
 * A pending sign-in is found by the SHA-256 of the random token in its `gatehouse_mfa` cookie
 * (HttpOnly, `__Host-` under HTTPS, 5 minutes) and is bound to the person and to the device: the
 * browser's User-Agent must be the one that started it. It allows 5 wrong second steps; then it is
 * void (the person's own back-off, back-off.ts, also counts them across pending sign-ins).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { Config } from '../../config.js';
import type { AuthMethod, Person } from '../../db/schema.js';
import { unauthorized } from '../../http/problem.js';
import { randomToken, sha256 } from '../../util/crypto.js';

export const PENDING_TTL_MS = 5 * 60_000;
export const PENDING_MAX_FAILURES = 5;
export const CHALLENGE_TTL_MS = 5 * 60_000;
const MAX_ENTRIES = 10_000;
export const MFA_COOKIE = 'gatehouse_mfa';

/**
 * What to do once the second step is done, besides going to `next` (hosted flows only). Gets the
 * finished sign-in (sign-in.ts `SignedIn`, spelled out here so the two modules do not import
 * each other) and returns where to go.
 */
export type Continuation = (
  request: FastifyRequest,
  reply: FastifyReply,
  signedIn: { person: Person; sessionId: string; token: string | undefined },
) => string;

export interface PendingSignIn {
  personId: string;
  applicationId: string | undefined;
  /** The first factor's `amr` (`pwd`, `fed`), or the session's own for a step-up. */
  firstFactor: AuthMethod[];
  /** A step-up raises this existing session to multi-factor instead of starting one. */
  stepUpSessionId: string | undefined;
  /** Where the hosted flow goes once done. */
  next: string;
  after: Continuation | undefined;
  device: string;
  expiresAt: number;
  failures: number;
  /** Challenge of the last WebAuthn options handed out for this sign-in (single use). */
  challenge: string | undefined;
}

/** Entries by key, oldest first (a Map keeps insertion order), each with its expiry. */
class ExpiringMap<V extends { expiresAt: number }> {
  private readonly entries = new Map<string, V>();

  set(key: string, value: V, now: number): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    for (const [k, v] of this.entries) {
      if (this.entries.size <= MAX_ENTRIES && v.expiresAt > now) break;
      this.entries.delete(k);
    }
  }

  get(key: string, now: number): V | undefined {
    const value = this.entries.get(key);
    if (value && value.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return value;
  }

  delete(key: string): boolean {
    return this.entries.delete(key);
  }
}

const deviceOf = (request: FastifyRequest) => sha256(String(request.headers['user-agent'] ?? ''));

export class PendingSignIns {
  private readonly pending = new ExpiringMap<PendingSignIn>();
  private readonly challenges = new ExpiringMap<{ expiresAt: number }>();

  /** Starts a pending sign-in for this browser; returns the cookie's token. */
  start(request: FastifyRequest, now: number, entry: Omit<PendingSignIn, 'device' | 'expiresAt' | 'failures' | 'challenge'>): string {
    const token = randomToken();
    this.pending.set(sha256(token), { ...entry, device: deviceOf(request), expiresAt: now + PENDING_TTL_MS, failures: 0, challenge: undefined }, now);
    return token;
  }

  /** The pending sign-in of the request's cookie, if live and started on this device. */
  find(config: Config, request: FastifyRequest, now: number): { key: string; entry: PendingSignIn } | undefined {
    const token = request.cookies[mfaCookieName(config)];
    if (!token || token.length > 100) return undefined;
    const key = sha256(token);
    const entry = this.pending.get(key, now);
    if (!entry || entry.device !== deviceOf(request)) return undefined;
    return { key, entry };
  }

  end(key: string): void {
    this.pending.delete(key);
  }

  /** Remembers a WebAuthn challenge handed out without a pending sign-in (passkey-first sign-in). */
  rememberChallenge(challenge: string, now: number): void {
    this.challenges.set(challenge, { expiresAt: now + CHALLENGE_TTL_MS }, now);
  }

  /** Spends a remembered challenge: true once per challenge, within its lifetime. */
  takeChallenge(challenge: string, now: number): boolean {
    return this.challenges.get(challenge, now) !== undefined && this.challenges.delete(challenge);
  }
}

const stores = new WeakMap<AppContext, PendingSignIns>();

/** The pending sign-ins of one app (tests build many apps in one process). */
export function pendingSignIns(ctx: AppContext): PendingSignIns {
  let store = stores.get(ctx);
  if (!store) stores.set(ctx, (store = new PendingSignIns()));
  return store;
}

export function mfaCookieName(config: Config): string {
  return config.issuer.startsWith('https:') ? `__Host-${MFA_COOKIE}` : MFA_COOKIE;
}

const secure = (config: Config) => config.issuer.startsWith('https:');

export function setMfaCookie(reply: FastifyReply, config: Config, token: string): void {
  reply.setCookie(mfaCookieName(config), token, { path: '/', httpOnly: true, sameSite: 'lax', secure: secure(config), maxAge: PENDING_TTL_MS / 1000 });
}

export function clearMfaCookie(reply: FastifyReply, config: Config): void {
  reply.clearCookie(mfaCookieName(config), { path: '/', httpOnly: true, sameSite: 'lax', secure: secure(config) });
}

export const secondFactorExpired = () =>
  unauthorized('The sign-in waiting for a second factor has expired or was not started on this device; sign in again.', 'second_factor_expired', 'Cookie');

export const SECOND_FACTOR_PAGE = '/sign-in/second-factor';
export const ENROL_PAGE = '/sign-in/enrol';

/** A hosted flow whose first factor was right: on to the second step (or to enrolment). */
export function redirectToSecondStep(reply: FastifyReply, config: Config, outcome: { pendingToken: string; secondFactor: { methods: unknown[] } }) {
  setMfaCookie(reply, config, outcome.pendingToken);
  return reply.header('cache-control', 'no-store').redirect(outcome.secondFactor.methods.length ? SECOND_FACTOR_PAGE : ENROL_PAGE, 303);
}
