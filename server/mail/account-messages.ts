/**
 * The accounts feature's e-mails: password reset and e-mail verification (each carries one
 * single-use link valid for an hour), and the notice that an account is being guessed at. Every
 * interpolated value is escaped in the HTML part.
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

/**
 * Sent when strangers lock an account by guessing its password (accounts/sign-in-back-off.ts).
 * It says what happened and what still works; it carries no link (nothing to phish with) and
 * nothing about the guesses beyond their number.
 */
export function guessingMessage(to: string, failures: number, at: Date): MailMessage {
  const paragraphs = [
    `${failures} wrong passwords were tried for ${to} on Gatehouse, the last at ${at.toISOString().replace('T', ' ').slice(0, 16)} UTC. ` +
      'Sign-ins with a password from browsers Gatehouse does not know are paused for a while.',
    'Browsers you have signed in with before can still sign in, and you stay signed in where you are.',
    'If this was not you, someone may be guessing your password: choose a strong one you use nowhere else ' +
      '(change it on your account page, or with "Forgot password" on the sign-in page).',
  ];
  return {
    to,
    subject: 'Someone is trying to sign in to your Gatehouse account',
    text: `${paragraphs.join('\n\n')}\n`,
    html: `<!doctype html><html><body style="font-family:sans-serif">${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('')}</body></html>`,
  };
}
