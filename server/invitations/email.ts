/**
 * The invitation e-mail (plain text and HTML) and its delivery. Sending happens after the
 * invitation's transaction has committed; the outcome is written back onto the invitation, so a
 * failed send never loses the invitation (the administrator still has `acceptUrl`).
 */
import { eq } from 'drizzle-orm';
import { invitations, type Invitation } from '../db/schema.js';
import type { AppContext } from '../context.js';
import { escapeHtml, mailerFor, type MailMessage } from '../mail/mailer.js';
import { textTranslator, type Locale } from '../i18n/index.js';
import { DEFAULT_LOCALE } from '../i18n/locales.js';
import { exec } from '../db/store.js';

const SEND_CONCURRENCY = 4;

export interface InvitationMailData {
  appName: string;
  acceptUrl: string;
  message: string | null;
  role: string;
  expiresAt: Date;
}

/**
 * The invitation in `locale` (the installation's GATEHOUSE_LOCALE: the invitee has not visited
 * yet, so no browser says which language they read).
 */
export function invitationMessage(to: string, data: InvitationMailData, locale: Locale = DEFAULT_LOCALE): MailMessage {
  const t = textTranslator(locale);
  const expires = data.expiresAt.toUTCString();
  const role = t(`roles.${data.role}`, { defaultValue: data.role });
  const quoted = data.message ? `\n\n${t('mail.invitation.messageFrom')}\n\n${data.message}\n` : '\n';
  const until = t('mail.invitation.until', { date: expires });
  const text =
    t('mail.invitation.lead', { app: data.appName, role }) +
    quoted +
    `\n${t('mail.invitation.actionText')}\n${data.acceptUrl}\n\n${until}\n`;
  const html =
    `<!doctype html><html lang="${locale}"><body style="font-family:sans-serif">` +
    `<p>${escapeHtml(t('mail.invitation.lead', { app: data.appName, role }))}</p>` +
    (data.message
      ? `<blockquote style="white-space:pre-wrap;border-left:3px solid #ccc;padding-left:1em">${escapeHtml(data.message)}</blockquote>`
      : '') +
    `<p><a href="${escapeHtml(data.acceptUrl)}">${escapeHtml(t('mail.invitation.action'))}</a></p>` +
    `<p style="color:#666">${escapeHtml(until)}</p>` +
    `</body></html>`;
  return { to, subject: t('mail.invitation.subject', { app: data.appName }), text, html };
}

/**
 * Sends each invitation (when SMTP is configured) and records `emailSent` / `emailError` on it.
 * Returns the delivery outcome by invitation id; without SMTP every outcome is "not sent".
 */
export async function sendInvitationEmails(
  ctx: AppContext,
  appName: string,
  items: { invitation: Invitation; acceptUrl: string }[],
): Promise<Map<string, { emailSent: boolean; emailError: string | null }>> {
  const outcomes = new Map<string, { emailSent: boolean; emailError: string | null }>();
  const mailer = mailerFor(ctx.config);
  if (!mailer) {
    for (const { invitation } of items) outcomes.set(invitation.id, { emailSent: false, emailError: null });
    return outcomes;
  }
  const sendOne = async ({ invitation, acceptUrl }: { invitation: Invitation; acceptUrl: string }) => {
    let outcome: { emailSent: boolean; emailError: string | null };
    try {
      await mailer.send(
        invitationMessage(invitation.email, {
          appName,
          acceptUrl,
          message: invitation.message,
          role: invitation.role,
          expiresAt: invitation.expiresAt,
        }, ctx.config.locale),
      );
      outcome = { emailSent: true, emailError: null };
    } catch (error) {
      // The transport's message (e.g. "550 mailbox unavailable"); never the link itself.
      outcome = { emailSent: false, emailError: String((error as Error).message ?? error).slice(0, 500) };
    }
    outcomes.set(invitation.id, outcome);
    await exec(ctx.db
      .update(invitations)
      .set({ ...outcome, lastSentAt: outcome.emailSent ? ctx.clock.now() : invitation.lastSentAt })
      .where(eq(invitations.id, invitation.id)));
  };
  // A few connections at a time: 100 invitations must not open 100 SMTP connections at once.
  const queue = [...items];
  const worker = async () => {
    for (let item = queue.shift(); item; item = queue.shift()) await sendOne(item);
  };
  await Promise.all(Array.from({ length: Math.min(SEND_CONCURRENCY, items.length) }, worker));
  return outcomes;
}
