/**
 * Device cookies (OWASP "Slow Down Online Guessing Attacks with Device Cookies"), so that the
 * per-address lock-out cannot keep an account's owner out (issue 22).
 *
 * At each successful sign-in the browser gets a cookie naming a random nonce and an HMAC-SHA256,
 * under a server key, of that nonce bound to the signed-in address. A later password check for the
 * same address from a browser that presents a valid one is a *trusted* client: it is counted
 * against its own nonce, not against the address, so strangers locking the address do not lock it
 * out (sign-in-back-off.ts). The cookie holds no e-mail address: it is checked by recomputing the
 * HMAC for the address being signed in to. A browser keeps entries for up to four addresses
 * (shared computers), newest first.
 *
 * The key lives in `meta` (`device_cookie_key`), created on first use: a restored backup keeps
 * issued cookies valid. The cookie is HttpOnly, SameSite=Lax, `__Host-` and Secure under HTTPS.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import { meta } from '../db/schema.js';
import { safeEqual, sha256 } from '../util/crypto.js';
import { normalizeEmail } from './people.js';
import { cookieOptions } from './session.js';
import { exec, one } from '../db/store.js';

const COOKIE = 'gatehouse_device';
/** How long a browser stays known without signing in again. */
export const DEVICE_COOKIE_TTL_SECONDS = 180 * 24 * 3600;
const MAX_ENTRIES = 4;
const META_KEY = 'device_cookie_key';
const ENTRY = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

export function deviceCookieName(config: Config): string {
  return config.issuer.startsWith('https:') ? `__Host-${COOKIE}` : COOKIE;
}

const keys = new WeakMap<Db, Buffer>();

/** The server's device-cookie key, created once per database (also inside a transaction on `db`). */
async function deviceKey(db: Db): Promise<Buffer> {
  let key = keys.get(db);
  if (!key) {
    await exec(db.insert(meta)
      .values({ key: META_KEY, value: randomBytes(32).toString('base64'), updatedAt: new Date() })
      .onConflictDoNothing());
    key = Buffer.from((await one(db.select({ value: meta.value }).from(meta).where(eq(meta.key, META_KEY))))!.value, 'base64');
    keys.set(db, key);
  }
  return key;
}

/** The SHA-256 of the normalised address: the back-off's key, and what a device cookie is bound to. */
export const addressKey = (email: string): string => sha256(normalizeEmail(email));

/** An entry's signature: the nonce bound to the address (by its key). */
const signature = (key: Buffer, addressKey: string, nonce: string) =>
  createHmac('sha256', key).update(`device.${addressKey}.${nonce}`).digest('base64url');

function entries(value: string | undefined): { nonce: string; signature: string; raw: string }[] {
  if (!value || value.length > 400) return [];
  return value.split('~').flatMap((raw) => {
    const match = ENTRY.exec(raw);
    return match ? [{ nonce: match[1]!, signature: match[2]!, raw }] : [];
  });
}

/** The raw device cookie of the request, if any. */
export function deviceCookieOf(config: Config, request: FastifyRequest): string | undefined {
  return request.cookies[deviceCookieName(config)] || undefined;
}

/**
 * The nonce of a valid device-cookie entry for the address with back-off key `addressKey`, or
 * undefined (no cookie, tampered, another address's, or signed with another key).
 */
export async function trustedNonce(db: Db, cookie: string | undefined, addressKey: string): Promise<string | undefined> {
  const list = entries(cookie);
  if (!list.length) return undefined;
  const key = await deviceKey(db);
  return list.find((entry) => safeEqual(entry.signature, signature(key, addressKey, entry.nonce)))?.nonce;
}

/** Sets a fresh device cookie for the address just signed in to, keeping the browser's entries for others. */
export async function sendDeviceCookie(db: Db, config: Config, request: FastifyRequest, reply: FastifyReply, email: string): Promise<void> {
  const key = await deviceKey(db);
  const bound = addressKey(email);
  const nonce = randomBytes(16).toString('base64url');
  const others = entries(deviceCookieOf(config, request)).filter((entry) => !safeEqual(entry.signature, signature(key, bound, entry.nonce)));
  const value = [`${nonce}.${signature(key, bound, nonce)}`, ...others.map((entry) => entry.raw)].slice(0, MAX_ENTRIES).join('~');
  reply.setCookie(deviceCookieName(config), value, cookieOptions(config, DEVICE_COOKIE_TTL_SECONDS));
}
