/**
 * Appends to the audit log. Call it inside the same transaction as the change it describes.
 * `details` must never carry a secret: pass names, ids and changed field names, not values of
 * secrets.
 */
import { sql } from 'drizzle-orm';
import { auditLog } from '../db/schema.js';
import type { Tx } from '../db/client.js';
import { preparedPerDb } from '../db/prepared.js';
import { newId } from '../util/ids.js';
import { exec } from '../db/store.js';
import { clientAddress } from '../http/client-address.js';

export interface AuditEntry {
  actor: string;
  action: string;
  applicationId?: string | null;
  target?: string | null;
  details?: Record<string, unknown>;
  /** The client address; by default the address of the request being answered (http/client-address.ts). */
  ip?: string | null;
}

/** The row an entry makes, with its id and (unless given) the address of the request being answered. */
export function auditRow(at: Date, entry: AuditEntry): typeof auditLog.$inferInsert {
  return {
    id: newId('aud'),
    at,
    actor: entry.actor,
    action: entry.action,
    applicationId: entry.applicationId ?? null,
    target: entry.target ?? null,
    details: entry.details ?? {},
    // The address of the request that made the change; null for background work.
    ip: entry.ip !== undefined ? entry.ip : clientAddress() ?? null,
  };
}

/**
 * The INSERT, prepared once per database handle (db/prepared.ts): built by drizzle and compiled
 * by SQLite once, not per entry (a hot path writes one per request: SAML's `saml.sign_in`,
 * decision 0433). Inside a transaction it runs on the transaction's connection, as every statement.
 */
const insertStatement = preparedPerDb((db) => {
  const p = sql.placeholder;
  return db
    .insert(auditLog)
    .values({
      id: p('id'), at: p('at'), actor: p('actor'), action: p('action'), applicationId: p('applicationId'), target: p('target'),
      details: p('details'), ip: p('ip'),
    })
    .prepare();
});

export async function recordAudit(tx: Tx, at: Date, entry: AuditEntry): Promise<void> {
  await exec(insertStatement(tx), auditRow(at, entry));
}
