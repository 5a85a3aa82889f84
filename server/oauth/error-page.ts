/**
 * The page shown when an authorization (or end-session) request cannot be answered by redirect
 * (unknown client, missing or unregistered `redirect_uri`): redirecting there would make us an
 * open redirector (RFC 6749 §4.1.2.1). It is a hosted page like the others (issue 25, item 1):
 * the shared layout and stylesheet (both schemes), the reader's language, and the application's
 * branding when the client is known.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Problem } from '../http/problem.js';
import { pageText } from '../i18n/index.js';
import { renderPage } from '../pages/render.js';
import { pageBrand } from '../pages/brand.js';
import { problemText } from '../pages/text.js';
import type { Application } from '../db/schema.js';

/**
 * Sends the error page: `error` is the OAuth error code shown to quote to an administrator,
 * `description` the sentence in the reader's words (HTML-safe: translated, or escaped). `origin`:
 * served on another host through its proxy (forward auth's callback; render.ts `origin`).
 */
export function sendErrorPage(reply: FastifyReply, status: number, error: string, description: string, app?: Application, origin?: string): FastifyReply {
  const { t } = pageText(reply.server.ctx.config, reply.request);
  return renderPage(reply.status(status), 'oauth-error', { title: t('oauthError.title'), code: error, description }, { brand: pageBrand(app), here: '/account', origin });
}

/**
 * Error handler for the front-channel endpoints (authorize, end-session): a browser navigated
 * here, so a body or content type Fastify refuses is answered with this page, not RFC 6749 JSON.
 */
export function errorPageHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { locale, t } = pageText(reply.server.ctx.config, request);
  // Our own refusals (the sign-out form's CSRF check) keep their status, code and sentence.
  if (error instanceof Problem && error.status < 500) return sendErrorPage(reply, error.status, error.code, problemText(t, locale, error));
  const status = (error as Partial<FastifyError>)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return sendErrorPage(reply, status, 'invalid_request', t('oauthError.invalidRequest'));
  }
  request.log.error({ err: error }, 'unhandled error on a front-channel OAuth endpoint');
  return sendErrorPage(reply, 500, 'server_error', t('oauthError.serverError'));
}
