/**
 * Which reference set an application's secret, so an export writes it back (`webhookSecret:
 * ${NOTES_WEBHOOK_SECRET}`) instead of leaving the secret out. Kept in `meta`
 * (`config_secret_references`): per application and field, the reference and a check — the
 * SHA-256 of the value it set, sealed like the webhook secrets in PostgreSQL mode
 * (db/secrets-at-rest.ts), so a dump shows no fingerprint of a secret. An export names a reference
 * only while the secret is still the one it set: a rotation in the panel, or a secret typed
 * there, makes it unknown again (and the export then says nothing about that secret).
 *
 * Bounded by the applications (entries of deleted ones are dropped on the next write).
 */
import type { Tx } from '../db/client.js';
import { readMeta, writeMeta } from '../db/meta.js';
import { openAtRest, sealAtRest } from '../db/secrets-at-rest.js';
import { sha256 } from '../util/crypto.js';

const KEY = 'config_secret_references';

interface Stored {
  reference: string;
  /** sha256(value), sealed at rest. */
  check: string;
}

/** reference key (an application's id, or `<section>:<key>`: config-as-code/sections.ts `referenceKey`) → field → what set it. */
type References = Record<string, Record<string, Stored>>;

const purpose = (applicationId: string, field: string) => `configuration reference of ${field} of application ${applicationId}`;

export async function readReferences(db: Tx): Promise<References> {
  return (await readMeta<References>(db, KEY)) ?? {};
}

/**
 * The reference that set this secret, if the secret is still the value it set (`fingerprint`:
 * SHA-256 of the current value, or null when there is none).
 */
export function currentReference(db: Tx, all: References, applicationId: string, field: string, fingerprint: string | null): string | null {
  const stored = all[applicationId]?.[field];
  if (!stored || fingerprint === null) return null;
  try {
    return openAtRest(db, stored.check, purpose(applicationId, field)) === fingerprint ? stored.reference : null;
  } catch {
    // Sealed under another key secret: no longer known.
    return null;
  }
}

/** Records what set each secret (`set`: application → field → reference and value); drops gone applications'. */
export async function writeReferences(
  db: Tx,
  now: Date,
  all: References,
  set: Map<string, Map<string, { reference: string; value: string }>>,
  existing: ReadonlySet<string>,
): Promise<void> {
  const next: References = {};
  for (const [id, fields] of Object.entries(all)) if (existing.has(id)) next[id] = { ...fields };
  for (const [id, fields] of set) {
    if (!existing.has(id)) continue;
    for (const [field, { reference, value }] of fields) {
      (next[id] ??= {})[field] = { reference, check: sealAtRest(db, sha256(value), purpose(id, field)) };
    }
  }
  if (JSON.stringify(next) !== JSON.stringify(all)) await writeMeta(db, KEY, next, now);
}
