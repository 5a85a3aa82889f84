/**
 * Managing people across applications (spec administrators-and-people.md, "People"), for owners
 * and people managers (admin-policy.ts):
 * - create: with an e-mail to choose a password (a week-long single-use link), or a password set
 *   directly under the policy; optional username and directory groups;
 * - status: `disabled` people cannot sign in anywhere (accounts/people.ts `startSession`, and their
 *   sessions stop reading as live), and their sessions end now through `endSessions`, which queues
 *   the back-channel logouts; `active` lets them sign in again;
 * - delete: the person row goes at once and the rest in bounded batches (the `person` purge plan,
 *   data-lifecycle/purge-plans.ts), after their sessions were ended (with back-channel logout);
 *   every application they belonged to gets a `person.deleted` webhook;
 * - password-reset e-mail, the live sessions, and signing out everywhere.
 * The last owner can be neither disabled nor deleted (409 `last_owner`). Everything is audited
 * under the acting administrator.
 */
import { eq } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { addToGroup } from '../groups/service.js';
import type { AppContext } from '../context.js';
import type { Tx } from '../db/client.js';
import { recordAudit } from '../audit/record.js';
import { memberships, people, type Person, type PersonStatus } from '../db/schema.js';
import { exec, many, one, transaction } from '../db/store.js';
import { badRequest, conflict, managedBySource, notFound } from '../http/problem.js';
import { iso } from '../http/schemas.js';
import { checkNewPassword } from '../accounts/password-policy.js';
import { checkPasswordLength, hashPassword } from '../accounts/passwords.js';
import { endSessions, sessionDevice } from '../accounts/session.js';
import { issueToken, TOKEN_TTL_MS } from '../accounts/one-time-tokens.js';
import { requestPasswordReset } from '../accounts/password-reset.js';
import { sendInBackground } from '../accounts/email-verification.js';
import { isEmailAddress } from '../util/email.js';
import { welcomeMessage } from '../mail/account-messages.js';
import { mailerFor } from '../mail/mailer.js';
import { recordEvent, recordPersonEvent } from '../webhooks/outbox.js';
import { beginPurge } from '../data-lifecycle/purge.js';
import { liveSessionsOf } from '../self-service/queries.js';
import { guardPerson } from '../plugin-api/registries.js';
import { insertPerson } from './create.js';
import { parseUsername, takenUsernames, usernameTaken } from './username.js';
import { existingGroupIds } from '../groups/queries.js';

/** How long the e-mailed link to choose a first password works. */
export const WELCOME_LINK_TTL_MS = 7 * 24 * 3600_000;

export interface PersonCreate {
  email: string;
  name?: string | undefined;
  username?: string | undefined;
  groups?: string[] | undefined;
  sendInvitation?: boolean | undefined;
  password?: string | undefined;
}

async function personOrNotFound(tx: Tx, id: string): Promise<Person> {
  const person = await one(tx.select().from(people).where(eq(people.id, id)));
  if (!person) throw notFound('person_not_found', `There is no person with id "${id}".`);
  return person;
}

const serviceName = (issuer: string) => `Gatehouse (${new URL(issuer).host})`;

