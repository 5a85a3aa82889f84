/**
 * Self-service rules (spec §4.3, DESIGN §4.8): what a signed-in person may see and change about
 * themselves. The JSON API (`routes.ts`) and the account page (`pages/account-page.ts`) both call
 * these functions, so each rule lives here once.
 *
 * - Memberships: all of them, suspended included; a profile is edited through the `self` writer of
 *   `profile-fields.ts` (only `user_editable` fields), and not while the membership is suspended.
 * - Sessions: live ones plus those that ended in the last `ENDED_SESSION_DAYS` days (at most
 *   `MAX_ENDED_SESSIONS`). Ending a session also revokes the refresh tokens born of it.
 * - Linked accounts: unlinking needs a sign-in within the last 10 minutes (a stolen session
 *   must not change how the person signs in) and is refused when it would leave no way to sign
 *   in; unlinking `credential` removes the password.
 * - Password change: needs the current password (a wrong one counts toward the per-account
 *   back-off) and ends every other session with its refresh tokens.
 */
import type { AppContext } from '../context.js';
import type { LinkedAccount, Person, Session } from '../db/schema.js';
import type { Tx } from '../db/client.js';
import { recordAudit } from '../audit/record.js';
import { mergeProfile } from '../applications/profile-fields.js';
import { conflict, forbidden, managedBySource, notFound, validationFailed } from '../http/problem.js';
import { iso } from '../http/schemas.js';
import { membershipEventData } from '../members/create.js';
import { recordEvent } from '../webhooks/outbox.js';
import { endSession, endSessions, requireRecentSignIn, sessionDevice, type SessionEndReason } from '../accounts/session.js';
import { checkPasswordLength, hashPassword, verifyPassword } from '../accounts/passwords.js';
import { checkNewPassword } from '../accounts/password-policy.js';
import { claimPasswordCheck, clearBackOff, passwordCheckFailed, passwordCheckPassed } from '../accounts/sign-in-back-off.js';
import {
  addCredentialAccount,
  deleteLinkedAccount,
  endedSessionsOf,
  linkedAccountsOf,
  liveSessionsOf,
  membershipOf,
  membershipsOf,
  personById,
  saveProfile,
  sessionOf,
  setPasswordHash,
  type MembershipRow,
} from './queries.js';
import { transaction } from '../db/store.js';
import { guardPerson } from '../plugin-api/registries.js';

/** The signed-in caller: their session (this device) and person. */
export interface Me {
  session: Session;
  person: Person;
}

export const MAX_LIVE_SESSIONS = 50;
export const ENDED_SESSION_DAYS = 7;
export const MAX_ENDED_SESSIONS = 10;

const actorOf = (me: Me) => `person:${me.person.id}`;

export function membershipRecord({ m, app }: MembershipRow) {
  return {
    applicationId: app.id,
    applicationName: app.name,
    status: m.status,
    role: m.role,
    profile: m.profile,
    joinedAt: iso(m.joinedAt)!,
    lastActiveAt: iso(m.lastActiveAt)!,
  };
}

/** The person's memberships with their application's profile field definitions (for forms). */
export async function listMemberships(ctx: AppContext, me: Me): Promise<MembershipRow[]> {
  return membershipsOf(ctx.db, me.person.id);
}

/**
 * Merges `update` into the person's profile for `applicationId`. Not a member (or no such
 * application) → 404 `membership_not_found`; suspended → 403 `membership_suspended`; rule
 * failures → 400 `validation_failed` naming `body.profile.<key>`.
 */
