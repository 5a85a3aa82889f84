/**
 * The event loop before background work: on Linux, every thread of the server process except
 * the main one (libuv's pool, where argon2 hashes and RS256 signatures run, and V8's helper
 * threads) gets a lower scheduling priority (5 nicer than the main thread). When hashing fills the cores, the event
 * loop then gets a core as soon as it has work instead of queueing behind the hashes (issue 9:
 * never blocked > 20 ms during sign-ins); the background work still has every core the event
 * loop leaves idle. Runs once at ready, when libuv's pool threads exist (module loading started
 * them). Elsewhere, or when the system refuses, it does nothing.
 */
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** How much nicer than the main thread the helper threads run (19 is the nicest there is). */
const BACKGROUND_NICE_STEP = 5;

/**
 * The nice value helper threads get: the main thread's plus the step. Absolute, so applying it
 * twice changes nothing; a thread started after ready (the WAL checkpointer) sets it on itself.
 */
export function backgroundNice(): number {
  return Math.min(19, getPriority(process.pid) + BACKGROUND_NICE_STEP);
}

export function deprioritiseHelperThreads(): void {
  if (process.platform !== 'linux') return;
  try {
    const nice = backgroundNice();
    for (const entry of readdirSync('/proc/self/task')) {
      if (Number(entry) === process.pid) continue;
      try {
        setPriority(Number(entry), nice); // per thread on Linux (setpriority on a thread id)
      } catch {
        // a thread that just ended: the others still get theirs
      }
    }
  } catch {
    // no /proc or a system that refuses: the priority is an optimisation
  }
}
