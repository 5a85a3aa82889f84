/**
 * The accounts feature's e-mails: password reset and e-mail verification. Each carries one
 * single-use link valid for an hour; every interpolated value is escaped in the HTML part.
 */
import { escapeHtml, type MailMessage } from './mailer.js';

function linkMessage(to: string, subject: string, lead: string, action: string, url: string, ignore: string): MailMessage {
  const text = `${lead}\n\n${action}:\n${url}\n\nThe link works once, for one hour. ${ignore}\n`;
  const html =
    `<!doctype html><html><body style="font-family:sans-serif">` +
    `<p>${escapeHtml(lead)}</p>` +
    `<p><a href="${escapeHtml(url)}">${escapeHtml(action)}</a></p>` +
    `<p style="color:#666">The link works once, for one hour. ${escapeHtml(ignore)}</p>` +
    `</body></html>`;
  return { to, subject, text, html };
}

export function passwordResetMessage(to: string, url: string): MailMessage {
  return linkMessage(
    to,
    'Reset your Gatehouse password',
    `Someone (hopefully you) asked to reset the password of the Gatehouse account ${to}.`,
    'Choose a new password',
    url,
    'If you did not ask for this, ignore this e-mail: your password stays as it is.',
  );
}

export function verificationMessage(to: string, url: string): MailMessage {
  return linkMessage(
    to,
    'Confirm your e-mail address',
    `Please confirm that ${to} is your e-mail address for Gatehouse.`,
    'Confirm my e-mail address',
    url,
    'If you did not create this account, ignore this e-mail.',
  );
}
