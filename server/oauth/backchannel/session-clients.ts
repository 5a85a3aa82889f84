/**
 * Which applications received tokens from which session (Back-Channel Logout 1.0 §2.7: the
 * OP tells the RPs "that the End-User is logged in to"). Recorded when tokens are issued from a
 * session (a code exchange, a device grant); read when the session ends (outbox.ts).
 * Statements are prepared once per store handle: the code exchange is a hot path, and after the
 * first exchange of a session for an application this is one indexed read.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { sessionClients } from '../../db/schema.js';
import { preparedPerDb } from '../../db/prepared.js';
import { exec, one } from '../../db/store.js';

const statements = preparedPerDb((db) => ({
  known: db
    .select({ at: sessionClients.firstIssuedAt })
    .from(sessionClients)
    .where(and(eq(sessionClients.sessionId, sql.placeholder('sessionId')), eq(sessionClients.applicationId, sql.placeholder('applicationId'))))
    .prepare(),
  add: db
    .insert(sessionClients)
    .values({ sessionId: sql.placeholder('sessionId'), applicationId: sql.placeholder('applicationId'), firstIssuedAt: sql.placeholder('now') })
    .onConflictDoNothing()
    .prepare(),
}));

/** Notes that `applicationId` received tokens from `sessionId` (also inside a transaction opened on `db`). */
export async function recordSessionClient(db: Db, sessionId: string, applicationId: string, now: Date): Promise<void> {
  const st = statements(db);
  if (await one(st.known, { sessionId, applicationId })) return;
  await exec(st.add, { sessionId, applicationId, now });
}
