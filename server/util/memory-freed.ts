/**
 * A hint from work that has just let go of a large amount of memory (a worker thread that ended:
 * its isolate and its malloc arena) to the idle reclaim (ops/idle-memory.ts), which otherwise runs
 * only when the resident set has grown since its last run: the next quiet moment then gives the
 * freed pages back to the system even though the process shrank (issue 45). Shared state of one
 * process, in the shared layer so a worker's owner needs no import from ops/.
 */
let freed = false;

/** Says that a large amount of memory was just freed. */
export function memoryFreed(): void {
  freed = true;
}

/** Whether memory was freed since the last call (and forgets it). */
export function takeMemoryFreed(): boolean {
  const was = freed;
  freed = false;
  return was;
}
