/**
 * Outgoing e-mail through nodemailer, built from `SMTP_URL` / `SMTP_FROM` (DESIGN §3). Used for
 * invitations and, by the accounts feature, for password reset and e-mail verification.
 * Without `SMTP_URL` there is no mailer and callers fall back to showing the link instead.
 */
import { createRequire } from 'node:module';
import type { Transporter } from 'nodemailer';
import type Nodemailer from 'nodemailer';
import type { Config } from '../config.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  /** Sends one message; rejects with the transport's error when the server refuses it. */
  send(message: MailMessage): Promise<void>;
  close(): void;
}

// One transport per configuration object, so every feature shares the SMTP connection pool.
const mailers = new WeakMap<Config, Mailer>();

/** The mailer for this configuration, or undefined when `SMTP_URL` is not set. */
export function mailerFor(config: Config): Mailer | undefined {
  if (!config.smtpUrl) return undefined;
  let mailer = mailers.get(config);
  if (!mailer) {
    mailer = createMailer(config.smtpUrl, config.smtpFrom);
    mailers.set(config, mailer);
  }
  return mailer;
}

export function createMailer(smtpUrl: string, from: string): Mailer {
  // nodemailer loads with the first mailer, so a server without SMTP never pays for it.
  const nodemailer = createRequire(import.meta.url)('nodemailer') as typeof Nodemailer;
  const transport: Transporter = nodemailer.createTransport(smtpUrl);
  return {
    async send(message) {
      await transport.sendMail({ from, ...message });
    },
    close() {
      transport.close();
    },
  };
}

/** Escapes text for the HTML part of a message (every interpolated value goes through this). */
export { escapeHtml } from '../util/html.js';
