/**
 * Password reset by e-mail (issue 5 item 4), when `SMTP_URL` is set.
 *
 * Asking always gets the same answer, sent before any e-mail goes out, whether or not the
 * address has an account (nothing to enumerate, in content or timing). The link is single-use
 * and valid for one hour. Setting the new password proves the mailbox (e-mail verified, back-off
 * lifted), gives a provider-only person a `credential` sign-in, and ends every session and
 * refresh token of the person: whoever knew the old password is out. When the e-mail was not
 * verified before, every linked external account goes too (account pre-hijacking: someone who
 * registered the address first must not keep a provider sign-in into the owner's account).
 */
import { managedBySource } from '../http/problem.js';
import { eq } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import { people, type Person } from '../db/schema.js';
import { recordAudit } from '../audit/record.js';
import { mailerFor } from '../mail/mailer.js';
import { passwordResetMessage } from '../mail/account-messages.js';
import { addCredentialAccount, deleteLinkedAccount, linkedAccountsOf, personById } from '../self-service/queries.js';
import { endSessions } from './session.js';
import { checkPasswordLength, hashPassword } from './passwords.js';
import { checkNewPassword } from './password-policy.js';
import { findPersonByEmail } from './people.js';
import { clearBackOff } from './sign-in-back-off.js';
import { issueToken, linkPerson, redeemToken, sentRecently } from './one-time-tokens.js';
import { sendInBackground } from './email-verification.js';
import type { Locale } from '../i18n/index.js';
import { one, transaction } from '../db/store.js';
import { guardPerson } from '../plugin-api/registries.js';

/** Sends a reset link when `email` has an account (at most one a minute); says nothing either way. */
export async function requestPasswordReset(
  ctx: AppContext,
  email: string,
  log: Pick<FastifyBaseLogger, 'warn'>,
  options: { locale?: Locale; carry?: string } = {},
): Promise<void> {
  if (!mailerFor(ctx.config)) return;
  const person = await findPersonByEmail(ctx.db, email);
  // A directory source keeps this person's password (spec directory-sources.md): nothing to reset here.
  if (!person || person.sourceId !== null) return;
  const now = ctx.clock.now();
  const token = await transaction(ctx.db, async (tx) => (await sentRecently(tx, now, person.id, 'password_reset') ? undefined : await issueToken(tx, now, person.id, 'password_reset')));
  if (!token) return;
  // `carry`: the application and authorization request the reset interrupted (client_id, return_to).
  const url = `${ctx.config.issuer}/reset-password?token=${encodeURIComponent(token)}${options.carry ? `&${options.carry}` : ''}`;
  sendInBackground(ctx, passwordResetMessage(person.email, url, options.locale ?? ctx.config.locale), log, 'password reset');
}

/** Sets the new password from a reset link and signs the person out everywhere. */
export async function resetPassword(ctx: AppContext, token: string, password: string, path = 'body.password'): Promise<Person> {
  checkPasswordLength(password, path);
  const linked = await linkPerson(ctx, token, 'password_reset'); // refuse a bad link before spending a hash on it
  if (linked.sourceId !== null) throw managedBySource('This password is kept by your organisation\'s directory; change it there.');
  await checkNewPassword(ctx.db, password, { path, userInputs: [linked.email, linked.name] });
  const passwordHash = await hashPassword(password);
  const now = ctx.clock.now();
  return await transaction(ctx.db, async (tx) => {
    const personId = await redeemToken(tx, now, token, 'password_reset');
    const before = (await personById(tx, personId))!;
    // A plugin may keep the person's password elsewhere (a directory source: 409 managed_by_source).
    await guardPerson(ctx.registries, tx, before, { kind: 'password' }, `person:${personId}`);
    const wasVerified = before.emailVerified;
    const person = (await one(tx
      .update(people)
      .set({ passwordHash, emailVerified: true, updatedAt: now })
      .where(eq(people.id, personId))
      .returning()))!;
    const accounts = await linkedAccountsOf(tx, personId);
    // First proof of the mailbox: whoever created or used the account before it (anyone can sign
    // up with an address they do not own, or arrive through a provider that did not verify it)
    // may have linked their own provider to it. The mailbox's owner takes the account alone.
    if (!wasVerified) {
      for (const account of accounts.filter((a) => a.provider !== 'credential')) {
        await deleteLinkedAccount(tx, account.id);
        await recordAudit(tx, now, {
          actor: `person:${personId}`, action: 'person.account_unlinked', target: personId,
          details: { provider: account.provider, reason: 'password_reset_unverified_email' },
        });
      }
    }
    if (!accounts.some((a) => a.provider === 'credential')) await addCredentialAccount(tx, person, now);
    await clearBackOff(ctx.db, person.email);
    await endSessions(ctx, tx, now, { personId }, 'password_reset');
    await recordAudit(tx, now, { actor: `person:${personId}`, action: 'person.password_reset', target: personId });
    return person;
  });
}
