/**
 * The accounts feature's e-mails: password reset and e-mail verification (each carries one
 * single-use link valid for an hour), and the notice that an account is being guessed at. Each is
 * written in the reader's language (the catalogues' `mail.*`; i18n/index.ts): the language of the
 * browser that asked for it, or the installation's. Every interpolated value is escaped in the
 * HTML part.
 */
import { escapeHtml, type MailMessage } from './mailer.js';
import { textTranslator, type Locale } from '../i18n/index.js';

function linkMessage(to: string, locale: Locale, kind: 'reset' | 'verify', url: string): MailMessage {
  const t = textTranslator(locale);
  const lead = t(`mail.${kind}.lead`, { email: to });
  const action = t(`mail.${kind}.action`);
  const after = `${t('mail.linkOnce')} ${t(`mail.${kind}.ignore`)}`;
  const text = `${lead}\n\n${action}:\n${url}\n\n${after}\n`;
  const html =
    `<!doctype html><html lang="${locale}"><body style="font-family:sans-serif">` +
    `<p>${escapeHtml(lead)}</p>` +
    `<p><a href="${escapeHtml(url)}">${escapeHtml(action)}</a></p>` +
    `<p style="color:#555">${escapeHtml(after)}</p>` +
    `</body></html>`;
  return { to, subject: t(`mail.${kind}.subject`), text, html };
}

export function passwordResetMessage(to: string, url: string, locale: Locale): MailMessage {
  return linkMessage(to, locale, 'reset', url);
}

/** An account an administrator created (issue 33): a link to choose the password, valid for a week. */
export function welcomeMessage(to: string, url: string, locale: Locale, service: string): MailMessage {
  const t = textTranslator(locale);
  const lead = t('mail.welcome.lead', { email: to, service });
  const action = t('mail.welcome.action');
  const after = t('mail.welcome.until');
  return {
    to,
    subject: t('mail.welcome.subject', { service }),
    text: `${lead}\n\n${action}:\n${url}\n\n${after}\n`,
    html:
      `<!doctype html><html lang="${locale}"><body style="font-family:sans-serif">` +
      `<p>${escapeHtml(lead)}</p><p><a href="${escapeHtml(url)}">${escapeHtml(action)}</a></p><p style="color:#555">${escapeHtml(after)}</p>` +
      `</body></html>`,
  };
}

export function verificationMessage(to: string, url: string, locale: Locale): MailMessage {
  return linkMessage(to, locale, 'verify', url);
}

/**
 * Sent when strangers lock an account by guessing its password (accounts/sign-in-back-off.ts).
 * It says what happened and what still works; it carries no link (nothing to phish with) and
 * nothing about the guesses beyond their number. The guesser's browser is not the reader's, so
 * it is written in the installation's language.
 */
export function guessingMessage(to: string, failures: number, at: Date, locale: Locale): MailMessage {
  const t = textTranslator(locale);
  const paragraphs = [
    t('mail.guessing.tried', { count: failures, email: to, at: at.toISOString().replace('T', ' ').slice(0, 16) }),
    t('mail.guessing.known'),
    t('mail.guessing.advice'),
  ];
  return {
    to,
    subject: t('mail.guessing.subject'),
    text: `${paragraphs.join('\n\n')}\n`,
    html: `<!doctype html><html lang="${locale}"><body style="font-family:sans-serif">${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('')}</body></html>`,
  };
}
