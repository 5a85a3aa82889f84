/**
 * Appends to the audit log. Call it inside the same transaction as the change it describes.
 * `details` must never carry a secret: pass names, ids and changed field names, not values of
 * secrets.
 */
import { auditLog } from '../db/schema.js';
import type { Db } from '../db/client.js';
import { newId } from '../util/ids.js';

/** A drizzle database or transaction handle. */
export type Tx = Pick<Db, 'insert' | 'select' | 'update' | 'delete'>;

export interface AuditEntry {
  actor: string;
  action: string;
  applicationId?: string | null;
  target?: string | null;
  details?: Record<string, unknown>;
}

export function recordAudit(tx: Tx, at: Date, entry: AuditEntry): void {
  tx.insert(auditLog)
    .values({
      id: newId('aud'),
      at,
      actor: entry.actor,
      action: entry.action,
      applicationId: entry.applicationId ?? null,
      target: entry.target ?? null,
      details: entry.details ?? {},
    })
    .run();
}
