/**
 * Changes to a person's second factors, shared by self-service (`/api/me`, the account page),
 * enrolment at sign-in and the administrator's reset (spec second-factor.md). Every change is one
 * transaction with its audit entry and, for enrolment and removal, a `second_factor.enrolled` /
 * `second_factor.removed` webhook event to each application the person is an active member of
 * (data: `{userId, email, method}`, never a secret). Removing a factor ends the person's other
 * sessions (accounts/session.ts, `endSessions`: the one way sessions end, where back-channel logout attaches).
 *
 * Rules: adding, removing or replacing a factor and regenerating recovery codes need a sign-in on
 * this session within 10 minutes (403 `reauthentication_required`): a stolen session cookie must
 * not add a way in (a passkey), lock the owner out (a TOTP they do not have) or remove one; the last second factor cannot go
 * while an application the person belongs to requires MFA (409 `second_factor_required`). A
 * person's first second factor comes with a set of recovery codes.
 */
import { and, eq } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import type { Db, Tx } from '../../db/client.js';
import { applications, memberships, type Passkey, type Person } from '../../db/schema.js';
import { recordAudit } from '../../audit/record.js';
import { badRequest, conflict, notFound } from '../../http/problem.js';
import { iso } from '../../http/schemas.js';
import { recordEvent } from '../../webhooks/outbox.js';
import { endSessions, requireRecentSignIn } from '../session.js';
import { hasSecondFactor } from './factors.js';
import { newRecoveryCodes, recoveryCodeHash } from './recovery.js';
import { secretBox } from './secret-box.js';
import {
  claimTotpStep,
  confirmPendingTotp,
  confirmedTotpSecret,
  deletePasskey,
  deleteRecoveryCodes,
  deleteTotp,
  insertPasskey,
  passkeyOf,
  passkeysOf,
  recoveryCodesCreatedAt,
  remainingRecoveryCodes,
  renamePasskey,
  replaceRecoveryCodes,
  savePendingTotp,
  totpOf,
  type NewPasskey,
} from './store.js';
import { matchingStep, newTotpSecret, normaliseCode, totpUri } from './totp.js';
import { many, transaction } from '../../db/store.js';

/** At most this many passkeys per person (a bound on the table and on `allowCredentials`). */
export const MAX_PASSKEYS = 20;

export type FactorMethod = 'totp' | 'passkey' | 'recovery_codes' | 'all';

/** `person:<id>` for the person themselves, or the administrator / API key that acted. */
export interface Actor {
  name: string;
}

export const invalidCode = () => badRequest('invalid_code', 'The code is not correct; check your authenticator app and try again.');

/** Audit entry plus a webhook event per application the person is an active member of. */
async function recordFactorChange(tx: Tx, now: Date, person: Pick<Person, 'id' | 'email'>, actor: string, change: 'enrolled' | 'removed', method: FactorMethod, details: Record<string, unknown> = {}) {
  await recordAudit(tx, now, { actor, action: `second_factor.${change}`, target: person.id, details: { method, ...details } });
  const apps = await many(tx
    .select({ id: memberships.applicationId })
    .from(memberships)
    .innerJoin(applications, eq(applications.id, memberships.applicationId))
    .where(and(eq(memberships.personId, person.id), eq(memberships.status, 'active'))));
  for (const { id } of apps) await recordEvent(tx, now, id, `second_factor.${change}`, { userId: person.id, email: person.email, method });
}

/** Whether an application the person is a member of requires MFA (then the last factor must stay). */
async function requiredByAnApplication(tx: Tx, personId: string): Promise<string | undefined> {
  const rows = await many(tx
    .select({ name: applications.name, policy: applications.authPolicy })
    .from(memberships)
    .innerJoin(applications, eq(applications.id, memberships.applicationId))
    .where(eq(memberships.personId, personId)));
  return rows.find((r) => r.policy.mfa === 'required')?.name;
}

async function refuseLastFactor(tx: Tx, personId: string): Promise<void> {
  const app = await requiredByAnApplication(tx, personId);
  if (app) throw conflict('second_factor_required', `${app} requires a second factor: add another one before removing this one.`);
}

/** The `/api/me/security` view (never a secret). */
export async function securityOf(ctx: AppContext, personId: string) {
  const totp = await totpOf(ctx.db, personId);
  return {
    totp: { enabled: Boolean(totp?.secret), confirmedAt: iso(totp?.confirmedAt ?? null) },
    passkeys: (await passkeysOf(ctx.db, personId)).map(passkeyRecord),
    recoveryCodes: { remaining: await remainingRecoveryCodes(ctx.db, personId) },
  };
}

/** The administrator's summary of a member's factors: counts and dates only. */
export async function secondFactorSummary(db: Db, personId: string) {
  const totp = await totpOf(db, personId);
  const keys = await passkeysOf(db, personId);
  const lastUsed = keys.map((k) => k.lastUsedAt?.getTime() ?? 0).reduce((a, b) => Math.max(a, b), 0);
  return {
    totp: { enabled: Boolean(totp?.secret), confirmedAt: iso(totp?.confirmedAt ?? null) },
    passkeys: { count: keys.length, lastUsedAt: lastUsed ? new Date(lastUsed).toISOString() : null },
    recoveryCodes: { remaining: await remainingRecoveryCodes(db, personId), createdAt: iso(await recoveryCodesCreatedAt(db, personId)) },
  };
}

