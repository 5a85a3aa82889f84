/**
 * Audit rows written behind a hot path (decision 0411): a protocol listener that audits every
 * request (RADIUS: `radius.accepted` and `radius.rejected` per Access-Request) adds its rows here
 * and they reach `audit_log` in one multi-row INSERT every FLUSH_MS, not one INSERT per request.
 * On the RADIUS PAP path one INSERT of its own (drizzle building the statement, better-sqlite3
 * preparing it, SQLite's commit and five index updates) was about half of the main thread's time
 * per authentication.
 *
 * Only for rows that describe no change of their own (a sign-in attempt, not an admin's edit):
 * a change's audit row stays in the change's transaction (record.ts). Each row takes its time, id
 * and address when it is added, so the log reads in the order things happened. `close()` writes
 * what is left (the listener's stop, before the store closes); a failed write is logged and its
 * rows kept for the next one, up to MAX_PENDING rows (then the oldest are dropped, and logged).
 * The timer is made once in the constructor's async context, so a flush never runs inside a
 * transaction some request had open when it added a row. A full write's worth of rows
 * (ROWS_PER_INSERT) is written at the next turn of the loop without waiting for the timer, in that
 * same context: under a flood (RADIUS PAP at 4,000/s) a row then lives ~25 ms, not ~100 ms on
 * average, and dies young; rows kept past a scavenge of V8's 1 MiB young generation were copied,
 * then promoted, and with the duplicate cache made scavenges copy ~0.5 MB each (decision 0413).
 *
 * The rows waiting go in ROWS_PER_INSERT at a time, and the event loop is yielded between two
 * such writes: with its five index updates a row costs ~9 µs on better-sqlite3 (measured: 100 rows
 * 0.8 ms, 800 rows 7.3 ms, in one transaction), so 0.2 s of PAP at 4,000/s written in one go
 * held the loop ~7 ms. On SQLite each write is one INSERT prepared
 * once on better-sqlite3, run per row in one native transaction (as the refresh grant's
 * statements, oauth/token/refresh-queries.ts): drizzle building a 500-row INSERT cost as much
 * again as SQLite running it. On PostgreSQL, one drizzle INSERT of the rows: one round trip.
 */
import { AsyncResource } from 'node:async_hooks';
import type { Db } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { auditLog } from '../db/schema.js';
import { engineOf, exec, sqliteNow } from '../db/store.js';
import { auditRow, type AuditEntry } from './record.js';

export const FLUSH_MS = 200;
/** Rows per write: about 1 ms of SQLite's time, then the event loop's turn. */
export const ROWS_PER_INSERT = 100;
export const MAX_PENDING = 50_000;

type Row = typeof auditLog.$inferInsert;

/** SQLite: every row in one native transaction, through a statement prepared once. */
const sqliteInsert = preparedPerDb((db) => {
  const insert = db.$client.prepare<[string, number, string, string, string | null, string | null, string, string | null]>(
    'INSERT INTO audit_log (id, at, actor, action, application_id, target, details, ip) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  return db.$client.transaction((rows: Row[]) => {
    for (const r of rows) insert.run(r.id, r.at.getTime(), r.actor, r.action, r.applicationId ?? null, r.target ?? null, JSON.stringify(r.details ?? {}), r.ip ?? null);
  });
});

export interface WriteBehindLog {
  error(details: Record<string, unknown>, message: string): void;
}

export class AuditWriteBehind {
  private pending: Row[] = [];
  private writing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private soon = false;
  /** A flush in the constructor's async context (never a request's transaction), for setImmediate. */
  private readonly flushSoon: () => void;

  constructor(private readonly db: Db, private readonly log: WriteBehindLog, flushMs = FLUSH_MS) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
    this.flushSoon = AsyncResource.bind(() => {
      this.soon = false;
      void this.flush();
    });
  }

  /** Queues one row (never a secret in `details`, as for recordAudit). */
  add(at: Date, entry: AuditEntry): void {
    this.pending.push(auditRow(at, entry));
    if (this.closed) void this.flush();
    else if (this.pending.length >= ROWS_PER_INSERT && !this.soon) {
      this.soon = true;
      setImmediate(this.flushSoon);
    }
  }

  /** Writes every queued row; resolves once they are in (or the write failed and was logged). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    if (!this.pending.length) return;
    const rows = this.pending;
    this.pending = [];
    this.writing = this.write(rows).finally(() => (this.writing = undefined));
    await this.writing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(rows: Row[]): Promise<void> {
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
      if (i > 0) await new Promise((resolve) => setImmediate(resolve));
      const chunk = rows.slice(i, i + ROWS_PER_INSERT);
      try {
        if (engineOf(this.db) === 'sqlite') {
          const insert = sqliteInsert(this.db);
          await sqliteNow(() => insert(chunk));
        } else {
          await exec(this.db.insert(auditLog).values(chunk));
        }
      } catch (error) {
        const left = rows.slice(i);
        this.pending = [...left, ...this.pending];
        const over = this.pending.length - MAX_PENDING;
        if (over > 0) this.pending.splice(0, over);
        this.log.error({ err: error, rows: left.length, dropped: Math.max(0, over) }, 'Writing audit rows failed; kept for the next write');
        return;
      }
    }
  }
}
