/**
 * Redirect URI rules (DESIGN §4.3; RFC 8252 for native apps).
 *
 * Registration: absolute, no fragment; `https:` anywhere; `http:` only for loopback or
 * private-network hosts; custom schemes only for `native` clients.
 * Matching at authorize: exact string match, except that a `native` client's loopback
 * redirect (`http://127.0.0.1`, `http://[::1]`, `http://localhost`) matches on any port (§7.3).
 */
import type { ClientType } from '../db/schema.js';
import type { FieldError } from '../http/problem.js';

// `.localhost` names resolve to loopback only (RFC 6761 §6.3; browsers and curl keep them there).
const PRIVATE_SUFFIXES = ['.local', '.lan', '.home.arpa', '.internal', '.localhost'];

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Loopback, RFC 1918 addresses and the usual LAN-only DNS suffixes. */
export function isPrivateHost(host: string): boolean {
  if (isLoopbackHost(host)) return true;
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
  }
  return PRIVATE_SUFFIXES.some((suffix) => host.endsWith(suffix));
}

/** Returns a problem for each redirect URI that may not be registered for this client type. */
export function checkRedirectUris(uris: string[], clientType: ClientType, field = 'body.redirectUris'): FieldError[] {
  const errors: FieldError[] = [];
  uris.forEach((raw, i) => {
    const path = `${field}.${i}`;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      errors.push({ path, message: 'must be an absolute URI' });
      return;
    }
    if (raw.includes('#')) errors.push({ path, message: 'must not contain a fragment' });
    else if (url.protocol === 'https:') return;
    else if (url.protocol === 'http:') {
      if (!isPrivateHost(url.hostname)) {
        errors.push({ path, message: 'http is allowed only for loopback or private-network hosts; use https' });
      }
    } else if (clientType !== 'native') {
      errors.push({ path, message: 'custom URI schemes are allowed only for native clients' });
    } else if (/^(javascript|data|file|vbscript|blob):$/.test(url.protocol)) {
      errors.push({ path, message: `the ${url.protocol} scheme is not allowed` });
    }
  });
  if (new Set(uris).size !== uris.length) errors.push({ path: field, message: 'must not contain duplicates' });
  return errors;
}

function loopbackWithoutPort(raw: string): string | undefined {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' || !isLoopbackHost(url.hostname)) return undefined;
    url.port = '';
    return url.toString();
  } catch {
    return undefined;
  }
}

/** Whether `presented` is one of the registered redirect URIs for this client. */
export function matchesRedirectUri(registered: string[], presented: string, clientType: ClientType): boolean {
  if (registered.includes(presented)) return true;
  if (clientType !== 'native') return false;
  const candidate = loopbackWithoutPort(presented);
  return candidate !== undefined && registered.some((uri) => loopbackWithoutPort(uri) === candidate);
}

/**
 * Whether two registered lists admit the same redirects: order does not decide where codes go. A
 * list that may be unset (null: post-logout redirect URIs) differs from every list.
 */
export function sameRedirectUris(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((uri) => b.includes(uri));
}