export function passkeyRecord(p: Passkey) {
  return { id: p.id, name: p.name, createdAt: iso(p.createdAt)!, lastUsedAt: iso(p.lastUsedAt), backedUp: p.backedUp };
}

// --- TOTP --------------------------------------------------------------------------------------

/**
 * Starts (or restarts) TOTP enrolment: a new secret waits for its first code; a confirmed
 * authenticator keeps working until then. From the account (`sessionId`) it needs a recent
 * sign-in: a stolen session cookie must not add a factor the owner does not have (they would be
 * locked out) nor replace theirs. Enrolment at sign-in (no session yet) has just had the password.
 */
export async function startTotpEnrolment(ctx: AppContext, person: Person, sessionId: string | undefined) {
  if (sessionId) await requireRecentSignIn(ctx, sessionId);
  const secret = newTotpSecret();
  await savePendingTotp(ctx.db, person.id, secretBox(ctx).encrypt(secret), ctx.clock.now());
  return { secret, uri: totpUri(secret, person.email) };
}

/** The secret waiting for its first code (for showing the QR code again), if any. */
export async function pendingTotpSecret(ctx: AppContext, personId: string): Promise<string | undefined> {
  const sealed = (await totpOf(ctx.db, personId))?.pendingSecret;
  return sealed ? secretBox(ctx).decrypt(sealed) : undefined;
}

/**
 * Confirms enrolment with a code of the new secret: 400 `invalid_code` when wrong. Returns a new
 * set of recovery codes when this is the person's first second factor.
 */
export async function confirmTotp(ctx: AppContext, person: Person, code: string, actor: string): Promise<{ recoveryCodes?: string[] }> {
  const box = secretBox(ctx);
  const row = await totpOf(ctx.db, person.id);
  if (!row?.pendingSecret) throw conflict('totp_not_started', 'Start setting up an authenticator app first.');
  const now = ctx.clock.now();
  const step = matchingStep(box.decrypt(row.pendingSecret), normaliseCode(code), now.getTime());
  if (step === undefined) throw invalidCode();
  const result = await transaction(ctx.db, async (tx) => {
    const first = !(await hasSecondFactor(ctx.db, person.id));
    const replaced = Boolean(row.secret);
    await confirmPendingTotp(tx, person.id, row.pendingSecret!, step, now);
    await recordFactorChange(tx, now, person, actor, 'enrolled', 'totp', replaced ? { replaced: true } : {});
    return first ? { recoveryCodes: await issueRecoveryCodes(ctx, tx, person, now, actor) } : {};
  });
  ctx.wakeWebhooks();
  return result;
}

/** Checks a TOTP code of the person's authenticator, spending its step: false for wrong or replayed. */
export async function checkTotp(ctx: AppContext, personId: string, code: string): Promise<boolean> {
  const sealed = await confirmedTotpSecret(ctx.db, personId);
  if (!sealed) return false;
  const step = matchingStep(secretBox(ctx).decrypt(sealed), normaliseCode(code), ctx.clock.now().getTime());
  return step !== undefined && await claimTotpStep(ctx.db, personId, step);
}

export async function removeTotp(ctx: AppContext, person: Person, sessionId: string): Promise<void> {
  await requireRecentSignIn(ctx, sessionId);
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    const row = await totpOf(tx, person.id);
    if (!row?.secret) {
      if (row) await deleteTotp(tx, person.id); // only an enrolment in progress: nothing to announce
      return;
    }
    if ((await passkeysOf(tx, person.id)).length === 0) await refuseLastFactor(tx, person.id);
    await deleteTotp(tx, person.id);
    await afterRemoval(ctx, tx, now, person, sessionId, `person:${person.id}`, 'totp');
  });
  ctx.wakeWebhooks();
}

// --- Passkeys ----------------------------------------------------------------------------------

export async function checkPasskeyRoom(ctx: AppContext, personId: string): Promise<Passkey[]> {
  const existing = await passkeysOf(ctx.db, personId);
  if (existing.length >= MAX_PASSKEYS) throw conflict('too_many_passkeys', `You have ${MAX_PASSKEYS} passkeys, the most one account may have; remove one first.`);
  return existing;
}

/** Stores a verified new passkey; a first second factor comes with recovery codes. */
export async function addPasskey(ctx: AppContext, person: Person, passkey: NewPasskey, actor: string): Promise<{ passkey: Passkey; recoveryCodes?: string[] }> {
  const now = ctx.clock.now();
  const result = await transaction(ctx.db, async (tx) => {
    if ((await passkeysOf(tx, person.id)).length >= MAX_PASSKEYS) throw conflict('too_many_passkeys', `An account may have at most ${MAX_PASSKEYS} passkeys.`);
    const first = !(await hasSecondFactor(ctx.db, person.id));
    let stored: Passkey;
    try {
      stored = await insertPasskey(tx, passkey, now);
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw badRequest('passkey_invalid', 'This passkey is already registered.');
      throw error;
    }
    await recordFactorChange(tx, now, person, actor, 'enrolled', 'passkey', { passkeyId: stored.id });
    return first ? { passkey: stored, recoveryCodes: await issueRecoveryCodes(ctx, tx, person, now, actor) } : { passkey: stored };
  });
  ctx.wakeWebhooks();
  return result;
}

