/**
 * A snapshot of a data directory read straight from disk, without a running server: what
 * `gatehouse status` prints.
 */
import { existsSync, readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { listBackups } from './backup.js';
import { runningServerPid } from './pid-file.js';
import { DATABASE_FILE } from './restore.js';
import { schemaState, type SchemaState } from './schema-version.js';
import { caStatus, tlsPaths, type CaStatus } from './tls.js';

export interface DataDirStatus {
  dataDir: string;
  serverPid: number | null;
  schema: SchemaState;
  counts: { applications: number; members: number; people: number; signingKeys: number };
  tls: { certificate: string; notAfter: string; caFingerprint: string | null; ca: CaStatus | null } | null;
  lastBackup: { id: string; createdAt: string; size: number; encrypted: boolean } | null;
}

function count(sqlite: Database.Database, table: string): number {
  const exists = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table);
  if (!exists) return 0;
  return (sqlite.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
}

/** Reads the status of `dataDir`; undefined when it holds no database. */
export function readStatus(dataDir: string, extraNames: string[] = []): DataDirStatus | undefined {
  const file = join(dataDir, DATABASE_FILE);
  if (!existsSync(file)) return undefined;
  // A plain connection: no migrations, only reads (busy_timeout so a running server's writes don't fail us).
  const sqlite = new Database(file, { fileMustExist: true });
  try {
    sqlite.pragma('busy_timeout = 5000');
    const paths = tlsPaths(dataDir);
    let tls: DataDirStatus['tls'] = null;
    if (existsSync(paths.cert)) {
      const cert = new X509Certificate(readFileSync(paths.cert));
      const ca = caStatus(dataDir, extraNames, new Date()) ?? null;
      tls = { certificate: paths.cert, notAfter: new Date(cert.validTo).toISOString(), caFingerprint: ca?.fingerprint ?? null, ca };
    }
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
    };
  } finally {
    sqlite.close();
  }
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

/** The human-readable form printed by `gatehouse status`. */
export function formatStatus(s: DataDirStatus): string {
  const schema = s.schema.newer
    ? `${s.schema.applied.at(-1)} (newer than this Gatehouse, which knows up to ${s.schema.latest})`
    : `${s.schema.applied.at(-1) ?? 'empty'} (${s.schema.applied.length} migrations applied, ${s.schema.pending.length} pending)`;
  return [
    `Data directory   ${s.dataDir}`,
    `Server           ${s.serverPid ? `running (pid ${s.serverPid})` : 'not running'}`,
    `Schema           ${schema}`,
    `Applications     ${s.counts.applications}`,
    `Members          ${s.counts.members} memberships of ${s.counts.people} people`,
    `Signing keys     ${s.counts.signingKeys}`,
    `TLS certificate  ${s.tls ? `expires ${s.tls.notAfter}` : 'none (HTTP only)'}`,
    ...(s.tls?.ca ? [`Local CA         ${describeCa(s.tls.ca)}`] : []),
    `Last backup      ${s.lastBackup ? `${s.lastBackup.createdAt} (${s.lastBackup.id}, ${s.lastBackup.size} bytes${s.lastBackup.encrypted ? ', encrypted' : ''})` : 'none in <data>/backups'}`,
  ].join('\n');
}
