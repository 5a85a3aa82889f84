/**
 * What the routes, the scheduler and shutdown need of sync runs without the sync engine (issue
 * 45, docs/decisions/0369-lazy-feature-code.md): a run's record as the admin API shows it, and the
 * runs in this process, by source (sync.ts adds and removes them). The engine itself (sync.ts,
 * writes.ts and what only they use) is loaded through engine.ts when a run starts, a source is
 * tested, deleted or a person linked, or a sign-in looks for a login in a source.
 */
import type { DirectorySyncRun } from '../db/schema.js';

export function runRecord(r: DirectorySyncRun) {
  return {
    id: r.id, sourceId: r.sourceId, state: r.state, full: r.full, trigger: r.trigger, counts: r.counts, conflicts: r.conflicts, skipped: r.skipped,
    error: r.error, startedAt: r.startedAt.toISOString(), finishedAt: r.finishedAt ? r.finishedAt.toISOString() : null,
  };
}

/** Runs in this process, by source: what a second request for the same source gets. */
export const running = new Map<string, Promise<void>>();

/** Resolves when the source's run in this process (if any) has finished (tests, shutdown). */
export async function runFinished(sourceId: string): Promise<void> {
  await running.get(sourceId);
}
