/**
 * The invitation e-mail (plain text and HTML) and its delivery. Sending happens after the
 * invitation's transaction has committed; the outcome is written back onto the invitation, so a
 * failed send never loses the invitation (the administrator still has `acceptUrl`).
 */
import { eq } from 'drizzle-orm';
import { invitations, type Invitation } from '../db/schema.js';
import type { AppContext } from '../context.js';
import { escapeHtml, mailerFor, type MailMessage } from '../mail/mailer.js';
import { exec } from '../db/store.js';

const SEND_CONCURRENCY = 4;

export interface InvitationMailData {
  appName: string;
  acceptUrl: string;
  message: string | null;
  role: string;
  expiresAt: Date;
}

export function invitationMessage(to: string, data: InvitationMailData): MailMessage {
  const expires = data.expiresAt.toUTCString();
  const quoted = data.message ? `\n\nMessage from the administrator:\n\n${data.message}\n` : '\n';
  const text =
    `You have been invited to join ${data.appName} as ${data.role}.` +
    quoted +
    `\nAccept the invitation here:\n${data.acceptUrl}\n\nThe link works until ${expires}. ` +
    `If you did not expect this invitation you can ignore this e-mail.\n`;
  const html =
    `<!doctype html><html><body style="font-family:sans-serif">` +
    `<p>You have been invited to join <strong>${escapeHtml(data.appName)}</strong> as ${escapeHtml(data.role)}.</p>` +
    (data.message
      ? `<blockquote style="white-space:pre-wrap;border-left:3px solid #ccc;padding-left:1em">${escapeHtml(data.message)}</blockquote>`
      : '') +
    `<p><a href="${escapeHtml(data.acceptUrl)}">Accept the invitation</a></p>` +
    `<p style="color:#666">The link works until ${escapeHtml(expires)}. If you did not expect this invitation you can ignore this e-mail.</p>` +
    `</body></html>`;
  return { to, subject: `You are invited to ${data.appName}`, text, html };
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
        }),
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
