/**
 * The event loop before background work: on Linux, the threads of libuv's pool (where argon2
 * hashes and RS256 signatures run) get a lower scheduling priority, 10 nicer than the main thread.
 * When hashing fills the cores, the event loop then gets a core as soon as it has work instead of
 * queueing behind the hashes (issue 9: never blocked > 20 ms during sign-ins); the hashes still
 * have every core the event loop leaves idle.
 *
 * Only the pool's threads: V8's helper threads (parallel scavenges, concurrent marking and
 * compilation) stay at the main thread's priority, because the main thread waits for them. Niced
 * like the pool, a helper the main thread was joining in a scavenge queued 5 ms behind the hashes
 * for a core while the event loop stood still (seen with `perf sched`; loop delay maxima of
 * 25-40 ms in one sign-in run out of four or five).
 *
 * The pool's threads are found by asking them: every asynchronous fs call runs on one of them,
 * and `/proc/thread-self` names the thread that reads it. Elsewhere, or when the system refuses,
 * nothing changes: the priority is an optimisation.
 */
import { readlink } from 'node:fs/promises';
import { setPriority } from 'node:os';
import { backgroundNice } from '../util/background-nice.js';

/** libuv's default pool size, and its cap (UV_THREADPOOL_SIZE). */
const DEFAULT_POOL_SIZE = 4;
const MAX_POOL_SIZE = 1024;

/** Rounds of concurrent look-ups before settling for the threads seen (4 rounds is typical). */
const MAX_ROUNDS = 50;

/** How many threads libuv's pool has, read from UV_THREADPOOL_SIZE as libuv reads it (atoi, unsigned). */
export function threadPoolSize(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_POOL_SIZE;
  const size = Number.parseInt(raw, 10) || 0;
  if (size === 0) return 1;
  return size < 0 ? MAX_POOL_SIZE : Math.min(size, MAX_POOL_SIZE);
}

/**
 * The thread ids of libuv's pool. Look-ups are sent in batches, several per thread, until every
 * thread has answered one; a thread that never does (the pool busy elsewhere) is left out.
 */
export async function threadPoolIds(size = threadPoolSize(process.env.UV_THREADPOOL_SIZE)): Promise<Set<number>> {
  const seen = new Set<number>();
  for (let round = 0; round < MAX_ROUNDS && seen.size < size; round++) {
    const links = await Promise.all(Array.from({ length: size * 4 }, () => readlink('/proc/thread-self')));
    for (const link of links) seen.add(Number(link.slice(link.lastIndexOf('/') + 1)));
  }
  seen.delete(process.pid);
  return seen;
}

/** Lowers the priority of libuv's pool threads. */
export async function deprioritiseThreadPool(): Promise<void> {
  if (process.platform !== 'linux') return;
  try {
    const nice = backgroundNice();
    for (const tid of await threadPoolIds()) {
      try {
        setPriority(tid, nice); // per thread on Linux (setpriority on a thread id)
      } catch {
        // refused for this one: the others still get theirs
      }
    }
  } catch {
    // no /proc: the priority is an optimisation
  }
}