export async function updateOwnProfile(ctx: AppContext, me: Me, applicationId: string, update: Record<string, unknown>): Promise<MembershipRow> {
  const row = await membershipOf(ctx.db, me.person.id, applicationId);
  if (!row) throw notFound('membership_not_found', `You are not a member of an application "${applicationId}".`);
  if (row.m.status === 'suspended') {
    throw forbidden('membership_suspended', `Your membership of ${row.app.name} is suspended, so its profile cannot be changed.`);
  }
  const merged = mergeProfile(row.app.authPolicy.profile_fields, row.m.profile, update, 'self');
  if (merged.errors.length) throw validationFailed(merged.errors, 'The profile is not valid.');
  const profile = merged.profile!;
  if (JSON.stringify(profile) === JSON.stringify(row.m.profile)) return row;

  const now = ctx.clock.now();
  const saved = await transaction(ctx.db, async (tx) => {
    const m = await saveProfile(tx, row.m.id, profile, now);
    await recordAudit(tx, now, {
      actor: actorOf(me),
      action: 'membership.updated',
      applicationId,
      target: m.id,
      details: { userId: me.person.id, changed: ['profile'] },
    });
    await recordEvent(tx, now, applicationId, 'membership.updated', { ...membershipEventData(m, me.person), changed: ['profile'] });
    return m;
  });
  ctx.wakeWebhooks();
  return { m: saved, app: row.app };
}

export function sessionRecord(s: Session, currentId: string, now: Date) {
  return {
    id: s.id,
    device: sessionDevice(s),
    ip: s.ip,
    created_at: iso(s.createdAt)!,
    expires_at: iso(s.expiresAt)!,
    last_seen_at: iso(s.lastSeenAt)!,
    is_active: s.revokedAt === null && s.expiresAt.getTime() > now.getTime(),
    current: s.id === currentId,
  };
}

/** Live sessions (newest first), then recently ended ones (newest first). */
export async function listSessions(ctx: AppContext, me: Me) {
  const now = ctx.clock.now();
  const since = new Date(now.getTime() - ENDED_SESSION_DAYS * 24 * 3600 * 1000);
  const rows = [
    ...await liveSessionsOf(ctx.db, me.person.id, now, MAX_LIVE_SESSIONS),
    ...await endedSessionsOf(ctx.db, me.person.id, now, since, MAX_ENDED_SESSIONS),
  ];
  return rows.map((s) => sessionRecord(s, me.session.id, now));
}

/**
 * Signs out one of the person's sessions and revokes its refresh tokens. Another person's or an
 * unknown id → 404 `session_not_found`; an already-ended one of theirs is a no-op. Returns
 * whether it was the caller's own session (the caller then clears the cookie).
 */
export async function endOwnSession(ctx: AppContext, me: Me, sessionId: string): Promise<{ wasCurrent: boolean }> {
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    const target = await sessionOf(tx, me.person.id, sessionId);
    if (!target) throw notFound('session_not_found', `You have no session "${sessionId}".`);
    if (target.revokedAt !== null) return;
    await endSession(ctx, tx, now, target.id, 'session_revoked');
    await recordAudit(tx, now, { actor: actorOf(me), action: 'session.revoked', target: target.id, details: { device: sessionDevice(target) } });
  });
  return { wasCurrent: sessionId === me.session.id };
}

/** Ends every other live session of the person with all their refresh tokens; returns how many. */
async function endOtherSessions(ctx: AppContext, tx: Tx, me: Me, now: Date, reason: SessionEndReason): Promise<number> {
  // Families whose session row is gone (or never had one) die too: only this device keeps its apps.
  return (await endSessions(ctx, tx, now, { personId: me.person.id, exceptSessionId: me.session.id }, reason)).sessionIds.length;
}

/** "Sign out everywhere else": the caller's session survives. */
export async function signOutOtherSessions(ctx: AppContext, me: Me): Promise<{ revoked: number }> {
  const now = ctx.clock.now();
  const revoked = await transaction(ctx.db, async (tx) => {
    const n = await endOtherSessions(ctx, tx, me, now, 'signed_out_elsewhere');
    await recordAudit(tx, now, { actor: actorOf(me), action: 'session.signed_out_elsewhere', target: me.person.id, details: { sessionsEnded: n } });
    return n;
  });
  return { revoked };
}

export function linkedAccountRecord(a: LinkedAccount) {
  return { provider: a.provider, email: a.email, linked_at: iso(a.linkedAt)! };
}

