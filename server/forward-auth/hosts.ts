/**
 * Host patterns of protected sites (spec forward-auth.md, "A protected site is an application").
 *
 * A pattern is a host name with an optional port, or `*.` and a host name:
 *   wiki.lan.example          that host, on any port
 *   wiki.lan.example:8443     that host on port 8443 only
 *   *.media.lan.example       any ONE label under media.lan.example (tv.media.lan.example, not
 *                             a.tv.media.lan.example), as a TLS certificate's wildcard and Caddy's
 *                             host matcher read it (caddyserver.com/docs/caddyfile/matchers#host, 2.6)
 *   *.media.lan.example:8443
 * IPv4 literals are allowed (never under a wildcard); IPv6 literals in brackets. Stored lower-case,
 * internationalised names in their ASCII (punycode) form, which is what browsers send in `Host`.
 *
 * A request's host is matched most specific first: `name:port`, `name`, `*.parent:port`,
 * `*.parent` — at most four map lookups, whatever the number of applications.
 */
import { isIP } from '../util/ip-family.js';
import { domainToASCII } from 'node:url';

/** A request host split into its name and port ('' when the request named none). */
export interface RequestHost {
  name: string;
  port: string;
  /** `name` or `name:port`: how a site session and a code are bound to the host. */
  host: string;
}

export const MAX_HOSTS_PER_APPLICATION = 20;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const SHAPE = /^(\*\.)?(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/;

function validPort(port: string | undefined): boolean {
  return port === undefined || (/^[1-9]\d{0,4}$/.test(port) && Number(port) <= 65535);
}

/** The name in its stored form (lower-case, punycode), or undefined when it is not a host name or address. */
function normalName(raw: string, wildcard: boolean): string | undefined {
  if (raw.startsWith('[')) {
    const inner = raw.slice(1, -1);
    return !wildcard && isIP(inner) === 6 ? `[${inner.toLowerCase()}]` : undefined;
  }
  if (isIP(raw) === 4) return wildcard ? undefined : raw;
  const ascii = domainToASCII(raw.toLowerCase());
  if (!ascii || ascii.length > 253 || !ascii.split('.').every((label) => LABEL.test(label))) return undefined;
  // A name made only of digits and dots is an address in disguise (and not a valid one).
  if (/^[\d.]+$/.test(ascii)) return undefined;
  return ascii;
}

/** The stored form of a host pattern, or a sentence saying what is wrong with it. */
export function parseHostPattern(raw: string): { pattern: string } | { error: string } {
  const shape = SHAPE.exec(raw.trim());
  const wildcard = Boolean(shape?.[1]);
  const name = shape ? normalName(shape[2]!, wildcard) : undefined;
  if (!shape || !name || !validPort(shape[3])) {
    return { error: 'must be a host name with an optional port (wiki.lan.example, wiki.lan.example:8443), or *. and a host name (*.media.lan.example)' };
  }
  return { pattern: `${wildcard ? '*.' : ''}${name}${shape[3] ? `:${shape[3]}` : ''}` };
}

/**
 * The host a request names (`Host`, `X-Forwarded-Host`, or a URL's host): the first of a
 * comma-separated list, lower-case; undefined when it is not a host name or address with an
 * optional port.
 */
export function parseRequestHost(raw: string | undefined): RequestHost | undefined {
  if (!raw) return undefined;
  const first = raw.split(',', 1)[0]!.trim();
  const shape = SHAPE.exec(first);
  if (!shape || shape[1] || !validPort(shape[3])) return undefined;
  const name = normalName(shape[2]!, false);
  if (!name) return undefined;
  const port = shape[3] ?? '';
  return { name, port, host: port ? `${name}:${port}` : name };
}

/** The patterns that would match `host`, most specific first. */
export function candidatePatterns({ name, port }: RequestHost): string[] {
  const out = port ? [`${name}:${port}`, name] : [name];
  const dot = name.indexOf('.');
  if (dot > 0 && !name.startsWith('[') && isIP(name) === 0) {
    const parent = `*.${name.slice(dot + 1)}`;
    if (port) out.push(`${parent}:${port}`);
    out.push(parent);
  }
  return out;
}

/** A stored pattern's parts: a wildcard's base after `*.`, or the exact name; the port, if any. */
function patternParts(pattern: string): { wildcard: boolean; name: string; port: string | undefined } {
  const shape = SHAPE.exec(pattern);
  if (!shape) return { wildcard: false, name: pattern, port: undefined };
  return { wildcard: Boolean(shape[1]), name: shape[2]!, port: shape[3] };
}

/**
 * Whether some request host matches both stored patterns (issue 49, H2): ports agree (or one has
 * none), and the names are equal or one is the exact name one label under the other's wildcard
 * (as `candidatePatterns` matches them: never an address under a wildcard).
 */
export function patternsOverlap(a: string, b: string): boolean {
  const p = patternParts(a);
  const q = patternParts(b);
  if (p.port && q.port && p.port !== q.port) return false;
  if (p.wildcard === q.wildcard) return p.name === q.name;
  const [wildcard, exact] = p.wildcard ? [p, q] : [q, p];
  const dot = exact.name.indexOf('.');
  return dot > 0 && !exact.name.startsWith('[') && isIP(exact.name) === 0 && exact.name.slice(dot + 1) === wildcard.name;
}

/**
 * CSP source expressions for a pattern's origins, both schemes (a form answer that resumes the
 * hand-over is redirected to `/.gatehouse/callback` on the protected host, and Chromium applies
 * `form-action` to that redirect too). A port-less pattern matches any port (`:*`). IPv6
 * literals cannot be written as CSP sources and are left out.
 */
export function patternSources(pattern: string): string[] {
  if (pattern.includes('[')) return [];
  const hasPort = /:\d+$/.test(pattern);
  const hostPort = hasPort ? pattern : `${pattern}:*`;
  return [`http://${hostPort}`, `https://${hostPort}`];
}
