/**
 * How an authorization response reaches the application (OAuth 2.0 Multiple Response Type
 * Encoding Practices §2.1, OAuth 2.0 Form Post Response Mode, RFC 9207 `iss`):
 * - `query` (the default for `response_type=code`): a 302 to the redirect URI with the parameters
 *   in its query;
 * - `form_post`: a 200 HTML page whose form POSTs the parameters to the redirect URI and submits
 *   itself (a button for browsers without script). Its CSP lets that form reach the redirect URI's
 *   origin and nothing else, and lets only the one inline script whose hash it names run;
 * - `fragment` is never right for a code (Multiple Response Types §3.0: the default for `code` is
 *   `query`, and a code in a fragment is read by scripts it was not meant for): `invalid_request`,
 *   as is any other value.
 * Errors that redirect use the mode asked for once it was read; an unreadable `response_mode`
 * itself is answered in the query.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { pageText } from '../../i18n/index.js';
import { escapeHtml } from '../../util/html.js';
import { invalidRequest } from '../errors.js';
import { param, type RawParams } from '../params.js';
import { responseUrl } from './response-url.js';

export type ResponseMode = 'query' | 'form_post';

/** An authorization response not sent yet: where, how, and its parameters (`undefined` ones are left out). */
export interface AuthorizationResponse {
  mode: ResponseMode;
  redirectUri: string;
  params: Record<string, string | undefined>;
}

/** The response's parameters that have a value, in order. */
export const responseFields = (params: AuthorizationResponse['params']) =>
  Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);

export const RESPONSE_MODES: readonly ResponseMode[] = ['query', 'form_post'];

/**
 * The response mode an authorization request asks for. Throws `invalid_request` (to be answered
 * in the query) for a repeated, unknown or `fragment` mode, and for `form_post` to a redirect URI
 * that is not http(s): a browser cannot post a form to a custom scheme.
 */
export function responseModeOf(query: RawParams, redirectUri: string): ResponseMode {
  const mode = param(query, 'response_mode');
  if (mode === undefined || mode === 'query') return 'query';
  if (mode === 'form_post') {
    if (!/^https?:$/.test(new URL(redirectUri).protocol)) throw invalidRequest('response_mode=form_post needs an http(s) redirect_uri.');
    return 'form_post';
  }
  if (mode === 'fragment') throw invalidRequest('response_mode=fragment is not allowed with response_type=code; use query or form_post.');
  throw invalidRequest('response_mode must be query or form_post.');
}

/** The one script of the page: submit the form at once (the button stays for browsers without script). */
const AUTO_SUBMIT = 'document.forms[0].submit();';
const AUTO_SUBMIT_HASH = `'sha256-${createHash('sha256').update(AUTO_SUBMIT).digest('base64')}'`;

/**
 * The page's policy: nothing may load, the one script with this hash may run, and the form may
 * post to `origin` only (not even to this server), never framed.
 */
export function formPostCsp(origin: string): string {
  return `default-src 'none'; script-src ${AUTO_SUBMIT_HASH}; form-action ${origin}; frame-ancestors 'none'; base-uri 'none'`;
}

/**
 * The form-post page's HTML: the parameters as hidden fields of a form posting to `redirectUri`,
 * a line and a button for a browser that does not run the auto-submit script, and the script.
 * The line is always there rather than in <noscript>: a browser may hide <noscript> content even
 * with script off (Chromium under DevTools' script switch does), leaving a bare button. Values are escaped; `undefined` values are left out. The
 * `text` is the catalogue's (trusted HTML without markup, i18n/index.ts), written as it is.
 */
export function formPostHtml(
  redirectUri: string,
  params: Record<string, string | undefined>,
  text: { lang: string; title: string; button: string; manual: string },
): string {
  const fields = responseFields(params)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  return `<!doctype html>
<html lang="${escapeHtml(text.lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${text.title}</title>
</head>
<body>
<form method="post" action="${escapeHtml(redirectUri)}">
${fields}
<p>${text.manual}</p>
<button type="submit">${text.button}</button>
</form>
<script>${AUTO_SUBMIT}</script>
</body>
</html>
`;
}

/**
 * Sends an authorization response (a code, or error parameters, with `state` and `iss`) to the
 * redirect URI in the mode asked for: a 302 (`status` lets the consent page's form answer 303), or
 * the form-post page.
 */
export function sendAuthorizationResponse(
  reply: FastifyReply,
  mode: ResponseMode,
  redirectUri: string,
  params: Record<string, string | undefined>,
  status: 302 | 303 = 302,
): FastifyReply {
  reply.header('cache-control', 'no-store');
  if (mode === 'query') return reply.redirect(responseUrl(redirectUri, params), status);
  const { locale, t } = pageText(reply.server.ctx.config, reply.request);
  const html = formPostHtml(redirectUri, params, {
    lang: locale, title: t('formPost.title'), button: t('formPost.button'), manual: t('formPost.manual'),
  });
  return reply
    .status(200)
    .header('pragma', 'no-cache')
    .header('content-security-policy', formPostCsp(new URL(redirectUri).origin))
    .header('content-language', locale)
    .type('text/html; charset=utf-8')
    .send(html);
}
