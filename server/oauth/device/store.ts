/**
 * Device authorization rows (RFC 8628): created by the device authorization endpoint, decided on
 * the /device page, spent by the device's poll. Codes are looked up by their SHA-256 (unique
 * indexes); every state change is a conditional update, so a decision or an issue happens once
 * even when two requests race. Expired rows go by the sweeper's rule "device authorizations"
 * (data-lifecycle/retention-rules.ts).
 */
import { and, eq, gt, sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import { deviceAuthorizations, type DeviceAuthorization } from '../../db/schema.js';
import { preparedPerDb } from '../../db/prepared.js';
import { sha256 } from '../../util/crypto.js';
import { newId } from '../../util/ids.js';
import { newDeviceCode, newUserCode } from './codes.js';
import { exec, one } from '../../db/store.js';

/** RFC 8628 §3.2 `expires_in` and `interval` (spec grants-and-logout.md). */
export const DEVICE_CODE_TTL_SECONDS = 600;
export const POLL_INTERVAL_SECONDS = 5;
/** What `slow_down` adds to the interval (§3.5). */
export const SLOW_DOWN_SECONDS = 5;

export interface NewDeviceAuthorization {
  applicationId: string;
  scope: string;
  resource: string;
  userAgent: string | undefined;
  ip: string;
}

/**
 * Stores a new request and returns both codes in the clear (the only time they exist so). A user
 * code that collides with a stored one (1 in 2.5·10¹⁰ per stored row) is drawn again.
 */
export async function createDeviceAuthorization(db: Db, now: Date, input: NewDeviceAuthorization) {
  const deviceCode = newDeviceCode();
  for (let attempt = 0; ; attempt++) {
    const userCode = newUserCode();
    const inserted = await one(db
      .insert(deviceAuthorizations)
      .values({
        id: newId('dev'), deviceCodeHash: sha256(deviceCode), userCodeHash: sha256(userCode), applicationId: input.applicationId,
        scope: input.scope, resource: input.resource, status: 'pending', interval: POLL_INTERVAL_SECONDS,
        userAgent: input.userAgent?.slice(0, 500) ?? null, ip: input.ip, createdAt: now,
        expiresAt: new Date(now.getTime() + DEVICE_CODE_TTL_SECONDS * 1000),
      })
      .onConflictDoNothing({ target: deviceAuthorizations.userCodeHash })
      .returning({ id: deviceAuthorizations.id }));
    if (inserted) return { deviceCode, userCode };
    if (attempt >= 5) throw new Error('could not draw an unused user code');
  }
}

const lookups = preparedPerDb((db) => ({
  byDeviceCode: db.select().from(deviceAuthorizations).where(eq(deviceAuthorizations.deviceCodeHash, sql.placeholder('hash'))).prepare(),
  byUserCode: db.select().from(deviceAuthorizations).where(eq(deviceAuthorizations.userCodeHash, sql.placeholder('hash'))).prepare(),
}));

export const findByDeviceCode = async (db: Db, deviceCode: string): Promise<DeviceAuthorization | undefined> =>
  await one(lookups(db).byDeviceCode, { hash: sha256(deviceCode) });

/** `userCode` in canonical form (codes.ts, `normaliseUserCode`). */
export const findByUserCode = async (db: Db, userCode: string): Promise<DeviceAuthorization | undefined> =>
  await one(lookups(db).byUserCode, { hash: sha256(userCode) });

export interface Approval {
  personId: string;
  membershipId: string;
  sessionId: string;
  authTime: Date;
}

/** Approves or denies a pending, unexpired request; false when it was not pending any more (or expired). */
export async function decide(tx: Tx, id: string, now: Date, decision: Approval | 'denied'): Promise<boolean> {
  const result = await exec(tx
    .update(deviceAuthorizations)
    .set(decision === 'denied' ? { status: 'denied' } : { status: 'approved', ...decision })
    .where(and(eq(deviceAuthorizations.id, id), eq(deviceAuthorizations.status, 'pending'), gt(deviceAuthorizations.expiresAt, now))));
  return result === 1;
}

/** Notes a poll at `now`, with the interval the device must keep from now on. */
export async function recordPoll(db: Db, id: string, now: Date, interval: number): Promise<void> {
  await exec(db.update(deviceAuthorizations).set({ lastPolledAt: now, interval }).where(eq(deviceAuthorizations.id, id)));
}

/** Marks an approved request as having given out its tokens; false when someone else did first. */
export async function markIssued(tx: Tx, id: string): Promise<boolean> {
  const result = await exec(tx
    .update(deviceAuthorizations)
    .set({ status: 'issued' })
    .where(and(eq(deviceAuthorizations.id, id), eq(deviceAuthorizations.status, 'approved'))));
  return result === 1;
}