export async function createPerson(ctx: AppContext, input: PersonCreate, actor: string, log: Pick<FastifyBaseLogger, 'warn'>): Promise<Person> {
  const email = input.email.trim().toLowerCase();
  if (!isEmailAddress(email)) throw badRequest('validation_failed', 'The e-mail address is not valid.', [{ path: 'body.email', message: 'must be an e-mail address' }]);
  const invite = input.sendInvitation === true;
  if (invite === (input.password !== undefined)) {
    throw badRequest('validation_failed', 'Give either sendInvitation: true (an e-mail to choose a password) or a password, not both.', [
      { path: 'body', message: 'needs exactly one of sendInvitation: true and password' },
    ]);
  }
  if (invite && !mailerFor(ctx.config)) {
    throw conflict('mail_not_configured', 'No mail server is configured (SMTP_URL): set the password directly instead, or configure mail.');
  }
  const username = input.username === undefined ? undefined : parseUsername(input.username);
  let passwordHash: string | null = null;
  if (input.password !== undefined) {
    checkPasswordLength(input.password);
    await checkNewPassword(ctx.db, input.password, { userInputs: [email, input.name, username] });
    passwordHash = await hashPassword(input.password);
  }
  const groupIds = [...new Set(input.groups ?? [])];
  const now = ctx.clock.now();
  const { person, link } = await transaction(ctx.db, async (tx) => {
    if (username && (await takenUsernames(tx, [username])).size) throw usernameTaken(username);
    if (groupIds.length) {
      const found = await existingGroupIds(tx, groupIds);
      const unknown = groupIds.filter((id) => !found.has(id));
      if (unknown.length) throw badRequest('validation_failed', `No such group: ${unknown.join(', ')}.`, unknown.map((id) => ({ path: 'body.groups', message: `no group "${id}"` })));
    }
    const created = await insertPerson(tx, now, { email, name: input.name ?? null, username, passwordHash, emailVerified: false });
    // Through the groups' own rule, so each addition is audited and counted against the per-person limit.
    for (const groupId of groupIds) await addToGroup(tx, now, groupId, created, actor, 'refuse');
    if (groupIds.length) await ctx.hooks.emit('groupsChanged', { tx, now, groupIds, personIds: [created.id], actor });
    await recordAudit(tx, now, { actor, action: 'person.created', target: created.id, details: { email, username: created.username, groups: groupIds, invited: invite } });
    const token = invite ? await issueToken(tx, now, created.id, 'password_reset', WELCOME_LINK_TTL_MS) : undefined;
    return { person: created, link: token && `${ctx.config.issuer}/reset-password?token=${encodeURIComponent(token)}` };
  });
  if (link) sendInBackground(ctx, welcomeMessage(person.email, link, ctx.config.locale, serviceName(ctx.config.issuer)), log, 'welcome');
  return person;
}

/**
 * Enables or disables a person; disabling ends every session they have (back-channel logout
 * included). The plugins' guards may refuse it first (the last owner: administrators/plugin.ts),
 * and hear of it after (`personStatusChanged`).
 */
export async function setPersonStatus(ctx: AppContext, id: string, status: PersonStatus, actor: string): Promise<void> {
  const now = ctx.clock.now();
  await transaction(ctx.db, async (tx) => {
    const person = await personOrNotFound(tx, id);
    if (person.status === status) return;
    await guardPerson(ctx.registries, tx, person, { kind: status === 'disabled' ? 'disable' : 'enable' }, actor);
    await exec(tx.update(people).set({ status, updatedAt: now }).where(eq(people.id, id)));
    const ended = status === 'disabled' ? await endSessions(ctx, tx, now, { personId: id }, 'person_disabled') : undefined;
    if (status === 'disabled') await recordPersonEvent(tx, now, id, 'person.disabled', { userId: id, email: person.email, username: person.username, reason: 'administrator' });
    await recordAudit(tx, now, {
      actor,
      action: status === 'disabled' ? 'person.disabled' : 'person.enabled',
      target: id,
      details: { email: person.email, ...(ended ? { sessionsEnded: ended.sessionIds.length } : {}) },
    });
    await ctx.hooks.emit('personStatusChanged', { tx, now, person: { ...person, status, updatedAt: now }, status, actor });
  });
  ctx.wakeWebhooks();
}

/**
 * Removes the person everywhere: sessions ended (with back-channel logout), then a resumable
 * purge. The plugins' guards may refuse it first (the last owner); they hear of it in the purge's
 * first transaction, before the person's row goes (`personDeleted`: a role is taken away).
 */
