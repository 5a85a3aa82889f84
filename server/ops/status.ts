/**
 * A snapshot of a data directory read straight from disk, without a running server: what
 * `gatehouse status` prints. Counts come from the trigger-kept `row_counts` (never a count over a
 * table that grows); the sweeper's last pass and the backup schedule are what the server recorded.
 */
import { existsSync, readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import * as schema from '../db/schema.js';
import type { Db } from '../db/client.js';
import { readSweeperRecord, type SweepRun } from '../data-lifecycle/sweeper.js';
import { listBackups } from './backup.js';
import { readScheduleRecord, scheduleBlocked, type ScheduleRecord } from './backup-schedule.js';
import { runningServerPid } from './pid-file.js';
import { DATABASE_FILE } from './restore.js';
import { schemaState, type SchemaState } from './schema-version.js';
import { caStatus, tlsPaths, type CaStatus } from './tls.js';
import { passkeySupport } from '../accounts/second-factor/rp.js';
import { DEFAULTS, defaultIssuer } from '../config.js';
import { readMeta } from '../db/meta.js';
import type { RecordedStatus } from '../plugin-api/registries.js';
import { servedIssuer } from './served-issuer.js';

export interface DataDirStatus {
  dataDir: string;
  serverPid: number | null;
  schema: SchemaState;
  counts: { applications: number; members: number; people: number; signingKeys: number };
  tls: { certificate: string; notAfter: string; caFingerprint: string | null; ca: CaStatus | null } | null;
  lastBackup: { id: string; createdAt: string; size: number; encrypted: boolean } | null;
  /** The backup schedule as the server last recorded it (null: no server of this version has run here). */
  backups: (ScheduleRecord & { blockedReason: string | null }) | null;
  sweeper: { lastRun: SweepRun | null; runs: number; prunedTotal: number };
  /** Big deletes still removing rows. */
  deletions: { kind: string; target: string; requestedAt: string }[];
  /** Pages SQLite keeps free inside the file, and whether the sweeper can hand them back (incremental auto-vacuum). */
  storage: { pages: number; freePages: number; pageSize: number; incrementalVacuum: boolean };
  /** Whether the configured issuer can offer passkeys (WebAuthn needs a host name and HTTPS, or localhost). */
  passkeys: { issuer: string; available: boolean; reason: string | null; message: string | null };
  /**
   * And, by each plugin status's name (plugin-api/registries.ts `RecordedStatus`), what the server
   * last recorded at start (null: no server of this version has run here): `ldap`, the directory.
   */
  [recorded: string]: unknown;
}

export function passkeysFor(issuer: string): DataDirStatus['passkeys'] {
  const support = passkeySupport(issuer);
  return support.available
    ? { issuer, available: true, reason: null, message: null }
    : { issuer, available: false, reason: support.reason, message: support.message };
}

function tableExists(sqlite: Database.Database, table: string): boolean {
  return sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
}

/** A table's row count from `row_counts`, or counted for small tables and databases not yet migrated. */
function count(sqlite: Database.Database, table: string): number {
  if (!tableExists(sqlite, table)) return 0;
  if (tableExists(sqlite, 'row_counts')) {
    const kept = sqlite.prepare('SELECT n FROM row_counts WHERE name = ?').get(table) as { n: number } | undefined;
    if (kept) return kept.n;
  }
  return (sqlite.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
}

/**
 * Reads the status of `dataDir`; undefined when it holds no database. Passkeys are judged by the
 * issuer: `configured` (GATEHOUSE_ISSUER in the environment given) wins, else the one the server
 * recorded when it last started (ops/served-issuer.ts), else the default address.
 */
export async function readStatus(
  dataDir: string,
  extraNames: string[] = [],
  issuer: { configured?: string | undefined; fallback?: string } = {},
  recorded: readonly RecordedStatus[] = [],
): Promise<DataDirStatus | undefined> {
  const file = join(dataDir, DATABASE_FILE);
  if (!existsSync(file)) return undefined;
  // A plain connection: no migrations, only reads (busy_timeout so a running server's writes don't fail us).
  const sqlite = new Database(file, { fileMustExist: true });
  try {
    sqlite.pragma('busy_timeout = 5000');
    const db = drizzle(sqlite, { schema }) as Db;
    const paths = tlsPaths(dataDir);
    let tls: DataDirStatus['tls'] = null;
    if (existsSync(paths.cert)) {
      const cert = new X509Certificate(readFileSync(paths.cert));
      const ca = caStatus(dataDir, extraNames, new Date()) ?? null;
      tls = { certificate: paths.cert, notAfter: new Date(cert.validTo).toISOString(), caFingerprint: ca?.fingerprint ?? null, ca };
    }
    const hasMeta = tableExists(sqlite, 'meta');
    const schedule = hasMeta ? await readScheduleRecord(db) : undefined;
    const sweeper = hasMeta ? await readSweeperRecord(db) : { lastRun: null, runs: 0, prunedTotal: 0 };
    const deletions = tableExists(sqlite, 'purge_jobs')
      ? (sqlite.prepare('SELECT kind, target, requested_at AS at FROM purge_jobs ORDER BY requested_at').all() as { kind: string; target: string; at: number }[]).map(
          (j) => ({ kind: j.kind, target: j.target, requestedAt: new Date(j.at).toISOString() }),
        )
      : [];
    return {
      dataDir,
      serverPid: runningServerPid(dataDir) ?? null,
      schema: schemaState(sqlite),
      counts: {
        applications: count(sqlite, 'applications'),
        members: count(sqlite, 'memberships'),
        people: count(sqlite, 'people'),
        signingKeys: count(sqlite, 'signing_keys'),
      },
      tls,
      lastBackup: listBackups(dataDir)[0] ?? null,
      backups: schedule ? { ...schedule, blockedReason: scheduleBlocked(schedule) } : null,
      sweeper,
      deletions,
      storage: {
        pages: sqlite.pragma('page_count', { simple: true }) as number,
        freePages: sqlite.pragma('freelist_count', { simple: true }) as number,
        pageSize: sqlite.pragma('page_size', { simple: true }) as number,
        incrementalVacuum: sqlite.pragma('auto_vacuum', { simple: true }) === 2,
      },
      passkeys: passkeysFor(
        issuer.configured ?? (hasMeta ? await servedIssuer(db) : undefined) ?? issuer.fallback ?? defaultIssuer(DEFAULTS.host, DEFAULTS.port),
      ),
      ...Object.fromEntries(await Promise.all(recorded.map(async (r) => [r.name, (hasMeta ? await readMeta(db, r.metaKey) : undefined) ?? null]))),
    };
  } finally {
    sqlite.close();
  }
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

function backupLine(s: DataDirStatus): string {
  if (!s.backups) return 'not recorded yet (no server of this version has run here)';
  const encryption = s.backups.encryption ? `encrypted with a ${s.backups.encryption === 'key-file' ? 'key file' : 'passphrase'}` : 'NO passphrase or key file configured';
  const schedule = s.backups.blockedReason
    ? `scheduled backups off: ${s.backups.blockedReason}`
    : `every ${s.backups.intervalSeconds} s`;
  const last = s.backups.lastRun
    ? `; last scheduled ${s.backups.lastRun.at}${s.backups.lastRun.error ? ` failed: ${s.backups.lastRun.error}` : ''}`
    : '';
  return `${encryption}; ${schedule}${last}`;
}

function sweeperLine(s: DataDirStatus): string {
  const run = s.sweeper.lastRun;
  if (!run) return 'no pass yet';
  const what = Object.entries(run.pruned).map(([name, n]) => `${n} ${name}`).join(', ') || 'nothing to delete';
  const vacuum = run.vacuumedPages ? `, ${run.vacuumedPages} pages handed back` : '';
  return `last pass ${run.finishedAt} (${run.durationMs} ms): ${what}${vacuum}${run.error ? `; stopped: ${run.error}` : ''}; ${s.sweeper.prunedTotal} rows in ${s.sweeper.runs} passes`;
}

/** One line on the local CA: what devices compare when they install it, and whether to renew it. */
function describeCa(ca: CaStatus): string {
  const scope = ca.nameConstraints
    ? `vouches only for ${[...ca.nameConstraints.dns, ...ca.nameConstraints.ips].join(', ')}`
    : 'no name constraints (made by an older Gatehouse: renew it)';
  const uncovered = ca.uncovered.length ? `; does not cover ${ca.uncovered.join(', ')} (renew it)` : '';
  const due = ca.renewalDue && ca.nameConstraints && !ca.uncovered.length ? '; expires within 60 days (renew it)' : '';
  return `SHA-256 ${ca.fingerprint}, expires ${ca.notAfter}, ${scope}${uncovered}${due}`;
}

/** The lines of the plugins' recorded states (`gatehouse status`), the label padded like the others. */
export function recordedLines(s: Record<string, unknown>, recorded: readonly RecordedStatus[], running: boolean | undefined): string[] {
  return recorded.map((r) => `${r.label.padEnd(17)}${r.line(s[r.name] ?? null, running)}`);
}

/** Whether passkeys work with this issuer, in words (`gatehouse status` in either engine). */
export function passkeysLine(p: DataDirStatus['passkeys']): string {
  return p.available ? `available (RP ID ${new URL(p.issuer).hostname})` : `not available: ${p.message}`;
}

/** The human-readable form printed by `gatehouse status`. */
export function formatStatus(s: DataDirStatus, recorded: readonly RecordedStatus[] = []): string {
  const schema = s.schema.newer
    ? `${s.schema.applied.at(-1)} (newer than this Gatehouse, which knows up to ${s.schema.latest})`
    : `${s.schema.applied.at(-1) ?? 'empty'} (${s.schema.applied.length} migrations applied, ${s.schema.pending.length} pending)`;
  const { pages, freePages, pageSize, incrementalVacuum } = s.storage;
  return [
    `Data directory   ${s.dataDir}`,
    `Server           ${s.serverPid ? `running (pid ${s.serverPid})` : 'not running'}`,
    `Schema           ${schema}`,
    `Applications     ${s.counts.applications}`,
    `Members          ${s.counts.members} memberships of ${s.counts.people} people`,
    `Signing keys     ${s.counts.signingKeys}`,
    `TLS certificate  ${s.tls ? `expires ${s.tls.notAfter}` : 'none (HTTP only)'}`,
    ...(s.tls?.ca ? [`Local CA         ${describeCa(s.tls.ca)}`] : []),
    `Last backup      ${s.lastBackup ? `${s.lastBackup.createdAt} (${s.lastBackup.id}, ${s.lastBackup.size} bytes${s.lastBackup.encrypted ? ', encrypted' : ', NOT encrypted'})` : 'none in <data>/backups'}`,
    `Backups          ${backupLine(s)}`,
    `Sweeper          ${sweeperLine(s)}`,
    ...(s.deletions.length ? [`Deleting         ${s.deletions.map((d) => `${d.kind} ${d.target} (since ${d.requestedAt})`).join(', ')}`] : []),
    `Database file    ${mb(pages * pageSize)}, ${mb(freePages * pageSize)} free inside${incrementalVacuum ? '' : ' (not handed back: database created before incremental vacuum)'}`,
    ...recordedLines(s, recorded, s.serverPid !== null),
    `Passkeys         ${passkeysLine(s.passkeys)}`,
  ].join('\n');
}
