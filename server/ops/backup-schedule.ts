/**
 * What the scheduled backup last did and when it runs next, kept in memory by the ops plugin for
 * `GET /api/admin/backups/status` (a restart starts the interval over, so "next" is this
 * process's).
 */
export interface BackupSchedule {
  running: boolean;
  nextRunAt: Date | undefined;
  lastRun: { at: Date; ok: boolean; error?: string } | undefined;
}

export const idleSchedule = (): BackupSchedule => ({ running: false, nextRunAt: undefined, lastRun: undefined });