export async function deletePerson(ctx: AppContext, id: string, actor: string): Promise<void> {
  const now = ctx.clock.now();
  const person = await personOrNotFound(ctx.db, id);
  await transaction(ctx.db, async (tx) => {
    await guardPerson(ctx.registries, tx, person, { kind: 'delete' }, actor);
    await endSessions(ctx, tx, now, { personId: id }, 'person_deleted');
  });
  const apps = await many(ctx.db.select({ applicationId: memberships.applicationId }).from(memberships).where(eq(memberships.personId, id)));
  await beginPurge(ctx, { kind: 'person', target: id, actor }, async (tx) => {
    await ctx.hooks.emit('personDeleted', { tx, now, person, actor });
    await exec(tx.delete(people).where(eq(people.id, id)));
    const data = { id, email: person.email, username: person.username };
    for (const { applicationId } of apps) await recordEvent(tx, now, applicationId, 'person.deleted', data);
    await recordAudit(tx, now, { actor, action: 'person.deleted', target: id, details: { email: person.email, applications: apps.map((a) => a.applicationId) } });
  }, { cascade: false });
  ctx.wakeWebhooks();
}

/** Sends the password-reset e-mail (at most one a minute per person, like the sign-in page's). */
export async function sendPasswordReset(ctx: AppContext, id: string, actor: string, log: Pick<FastifyBaseLogger, 'warn'>): Promise<void> {
  const person = await personOrNotFound(ctx.db, id);
  if (person.sourceId !== null) throw managedBySource(`${person.email}'s password is kept by their directory source; reset it there.`);
  await guardPerson(ctx.registries, ctx.db, person, { kind: 'password' }, actor);
  if (!mailerFor(ctx.config)) throw conflict('mail_not_configured', 'No mail server is configured (SMTP_URL), so no reset e-mail can be sent.');
  if (person.status === 'disabled') throw conflict('person_disabled', `${person.email} is disabled: enable them first.`);
  await requestPasswordReset(ctx, person.email, log);
  await recordAudit(ctx.db, ctx.clock.now(), { actor, action: 'person.password_reset_sent', target: id, details: { email: person.email } });
}

/**
 * A password-reset link for the administrator to hand over themselves (issue 44, m6): where no mail
 * server is configured, or the e-mail did not arrive. The same single-use, one-hour link as the
 * e-mail's (a newer one, or an e-mailed one, replaces it); audited, never logged.
 */
export async function makePasswordResetLink(ctx: AppContext, id: string, actor: string): Promise<{ url: string; expiresAt: string }> {
  const person = await personOrNotFound(ctx.db, id);
  if (person.sourceId !== null) throw managedBySource(`${person.email}'s password is kept by their directory source; reset it there.`);
  await guardPerson(ctx.registries, ctx.db, person, { kind: 'password' }, actor);
  if (person.status === 'disabled') throw conflict('person_disabled', `${person.email} is disabled: enable them first.`);
  const now = ctx.clock.now();
  const token = await transaction(ctx.db, async (tx) => {
    const made = await issueToken(tx, now, person.id, 'password_reset');
    await recordAudit(tx, now, { actor, action: 'person.password_reset_link_made', target: id, details: { email: person.email } });
    return made;
  });
  return { url: `${ctx.config.issuer}/reset-password?token=${encodeURIComponent(token)}`, expiresAt: iso(new Date(now.getTime() + TOKEN_TTL_MS))! };
}

export async function personSessions(ctx: AppContext, id: string) {
  await personOrNotFound(ctx.db, id);
  const rows = await liveSessionsOf(ctx.db, id, ctx.clock.now(), 200);
  return {
    sessions: rows.map((s) => ({
      id: s.id, device: sessionDevice(s), ip: s.ip, createdAt: iso(s.createdAt)!, lastSeenAt: iso(s.lastSeenAt)!, expiresAt: iso(s.expiresAt)!,
      multiFactor: s.amr.includes('mfa'),
    })),
  };
}

export async function signOutEverywhere(ctx: AppContext, id: string, actor: string): Promise<{ sessionsEnded: number }> {
  const now = ctx.clock.now();
  const ended = await transaction(ctx.db, async (tx) => {
    const person = await personOrNotFound(tx, id);
    const result = await endSessions(ctx, tx, now, { personId: id }, 'signed_out_by_administrator');
    await recordAudit(tx, now, { actor, action: 'person.signed_out', target: id, details: { email: person.email, sessionsEnded: result.sessionIds.length } });
    return result.sessionIds.length;
  });
  ctx.wakeWebhooks();
  return { sessionsEnded: ended };
}


