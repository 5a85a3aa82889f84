/**
 * The issuer a running server serves, recorded in `meta` when it starts listening (its final
 * value: without GATEHOUSE_ISSUER it comes from the address it listens on), so `gatehouse status`
 * (another process, often a shell without the service's environment) judges passkeys by the
 * server's issuer rather than by its own defaults.
 */
import type { Db } from '../db/client.js';
import { readMeta, writeMeta } from '../db/meta.js';

const KEY = 'served_issuer';

interface Recorded {
  issuer: string;
  /** When the server that recorded it started listening (ISO 8601). */
  at: string;
}

export async function recordServedIssuer(db: Db, issuer: string, now: Date): Promise<void> {
  await writeMeta(db, KEY, { issuer, at: now.toISOString() } satisfies Recorded, now);
}

/** The issuer the last server recorded, or undefined when none has run with this version. */
export async function servedIssuer(db: Db): Promise<string | undefined> {
  const recorded = await readMeta<Partial<Recorded>>(db, KEY);
  return typeof recorded?.issuer === 'string' ? recorded.issuer : undefined;
}
