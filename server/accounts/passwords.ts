/**
 * Password hashing (DESIGN §5): argon2id with the OWASP parameters (19 MiB, t=2, p=1), stored as
 * standard PHC strings. @node-rs/argon2 (prebuilt Rust binding) hashes on the libuv thread pool,
 * so hashing never blocks the event loop, and at these parameters it takes half the CPU of the
 * `argon2` package (19 vs 39 ms per verify here) — the sign-in benchmark's ceiling. Hashes the
 * previous library wrote verify unchanged (same PHC format).
 */
import { type Algorithm, hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { channel } from 'node:diagnostics_channel';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { limitConcurrency } from '../util/concurrency.js';
import { hashStarted } from '../util/hash-pressure.js';
import { validationFailed } from '../http/problem.js';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;

/** `Algorithm.Argon2id` is an ambient const enum (2), which isolated-module builds cannot import. */
const ARGON2ID = 2 as Algorithm;

/** OWASP's argon2id parameters: 19 MiB, two passes. Every hash the server makes uses them. */
export const PASSWORD_HASH_COST: HashCost = { memoryCost: 19456, timeCost: 2 };

export interface HashCost {
  /** KiB. */
  memoryCost: number;
  timeCost: number;
}

let options = { algorithm: ARGON2ID, ...PASSWORD_HASH_COST, parallelism: 1 };

/**
 * Sets the cost of new hashes for this process. Only tests whose subject is not hashing call it
 * (test/helpers/app.ts: a few hundred sign-ups at 19 MiB each were a large share of the suite's
 * time, issue 45); nothing in the server does, and a hash carries its parameters, so verifying is
 * unaffected.
 */
export function useHashCost(cost: HashCost): void {
  if (cost.memoryCost === options.memoryCost && cost.timeCost === options.timeCost) return;
  options = { ...options, ...cost };
  dummyHash = undefined;
}

/**
 * At most one hash per core at a time (libuv's pool has 4 threads). Hashing is pure CPU, so more
 * at once is no faster; it only makes the event loop wait longer for a core (issue 9: never
 * blocked > 20 ms during sign-ins), keeps pool threads from token signing and file work, and
 * holds 19 MiB per hash in flight.
 */
const limited = limitConcurrency(availableParallelism());

/**
 * Each hash's times (performance.now(): asked, started on the pool, its result back on the event
 * loop), for a diagnostic subscriber (the bench's sign-in trace, bench/_trace.mjs); no secret in it.
 */
const hashTimes = channel('gatehouse:password-hash');

/** A hash on the pool, recorded while it runs (util/hash-pressure.ts: a flood leaves it the CPU while it runs). */
const hashing = <T>(task: () => Promise<T>): Promise<T> => {
  const asked = performance.now();
  return limited(async () => {
    const started = performance.now();
    if (hashTimes.hasSubscribers) hashTimes.publish({ phase: 'start', asked, started });
    const done = hashStarted();
    try {
      return await task();
    } finally {
      done();
      if (hashTimes.hasSubscribers) hashTimes.publish({ phase: 'end', asked, started, ended: performance.now() });
    }
  });
};

export function checkPasswordLength(password: string, path = 'body.password'): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
    throw validationFailed(
      [{ path, message: `must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters long` }],
      'The password is too short or too long.',
    );
  }
}

export async function hashPassword(password: string): Promise<string> {
  return hashing(() => argon2Hash(password, options));
}

let dummyHash: Promise<string> | undefined;

/**
 * Checks a password against a stored hash. With no hash (unknown e-mail, or a person without a
 * password) it verifies against a dummy hash anyway, so both failures take the same time.
 */
export async function verifyPassword(storedHash: string | null | undefined, password: string): Promise<boolean> {
  if (!storedHash) {
    dummyHash ??= hashPassword('gatehouse-dummy-password');
    const hash = await dummyHash;
    await hashing(() => argon2Verify(hash, password)).catch(() => false);
    return false;
  }
  try {
    return await hashing(() => argon2Verify(storedHash, password));
  } catch {
    return false;
  }
}
