/**
 * Letting go of a source's people and groups when the source is deleted (spec: "Deleting a source
 * disables its people"): in batches of 200, each person is disabled (sessions ended, with
 * back-channel logout) and becomes Gatehouse's own, without a password (an administrator may
 * enable them and send a password reset); the source's groups become local groups with their
 * members. Resumable: a batch is one transaction, and a second delete picks up where one stopped.
 */
import { and, eq, inArray } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { directoryEntries, groups, people, type DirectorySource } from '../db/schema.js';
import { exec, many, transaction } from '../db/store.js';
import { disablePeople } from './writes.js';

const BATCH = 200;

export async function releaseSource(ctx: AppContext, source: DirectorySource, _actor: string): Promise<{ people: number; disabled: number; groups: number }> {
  let released = 0;
  let disabled = 0;
  for (;;) {
    const now = ctx.clock.now();
    const done = await transaction(ctx.db, async (tx) => {
      const batch = await many(tx.select({ id: people.id, status: people.status }).from(people).where(eq(people.sourceId, source.id)).limit(BATCH));
      if (!batch.length) return true;
      disabled += await disablePeople(ctx, tx, now, source, batch.filter((p) => p.status === 'active').map((p) => ({ personId: p.id, reason: 'source_deleted' })));
      const ids = batch.map((p) => p.id);
      await exec(tx.update(people).set({ sourceId: null, sourceDn: null, updatedAt: now }).where(inArray(people.id, ids)));
      await exec(tx.delete(directoryEntries).where(and(eq(directoryEntries.kind, 'person'), inArray(directoryEntries.targetId, ids))));
      released += ids.length;
      return batch.length < BATCH;
    });
    ctx.wakeWebhooks();
    if (done) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  const groupCount = await transaction(ctx.db, async (tx) => {
    const rows = await many(tx.update(groups).set({ sourceId: null, sourceDn: null }).where(eq(groups.sourceId, source.id)).returning({ id: groups.id }));
    await exec(tx.delete(directoryEntries).where(eq(directoryEntries.sourceId, source.id)));
    return rows.length;
  });
  return { people: released, disabled, groups: groupCount };
}
