/**
 * Which password hashes are running on libuv's pool right now, and for how long: what a listener
 * that can keep the event loop busy on its own (RADIUS under a flood, decision 0414) reads to
 * leave the CPU to a hash that is overdue.
 *
 * The pool runs 10 nicer than the event loop (cli/thread-priority.ts, issue 9: the loop is never
 * held behind hashes during sign-in storms). That stays. But when a flood keeps the loop busy all
 * the time and the other core is taken too (another process), a niced hash gets what nice-0 work
 * leaves, and a sign-in waits for it. A hash that has run past HASH_OVERDUE_MS (one argon2id
 * verification with the OWASP parameters takes ~19 ms of CPU here) is the sign that it is starved;
 * the flood's listener then spaces its work so the hash gets a core. The pool's priority cannot
 * simply be raised instead: an unprivileged process may not lower a nice value (RLIMIT_NICE 0).
 */
import { performance } from 'node:perf_hooks';

/** A hash running longer than this is taken as starved of CPU (≈ 1.5 × its own CPU time). */
export const HASH_OVERDUE_MS = 30;

const running = new Set<{ at: number }>();

/** Marks a hash as started on the pool; call the returned function when it ends (either way). */
export function hashStarted(): () => void {
  const entry = { at: performance.now() };
  running.add(entry);
  return () => void running.delete(entry);
}

/** Whether a hash has been running longer than `overdueMs`. */
export function hashOverdue(overdueMs = HASH_OVERDUE_MS, now = performance.now()): boolean {
  for (const entry of running) if (now - entry.at > overdueMs) return true;
  return false;
}
