/**
 * The trust routes' answers, one function for both listeners: the HTTPS port (plugin.ts, through
 * Fastify) and the plain-http port (plain-http.ts, before its redirect), so a device that does not
 * trust the CA yet gets the same page and files. Undefined means 404: no local CA, or a `/trust/`
 * path that is not one of the downloads.
 */
import type { Config } from '../config.js';
import { STRICT_CSP } from '../http/security-headers.js';
import { readLocalCa, plainHttpBase } from './local-ca.js';
import { TRUST_FILES, trustJson } from './downloads.js';
import { TRUST_PAGE_CSP, trustPageHtml } from './page.js';

export interface TrustAnswer {
  headers: Record<string, string>;
  body: string | Buffer;
}

/** Whether a path is the trust page's (anything else under `/trust/` is a 404, not a redirect). */
export const isTrustPath = (path: string) => path === '/trust' || path === '/trust.json' || path.startsWith('/trust/');

const COMMON = { 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' };

export function trustAnswer(config: Config, path: string, listener: 'https' | 'plain-http'): TrustAnswer | undefined {
  const ca = readLocalCa(config);
  if (!ca) return undefined;
  const issuer = config.issuer.replace(/\/$/, '');
  const base = listener === 'https' ? issuer : (plainHttpBase(config) ?? issuer);
  if (path === '/trust') {
    return {
      headers: { ...COMMON, 'content-type': 'text/html; charset=utf-8', 'content-security-policy': TRUST_PAGE_CSP },
      body: trustPageHtml(ca, { base, plainHttp: listener === 'plain-http', issuer }),
    };
  }
  if (path === '/trust.json') {
    return { headers: { ...COMMON, 'content-type': 'application/json; charset=utf-8', 'content-security-policy': STRICT_CSP }, body: JSON.stringify(trustJson(ca, base)) };
  }
  const name = path.slice('/trust/'.length);
  const file = Object.hasOwn(TRUST_FILES, name) ? TRUST_FILES[name] : undefined;
  if (!path.startsWith('/trust/') || !file) return undefined;
  return {
    headers: { ...COMMON, 'content-type': file.type, 'content-disposition': `attachment; filename="${name}"`, 'content-security-policy': STRICT_CSP },
    // A Buffer, so the type goes out exactly as named (Fastify adds a charset to strings).
    body: Buffer.from(file.body(ca, issuer)),
  };
}
