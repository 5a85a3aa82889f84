/**
 * The original request a proxy asks about, and whom to believe about it (spec forward-auth.md,
 * "The check").
 *
 * - Caddy's `forward_auth` (2.6: caddyserver.com/docs/caddyfile/directives/forward_auth, and
 *   `caddy adapt` of the snippet) sends a GET with the original request's headers (cookies,
 *   `Authorization`, `Accept`) plus `X-Forwarded-Method` and `X-Forwarded-Uri`; its reverse proxy
 *   sets `X-Forwarded-For`, `-Proto` and `-Host`.
 * - Traefik's `forwardAuth` middleware (doc.traefik.io/traefik/v3.0/middlewares/http/forwardauth/)
 *   sends `X-Forwarded-Method`, `-Proto`, `-Host`, `-Uri` and `-For` with the original headers.
 * - nginx's `auth_request` (1.22: nginx.org/en/docs/http/ngx_http_auth_request_module.html) makes
 *   a subrequest with the original headers; the snippet adds `X-Original-URL` and
 *   `X-Original-Method` (`$scheme://$gatehouse_host$request_uri`, where `$gatehouse_host` is one of the
 *   application's hosts or the request is refused, and `$request_method`; issue 49, H1).
 *
 * These headers are believed only from the proxies named by GATEHOUSE_TRUST_PROXY — the same
 * setting that decides whose X-Forwarded-For names the client (config.ts, app.ts) — or from
 * loopback when it is unset: a proxy on the same machine. Trust is judged on the connection's own
 * peer address, never on X-Forwarded-For. Anyone else is answered 403: a client that reaches
 * Gatehouse directly must not name the host, scheme or path it is asking about.
 */
import type { IncomingHttpHeaders } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { Config } from '../config.js';

export interface OriginalRequest {
  proto: 'http' | 'https';
  /** The host as the proxy named it (`Host`-style text, parsed by hosts.ts). */
  host: string | undefined;
  /** Path and query, starting with `/`. */
  uri: string;
  method: string;
}

/** Peer addresses remembered with their verdict (a handful of proxies; forgotten all at once when full). */
const PEERS_REMEMBERED = 1_000;

/**
 * Whether a connection from `address` is one of the configured proxies (loopback when none is).
 * Remembered per address: every check asks, and parsing the address costs more than the rest of
 * a check answered from memory (bench forward-auth).
 */
export function proxyTrust(config: Config): (address: string) => boolean {
  const trust = proxyAddr.compile(config.trustProxy.length ? config.trustProxy : ['loopback']);
  const known = new Map<string, boolean>();
  return (address) => {
    let trusted = known.get(address);
    if (trusted === undefined) {
      trusted = address !== '' && trust(address, 0);
      if (known.size >= PEERS_REMEMBERED) known.clear();
      known.set(address, trusted);
    }
    return trusted;
  };
}

const FORWARDED = /^x-(forwarded|original)-/;

/** Whether the request carries any header that claims to describe another request. */
export function claimsForwarding(headers: IncomingHttpHeaders): boolean {
  for (const name in headers) if (FORWARDED.test(name)) return true;
  return false;
}

const first = (value: string | string[] | undefined): string | undefined => {
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined ? undefined : text.split(',', 1)[0]!.trim();
};

const protoOf = (value: string | undefined): 'http' | 'https' => (value?.toLowerCase() === 'https' ? 'https' : 'http');

const pathOf = (value: string | undefined): string => (value && value.startsWith('/') && !value.startsWith('//') ? value : '/');

/**
 * The original request, from the headers the proxy itself sets for this endpoint, never from
 * headers a client could have sent through it: `X-Forwarded-Proto`/`-Host`/`-Uri`/`-Method` at
 * `/forward` (Caddy and Traefik overwrite those), `X-Original-URL`/`-Method` at the nginx endpoint
 * (the snippet's `proxy_set_header` replaces any the client sent; nginx passes the client's other
 * headers on, an `X-Forwarded-Host` included). `fallbackHost` stands in when no header names the
 * host (the callback, reached through the proxy's plain reverse proxy).
 */
export function originalRequest(endpoint: 'forward' | 'auth-request', headers: IncomingHttpHeaders, fallbackHost?: string): OriginalRequest {
  if (endpoint === 'auth-request') {
    const method = first(headers['x-original-method'])?.toUpperCase() ?? 'GET';
    try {
      const url = new URL(first(headers['x-original-url']) ?? '');
      if (url.protocol === 'http:' || url.protocol === 'https:') {
        return { proto: protoOf(url.protocol.slice(0, -1)), host: url.host, uri: pathOf(`${url.pathname}${url.search}`), method };
      }
    } catch {
      // No URL: no host, which no application protects.
    }
    return { proto: 'http', host: undefined, uri: '/', method };
  }
  return {
    proto: protoOf(first(headers['x-forwarded-proto'])),
    host: first(headers['x-forwarded-host']) ?? fallbackHost,
    uri: pathOf(first(headers['x-forwarded-uri'])),
    method: first(headers['x-forwarded-method'])?.toUpperCase() ?? 'GET',
  };
}

/** A browser navigating (spec table): it accepts HTML, and the method is GET or HEAD. */
export function isNavigation(headers: IncomingHttpHeaders, method: string): boolean {
  const accept = headers.accept;
  return (method === 'GET' || method === 'HEAD') && typeof accept === 'string' && accept.includes('text/html');
}