const passkeyNotFound = (id: string) => notFound('passkey_not_found', `You have no passkey "${id}".`);

export async function renameOwnPasskey(ctx: AppContext, person: Person, id: string, name: string): Promise<Passkey> {
  const now = ctx.clock.now();
  return await transaction(ctx.db, async (tx) => {
    if (!await passkeyOf(tx, person.id, id)) throw passkeyNotFound(id);
    const renamed = (await renamePasskey(tx, id, name))!;
    await recordAudit(tx, now, { actor: `person:${person.id}`, action: 'second_factor.passkey_renamed', target: person.id, details: { passkeyId: id } });
    return renamed;
  });
}

export async function removePasskey(ctx: AppContext, person: Person, sessionId: string, id: string): Promise<void> {
  await requireRecentSignIn(ctx, sessionId);
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    if (!await passkeyOf(tx, person.id, id)) throw passkeyNotFound(id);
    const others = (await passkeysOf(tx, person.id)).length - 1;
    if (others === 0 && !(await totpOf(tx, person.id))?.secret) await refuseLastFactor(tx, person.id);
    await deletePasskey(tx, id);
    await afterRemoval(ctx, tx, now, person, sessionId, `person:${person.id}`, 'passkey', { passkeyId: id });
  });
  ctx.wakeWebhooks();
}

// --- Recovery codes ----------------------------------------------------------------------------

async function issueRecoveryCodes(ctx: AppContext, tx: Tx, person: Pick<Person, 'id'>, now: Date, actor: string): Promise<string[]> {
  const box = secretBox(ctx);
  const codes = newRecoveryCodes();
  await replaceRecoveryCodes(tx, person.id, codes.map((c) => recoveryCodeHash(box, c)!), now);
  await recordAudit(tx, now, { actor, action: 'second_factor.recovery_codes_issued', target: person.id, details: { count: codes.length } });
  return codes;
}

/** A new set replacing the old one (recent sign-in needed); only next to a second factor. */
export async function regenerateRecoveryCodes(ctx: AppContext, person: Person, sessionId: string): Promise<string[]> {
  await requireRecentSignIn(ctx, sessionId);
  if (!(await hasSecondFactor(ctx.db, person.id))) {
    throw conflict('second_factor_missing', 'Recovery codes stand in for a second factor: set up an authenticator app or a passkey first.');
  }
  return await transaction(ctx.db, async (tx) => issueRecoveryCodes(ctx, tx, person, ctx.clock.now(), `person:${person.id}`));
}

// --- Removal -----------------------------------------------------------------------------------

/** Audit, webhooks and the end of the person's other sessions after a factor went. */
async function afterRemoval(ctx: AppContext, tx: Tx, now: Date, person: Person, keepSessionId: string | undefined, actor: string, method: FactorMethod, details: Record<string, unknown> = {}) {
  // Without any second factor left, the recovery codes have nothing to stand in for. (The
  // prepared look-up runs on the database handle, inside this transaction: one connection.)
  if (!(await hasSecondFactor(ctx.db, person.id))) await deleteRecoveryCodes(tx, person.id);
  const sessionsEnded = (await endSessions(ctx, tx, now, { personId: person.id, exceptSessionId: keepSessionId }, 'second_factor_removed')).sessionIds.length;
  await recordFactorChange(tx, now, person, actor, 'removed', method, { ...details, sessionsEnded });
}

/**
 * The administrator's reset for a lost device: every TOTP, passkey and recovery code of the
 * person goes, every session of theirs ends, audited with the administrator as actor.
 */
export async function resetSecondFactor(ctx: AppContext, person: Person, actor: string, applicationId: string): Promise<{ sessionsEnded: number }> {
  const now = ctx.clock.now();
  const result = await transaction(ctx.db, async (tx) => {
    const totp = await deleteTotp(tx, person.id);
    const keys = await passkeysOf(tx, person.id);
    for (const k of keys) await deletePasskey(tx, k.id);
    const codes = await deleteRecoveryCodes(tx, person.id);
    const sessionsEnded = (await endSessions(ctx, tx, now, { personId: person.id }, 'second_factor_reset')).sessionIds.length;
    await recordAudit(tx, now, {
      actor,
      action: 'second_factor.reset',
      applicationId,
      target: person.id,
      details: { totp, passkeys: keys.length, recoveryCodes: codes, sessionsEnded },
    });
    if (totp || keys.length) await recordFactorChange(tx, now, person, actor, 'removed', 'all', { reset: true });
    return { sessionsEnded };
  });
  ctx.wakeWebhooks();
  return result;
}
