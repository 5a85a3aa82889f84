/**
 * The readers of the metrics' state gauges (metrics/metrics.ts), run only when `/metrics` is
 * scraped. Each is one indexed read or a file's metadata, on either engine:
 * - backlogs: pending outbox rows through their (status, next_attempt_at) index;
 * - live sessions through the (revoked_at, expires_at) index;
 * - database size: SQLite's page count × page size, PostgreSQL's `pg_database_size`;
 * - the sweeper's last pass (meta), the newest backup's header (a handful of files), the signing
 *   key's age (a few rows), the TLS certificates' expiry (read from their files when they change).
 */
import { hasLocalCa } from '../config.js';
import { statSync, readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { engineOf, sqlRows } from '../db/store.js';
import { backchannelLogouts, webhookDeliveries } from '../db/schema.js';
import { readSweeperRecord } from '../data-lifecycle/sweeper.js';
import { countLiveSessions } from '../accounts/session.js';
import { outboxBacklog } from '../webhooks/queries.js';
import { listBackups } from './backup.js';
import { activeKey } from './key-rotation.js';
import { SIGNING_ALGS } from '../oauth/signing-algorithms.js';
import { tlsPaths } from './tls.js';

const seconds = (at: Date | string) => new Date(at).getTime() / 1000;

export function registerStateGauges(ctx: AppContext): void {
  const { db, config, metrics } = ctx;
  const now = () => ctx.clock.now();
  const sqlite = engineOf(db) === 'sqlite';
  const hasDataDir = config.dataDir !== ':memory:';

  metrics.readState('webhookBacklog', () => outboxBacklog(db, webhookDeliveries));
  metrics.readState('backchannelLogoutBacklog', () => outboxBacklog(db, backchannelLogouts));
  metrics.readState('sessionsActive', () => countLiveSessions(db, now()));
  metrics.readState('databaseSize', async () => {
    const query = sqlite
      ? sql`SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()`
      : sql`SELECT pg_database_size(current_database()) AS n`;
    const [row] = await sqlRows<{ n: number | string }>(db, query);
    return row ? Number(row.n) : undefined;
  });
  metrics.readState('sweeperLastRun', async () => {
    const run = (await readSweeperRecord(db)).lastRun;
    return run ? seconds(run.finishedAt) : undefined;
  });
  // PostgreSQL's backups are the operator's pg_dump: nothing to show. Without any backup, 0 ("never").
  metrics.readState('backupLastSuccess', () => {
    if (!sqlite || !hasDataDir) return undefined;
    const newest = listBackups(config.dataDir)[0];
    return newest ? seconds(newest.createdAt) : 0;
  });
  // Every algorithm has its signing key (RS256, ES256, EdDSA); they rotate together, so the oldest
  // of them is what a rotation alarm must watch.
  metrics.readState('signingKeyAge', async () => {
    const at = now();
    const keys = await Promise.all(SIGNING_ALGS.map((alg) => activeKey(db, at, alg)));
    const ages = keys.flatMap((key) => (key ? [Math.max(0, (at.getTime() - key.createdAt.getTime()) / 1000)] : []));
    return ages.length ? Math.max(...ages) : undefined;
  });
  const { tls } = config;
  const served = tls.mode === 'files' ? tls.certFile : hasLocalCa(tls) && hasDataDir ? tlsPaths(config.dataDir).cert : undefined;
  const ca = hasLocalCa(tls) && hasDataDir ? tlsPaths(config.dataDir).ca : undefined;
  metrics.readState('tlsCertificateExpiry', certificateExpiry(served));
  metrics.readState('tlsCaExpiry', certificateExpiry(ca));
}

/** Reads a PEM certificate's expiry (Unix seconds), parsing the file again only when it changed. */
function certificateExpiry(path: string | undefined): () => number | undefined {
  let seen: { mtimeMs: number; size: number; expiry: number } | undefined;
  return () => {
    if (!path) return undefined;
    let stat;
    try {
      stat = statSync(path);
    } catch {
      return undefined;
    }
    if (seen?.mtimeMs !== stat.mtimeMs || seen.size !== stat.size) {
      const expiry = seconds(new X509Certificate(readFileSync(path)).validTo);
      seen = { mtimeMs: stat.mtimeMs, size: stat.size, expiry };
    }
    return seen.expiry;
  };
}
