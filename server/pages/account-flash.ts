/**
 * One-shot messages for the account page's post/redirect/get (issue 25, item 5): a refused form
 * leaves its message (and the values typed into a profile form) for the redirect's GET to show.
 *
 * They travel in a short-lived cookie, not in process memory, so that the GET may land on another
 * instance behind a load balancer (PostgreSQL mode, issue 26) and nothing is kept on the server.
 * The cookie (`gatehouse_flash`, `__Host-` and Secure under HTTPS, HttpOnly, SameSite=Lax, one
 * minute) holds the message as base64url JSON with its expiry, and an HMAC-SHA256 of both keyed by
 * the browser's session token: only the server that read that token can make one, a cookie planted
 * by a sibling host or copied to another session does not verify, and no key has to be shared
 * between instances. The GET that reads it clears it (shown once).
 *
 * A browser drops a cookie above 4 KB: typed values that would not fit are left out (the message
 * still shows; the form then shows the stored values).
 */
import { createHmac } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { cookieOptions, sessionToken } from '../accounts/session.js';
import { safeEqual } from '../util/crypto.js';

/** Where a refusal is shown: next to the form that caused it. */
/** Where a refusal is shown: a core section, an application's profile form, or a plugin's section by its name. */
export type ErrorTarget = `profile:${string}` | 'sessions' | 'accounts' | 'password' | 'security' | 'verify' | 'names' | 'general' | (string & {});

export interface AccountFlash {
  error?: { target: ErrorTarget; message: string };
  values?: { applicationId: string; profile: Record<string, string> } | undefined;
}

export const FLASH_KEEP_MS = 60_000;
/** Below browsers' 4,096-byte limit for a cookie's name, value and attributes. */
const MAX_VALUE_LENGTH = 3_800;
const COOKIE = 'gatehouse_flash';

export function flashCookieName(config: Config): string {
  return config.issuer.startsWith('https:') ? `__Host-${COOKIE}` : COOKIE;
}

const mac = (sessionToken: string, body: string) =>
  createHmac('sha256', sessionToken).update(`account-flash.${body}`).digest('base64url');

function cookieValue(token: string, flash: AccountFlash, expiresAt: number): string {
  const body = Buffer.from(JSON.stringify({ exp: expiresAt, flash })).toString('base64url');
  return `${body}.${mac(token, body)}`;
}

/** Leaves `flash` for this browser's next GET of the account page (the caller then redirects). */
export function putFlash(config: Config, request: FastifyRequest, reply: FastifyReply, flash: AccountFlash, now: number): void {
  const token = sessionToken(config, request);
  if (!token) return;
  let value = cookieValue(token, flash, now + FLASH_KEEP_MS);
  if (value.length > MAX_VALUE_LENGTH) value = cookieValue(token, { error: flash.error }, now + FLASH_KEEP_MS);
  if (value.length > MAX_VALUE_LENGTH) return;
  reply.setCookie(flashCookieName(config), value, cookieOptions(config, FLASH_KEEP_MS / 1000));
}

/**
 * The flash this browser's cookie holds, if it verifies under its session token and is not
 * expired; the cookie is cleared either way.
 */
export function takeFlash(config: Config, request: FastifyRequest, reply: FastifyReply, now: number): AccountFlash | undefined {
  const name = flashCookieName(config);
  const value = request.cookies[name];
  if (value === undefined) return undefined;
  const { maxAge: _, ...options } = cookieOptions(config, 0);
  reply.clearCookie(name, options);
  const token = sessionToken(config, request);
  const [body, signature, extra] = value.split('.');
  if (!token || !body || !signature || extra !== undefined || value.length > MAX_VALUE_LENGTH) return undefined;
  if (!safeEqual(signature, mac(token, body))) return undefined;
  try {
    const { exp, flash } = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { exp: number; flash: AccountFlash };
    return typeof exp === 'number' && now < exp && typeof flash === 'object' && flash !== null ? flash : undefined;
  } catch {
    return undefined;
  }
}
