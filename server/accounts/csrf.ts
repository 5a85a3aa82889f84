/**
 * CSRF defences (DESIGN §5).
 *
 * - JSON writes that rely on the session cookie must be `Content-Type: application/json` (which a
 *   cross-site form cannot send without a CORS preflight) when they are POSTs or carry a body. A
 *   bodyless DELETE (or PATCH/PUT) needs no content type: those methods are not CORS-simple, so a
 *   cross-site page can send them only after a preflight, which we never grant.
 * - Whatever the method, an `Origin` header must be the issuer's origin (browsers always send it
 *   on cross-site requests), and `Sec-Fetch-Site: cross-site` is refused when no Origin came.
 * - Hosted HTML forms carry a double-submit token: a random per-browser cookie (HttpOnly,
 *   SameSite=Lax, `__Host-` under HTTPS) whose value the form repeats in a hidden field.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { forbidden } from '../http/problem.js';
import { randomToken, safeEqual } from '../util/crypto.js';
import { cookieOptions } from './session.js';

export const csrfFailed = (detail: string) => forbidden('csrf_failed', detail);

export function issuerOrigin(config: Config): string {
  return new URL(config.issuer).origin;
}

/** Whether the request carries a body (a length above zero, or a chunked one). */
function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  if (length !== undefined && length !== '0') return true;
  return request.headers['transfer-encoding'] !== undefined;
}

/** onRequest hook body for cookie-relying JSON writes (DESIGN §5). */
export function checkJsonWrite(config: Config, request: FastifyRequest): void {
  if (request.method === 'POST' || hasBody(request)) {
    const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') throw csrfFailed('This endpoint needs Content-Type: application/json.');
  }
  const origin = request.headers.origin;
  if (origin !== undefined ? origin !== issuerOrigin(config) : request.headers['sec-fetch-site'] === 'cross-site') {
    throw csrfFailed('Cross-origin requests are not accepted here.');
  }
}

const CSRF_COOKIE = 'gatehouse_csrf';
const CSRF_COOKIE_TTL = 24 * 3600;

export function csrfCookieName(config: Config): string {
  return config.issuer.startsWith('https:') ? `__Host-${CSRF_COOKIE}` : CSRF_COOKIE;
}

/** The browser's form token, creating the cookie when it has none (or it is malformed). */
export function formToken(config: Config, request: FastifyRequest, reply: FastifyReply): string {
  const existing = request.cookies[csrfCookieName(config)];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomToken();
  reply.setCookie(csrfCookieName(config), token, cookieOptions(config, CSRF_COOKIE_TTL));
  return token;
}

/** Throws 403 `csrf_failed` unless the submitted field equals the browser's cookie. */
export function checkFormToken(config: Config, request: FastifyRequest, submitted: string | undefined): void {
  const cookie = request.cookies[csrfCookieName(config)];
  if (!cookie || !submitted || !safeEqual(cookie, submitted)) {
    throw csrfFailed('The form has expired or did not come from this site. Go back, reload the page and try again.');
  }
}