export async function listLinkedAccounts(ctx: AppContext, me: Me): Promise<LinkedAccount[]> {
  return linkedAccountsOf(ctx.db, me.person.id);
}

/**
 * Unlinks a provider from the person. No sign-in on this session within 10 minutes → 403
 * `reauthentication_required`; not linked → 404 `linked_account_not_found`; the last way to sign
 * in → 409 `last_sign_in_method`. Unlinking `credential` removes the password.
 */
export async function unlinkAccount(ctx: AppContext, me: Me, provider: string): Promise<void> {
  await requireRecentSignIn(ctx, me.session.id);
  const now = ctx.clock.now();
  // Read and delete in one transaction, so two concurrent unlinks cannot both pass the last-way check.
  await transaction(ctx.db, async (tx) => {
    const accounts = await linkedAccountsOf(tx, me.person.id);
    const account = accounts.find((a) => a.provider === provider);
    if (!account) throw notFound('linked_account_not_found', `No "${provider}" account is linked to you.`);
    if (accounts.length === 1) {
      throw conflict('last_sign_in_method', 'This is the only way you can sign in; link another account before removing it.');
    }
    await deleteLinkedAccount(tx, account.id);
    if (provider === 'credential') await setPasswordHash(tx, me.person.id, null, now);
    await recordAudit(tx, now, { actor: actorOf(me), action: 'person.account_unlinked', target: me.person.id, details: { provider } });
  });
}

export interface PasswordChange {
  currentPassword: string;
  newPassword: string;
}

export const wrongPassword = () => forbidden('invalid_current_password', 'The current password is not correct.');

/**
 * Changes the person's password. No password yet → 409 `password_not_set` (use password reset);
 * account locked → 429; wrong current password → 403 `invalid_current_password` (counted toward
 * the back-off). Ends every other session and their refresh tokens; this one stays signed in.
 */
export async function changePassword(ctx: AppContext, me: Me, input: PasswordChange): Promise<{ sessionsEnded: number }> {
  const person = (await personById(ctx.db, me.person.id)) ?? me.person;
  if (person.sourceId !== null) throw managedBySource('Your password is kept by your organisation\'s directory; change it there.');
  // A plugin may keep the person's password elsewhere (a directory source: 409 managed_by_source).
  await guardPerson(ctx.registries, ctx.db, person, { kind: 'password' }, `person:${person.id}`);
  if (!person.passwordHash) {
    throw conflict('password_not_set', 'You have no password yet; set one with "Forgot password" on the sign-in page.');
  }
  checkPasswordLength(input.newPassword, 'body.newPassword');
  // Asked inside the person's own live session: strangers' guesses at the address do not block it.
  const check = await claimPasswordCheck(ctx, person.email, { ownSessionId: me.session.id });
  if (!(await verifyPassword(person.passwordHash, input.currentPassword))) {
    await passwordCheckFailed(ctx, person, check);
    throw wrongPassword();
  }
  await checkNewPassword(ctx.db, input.newPassword, { path: 'body.newPassword', userInputs: [person.email, person.name] });
  const passwordHash = await hashPassword(input.newPassword);
  const now = ctx.clock.now();
  const sessionsEnded = await transaction(ctx.db, async (tx) => {
    await setPasswordHash(tx, person.id, passwordHash, now);
    await clearBackOff(ctx.db, person.email);
    await passwordCheckPassed(ctx.db, check);
    const ended = await endOtherSessions(ctx, tx, me, now, 'password_changed');
    // A password is always listed as the `credential` account, whichever path set it.
    if (!(await linkedAccountsOf(tx, person.id)).some((a) => a.provider === 'credential')) await addCredentialAccount(tx, person, now);
    await recordAudit(tx, now, { actor: actorOf(me), action: 'person.password_changed', target: person.id, details: { sessionsEnded: ended } });
    return ended;
  });
  return { sessionsEnded };
}
