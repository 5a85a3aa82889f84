/**
 * Backups taken by the running server: on demand (`POST /api/admin/backups`) and every
 * GATEHOUSE_BACKUP_INTERVAL seconds. Both need a configured passphrase or key file: a backup
 * holds the signing keys and is never written unencrypted by the server (only
 * `gatehouse backup --unencrypted` does that, on purpose). Without one the schedule stays off
 * and says so (logs, `gatehouse status`, `GET /api/admin/operations`).
 *
 * What the schedule did last is kept in memory for `GET /api/admin/backups/status` (with when it
 * runs next: a restart starts the interval over) and in `meta`, so `gatehouse status` (another
 * process) reports the server's own view, not its own environment's.
 *
 * In PostgreSQL mode (issue 26) the server takes no backups: the database is the operator's to
 * back up with pg_dump. The schedule stays off and says why; taking or downloading one answers
 * 409 `backups_use_pg_dump`.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import { readMeta, writeMeta } from '../db/meta.js';
import type { Db } from '../db/client.js';
import { conflict } from '../http/problem.js';
import { engineOf } from '../db/store.js';
import { backupIntoStore, configuredSecret, encryptionSetting, ENCRYPTION_REQUIRED, pruneBackups, type BackupRecord } from './backup.js';

const STATE_KEY = 'backup_schedule';

/** The schedule as this process runs it (`GET /api/admin/backups/status`). */
export interface BackupSchedule {
  running: boolean;
  nextRunAt: Date | undefined;
  lastRun: { at: Date; ok: boolean; error?: string } | undefined;
}

export const idleSchedule = (): BackupSchedule => ({ running: false, nextRunAt: undefined, lastRun: undefined });

export interface ScheduleRecord {
  intervalSeconds: number;
  /** How the server encrypts backups: null when nothing is configured (the schedule is then off). */
  encryption: 'passphrase' | 'key-file' | null;
  /** When the server recorded this (its start). */
  recordedAt: string;
  lastRun: { at: string; backupId: string | null; error: string | null } | null;
}

export async function readScheduleRecord(db: Db): Promise<ScheduleRecord | undefined> {
  return readMeta<ScheduleRecord>(db, STATE_KEY);
}

/** Why scheduled backups do not run, or null when they do. */
export function scheduleBlocked(record: Pick<ScheduleRecord, 'intervalSeconds' | 'encryption'>): string | null {
  if (record.intervalSeconds === 0) return 'GATEHOUSE_BACKUP_INTERVAL is 0.';
  if (record.encryption === null) return `${ENCRYPTION_REQUIRED} Until then no scheduled backup is taken.`;
  return null;
}

/** Why the server keeps no backups of a PostgreSQL database (the 409's detail and the schedule's blocked reason). */
export const PG_BACKUPS_BY_OPERATOR =
  'In PostgreSQL mode the database is backed up with pg_dump --format=custom and restored with pg_restore; the server takes no backups of its own.';

/** The 409 of every backup action in PostgreSQL mode. */
export const backupsUsePgDump = () => conflict('backups_use_pg_dump', PG_BACKUPS_BY_OPERATOR);

/** Takes a backup of the running database into `<data>/backups/` (encrypted, or a 409). */
export async function backupNow(ctx: AppContext): Promise<BackupRecord> {
  if (engineOf(ctx.db) === 'postgres') throw backupsUsePgDump();
  if (ctx.config.dataDir === ':memory:') throw conflict('backups_unavailable', 'This server has no data directory to keep backups in.');
  const secret = configuredSecret(ctx.config);
  if (!secret) throw conflict('backup_encryption_required', ENCRYPTION_REQUIRED);
  return backupIntoStore({ sqlite: ctx.db.$client, dataDir: ctx.config.dataDir, now: ctx.clock.now(), secret, paced: true });
}

/** Why the server takes no scheduled backups under this configuration, or null when it does. */
export function blockedReason(ctx: Pick<AppContext, 'config' | 'db'>): string | null {
  const { config } = ctx;
  if (engineOf(ctx.db) === 'postgres') return PG_BACKUPS_BY_OPERATOR;
  if (config.dataDir === ':memory:') return 'This server has no data directory to keep backups in.';
  return scheduleBlocked({ intervalSeconds: config.backupInterval, encryption: encryptionSetting(config) });
}

/** The schedule: records its settings at start, then backs up every interval (one at a time). */
export async function startBackupSchedule(ctx: AppContext, log: FastifyBaseLogger, schedule: BackupSchedule): Promise<() => Promise<void>> {
  const { backupInterval, backupKeep, dataDir } = ctx.config;
  const none = async () => {};
  if (dataDir === ':memory:') return none;
  if (engineOf(ctx.db) === 'postgres') {
    if (backupInterval > 0) log.info(`scheduled backups are off: ${PG_BACKUPS_BY_OPERATOR}`);
    return none;
  }
  const record: ScheduleRecord = {
    intervalSeconds: backupInterval,
    encryption: encryptionSetting(ctx.config),
    recordedAt: ctx.clock.now().toISOString(),
    lastRun: (await readScheduleRecord(ctx.db))?.lastRun ?? null,
  };
  await writeMeta(ctx.db, STATE_KEY, record, ctx.clock.now());
  const blocked = scheduleBlocked(record);
  if (blocked) {
    if (backupInterval > 0) log.warn(`scheduled backups are off: ${blocked}`);
    return none;
  }
  let current: Promise<void> | undefined;
  const every = backupInterval * 1000;
  schedule.running = true;
  schedule.nextRunAt = new Date(ctx.clock.now().getTime() + every);
  const timer = setInterval(() => {
    schedule.nextRunAt = new Date(ctx.clock.now().getTime() + every);
    if (current) return;
    const now = ctx.clock.now();
    const at = now.toISOString();
    current = backupNow(ctx)
      .then((backup) => {
        pruneBackups(dataDir, backupKeep);
        record.lastRun = { at, backupId: backup.id, error: null };
        schedule.lastRun = { at: now, ok: true };
        log.info({ backup: backup.id, size: backup.size }, 'scheduled backup written');
      })
      .catch((error: unknown) => {
        const message = (error as Error)?.message ?? String(error);
        record.lastRun = { at, backupId: null, error: message };
        schedule.lastRun = { at: now, ok: false, error: message };
        log.error({ err: error }, 'scheduled backup failed');
      })
      .finally(async () => {
        current = undefined;
        await writeMeta(ctx.db, STATE_KEY, record, ctx.clock.now());
      });
  }, every);
  timer.unref();
  // Stopping waits for a backup under way: the database closes after.
  return async () => {
    clearInterval(timer);
    schedule.running = false;
    await current;
  };
}
