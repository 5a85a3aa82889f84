/**
 * Which password hashes are running on libuv's pool right now: what a listener that can keep the
 * event loop busy on its own (RADIUS under a flood, decisions 0415, 0416) reads to leave the CPU to
 * them, and waits on (afterHashes) to resume once none runs.
 *
 * The pool runs 10 nicer than the event loop (cli/thread-priority.ts, issue 9: the loop is never
 * held behind hashes during sign-in storms). That stays. But a niced thread gets about a tenth of
 * a core beside nice-0 work, so while a flood keeps the loop busy all the time and the other core
 * has work too (the flood's own client, another process), a hash waits on the runqueue and the
 * sign-in with it (the bench's trace, decision 0415: 20-50 ms of runqueue wait in a 19 ms hash).
 * The pool's priority cannot simply be raised instead: an unprivileged process may not lower a
 * nice value (RLIMIT_NICE 0). The scheduler's own figures could tell a starved hash from one
 * running on an idle core, but only after the wait (/proc's run_delay grows when the thread gets
 * the CPU back): too late to act on.
 */

/** How many password hashes are on the pool now. */
let running = 0;
/** Who waits for the pool to have no hash running (afterHashes). */
let waiting: (() => void)[] = [];

/** Marks a hash as started on the pool; call the returned function once when it ends (either way). */
export function hashStarted(): () => void {
  running++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    running--;
    if (running === 0 && waiting.length) {
      const due = waiting;
      waiting = [];
      for (const fn of due) setImmediate(fn);
    }
  };
}

/** Whether a password hash is running on the pool now. */
export function hashRunning(): boolean {
  return running > 0;
}

/** Calls `fn` at the next turn once no password hash runs (at once when none does). */
export function afterHashes(fn: () => void): void {
  if (running === 0) setImmediate(fn);
  else waiting.push(fn);
}
