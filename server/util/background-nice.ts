/**
 * The scheduling priority of background threads (libuv's pool, the checkpoint and password-strength
 * workers): 10 nicer than the main thread, so the event loop wins a core when it has work
 * (cli/thread-priority.ts says why and which threads).
 */
import { getPriority } from 'node:os';

/** How much nicer than the main thread the background threads run (19 is the nicest there is). */
const BACKGROUND_NICE_STEP = 10;

/**
 * The nice value background threads get: the main thread's plus the step. Absolute, so applying it
 * twice changes nothing; a thread started after ready (the WAL checkpointer) sets it on itself.
 */
export function backgroundNice(): number {
  return Math.min(19, getPriority(process.pid) + BACKGROUND_NICE_STEP);
}
