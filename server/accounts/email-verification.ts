/**
 * E-mail verification (issue 5 item 4): when `SMTP_URL` is set, e-mail sign-up (and a person's
 * request) sends a single-use link to `/verify-email?token=`; opening it shows a button whose form
 * post marks `emailVerified` (a GET spends nothing, so mail scanners that fetch links do not burn
 * it), which invite-only applications rely on to accept pending invitations automatically.
 */
import { eq } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import { people, type Person } from '../db/schema.js';
import { recordAudit } from '../audit/record.js';
import { mailerFor, type MailMessage } from '../mail/mailer.js';
import { verificationMessage } from '../mail/account-messages.js';
import { issueToken, redeemToken, sentRecently } from './one-time-tokens.js';
import type { Locale } from '../i18n/index.js';
import { one, transaction } from '../db/store.js';

/**
 * Sends a message without holding up the answer (so its timing tells nothing), logging a failure
 * without the message: links in it are secrets.
 */
export function sendInBackground(ctx: AppContext, message: MailMessage, log: Pick<FastifyBaseLogger, 'warn'>, what: string): void {
  const mailer = mailerFor(ctx.config);
  if (!mailer) return;
  mailer.send(message).catch((error: unknown) => log.warn({ error: String((error as Error)?.message ?? error) }, `${what} e-mail not sent`));
}

export type VerificationSend = 'sent' | 'already_verified' | 'mail_not_configured' | 'sent_recently';

/**
 * Sends a verification link to an unverified person when mail is configured, at most once a
 * minute; says why not otherwise (the sign-up paths ignore the answer, the resend endpoint shows it).
 * Written in `locale`: the language of the browser that caused it.
 */
export async function sendVerificationEmail(
  ctx: AppContext,
  person: Person,
  log: Pick<FastifyBaseLogger, 'warn'>,
  locale: Locale = ctx.config.locale,
): Promise<VerificationSend> {
  if (person.emailVerified) return 'already_verified';
  if (!mailerFor(ctx.config)) return 'mail_not_configured';
  const now = ctx.clock.now();
  const token = await transaction(ctx.db, async (tx) => (await sentRecently(tx, now, person.id, 'email_verification') ? undefined : await issueToken(tx, now, person.id, 'email_verification')));
  if (!token) return 'sent_recently';
  const url = `${ctx.config.issuer}/verify-email?token=${encodeURIComponent(token)}`;
  sendInBackground(ctx, verificationMessage(person.email, url, locale), log, 'verification');
  return 'sent';
}

/** Redeems a verification link and marks the person's e-mail verified; returns the person. */
export async function verifyEmail(ctx: AppContext, token: string): Promise<Person> {
  const now = ctx.clock.now();
  return await transaction(ctx.db, async (tx) => {
    const personId = await redeemToken(tx, now, token, 'email_verification');
    const person = (await one(tx.update(people).set({ emailVerified: true, updatedAt: now }).where(eq(people.id, personId)).returning()))!;
    await recordAudit(tx, now, { actor: `person:${personId}`, action: 'person.email_verified', target: personId });
    return person;
  });
}
