/**
 * CSRF defences (DESIGN §5).
 *
 * - JSON writes that rely on the session cookie must be `Content-Type: application/json` (which a
 *   cross-site form cannot send without a CORS preflight) and, when an `Origin` header is present,
 *   it must be the issuer's origin (browsers always send it on cross-site requests).
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

/** onRequest hook body for cookie-relying JSON writes. */
export function checkJsonWrite(config: Config, request: FastifyRequest): void {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw csrfFailed('This endpoint needs Content-Type: application/json.');
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== issuerOrigin(config)) {
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
