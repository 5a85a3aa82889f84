/**
 * Where a protected application listens, as the proxy reaches it (the snippets' `upstream`; the
 * forward-auth presets' input of that name): a scheme, a host and a port, nothing else (issue 49,
 * H10). What is written into a configuration is what the WHATWG URL parser gives back — lower
 * case, no default port, an internationalised name in punycode — and only when its host is an IP
 * address or a DNS-style name: the parser itself lets `;`, `{}`, `$` and quotes through in a host,
 * and nginx reads `;}` as the end of a block and `$http_x` as the request's header (an open relay
 * in `proxy_pass`, confirmed on nginx 1.22), Caddy `{…}` as a placeholder.
 */
import { isIP } from '../util/ip-family.js';

export const UPSTREAM_RULE = 'must be http:// or https:// and a host with an optional port, nothing more (e.g. http://127.0.0.1:8080)';

/** `scheme://authority` with at most a trailing slash: no path, query, fragment or white space. */
const SHAPE = /^https?:\/\/[^/?#\s\\]+\/?$/i;
/** A DNS label as container and compose names use them too (`my_app`). */
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** The upstream's origin as it is written into a configuration, or undefined when it is not one. */
export function upstreamOrigin(text: string): string | undefined {
  if (text.length > 300 || !SHAPE.test(text)) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return undefined;
  const host = url.hostname;
  const address = host.startsWith('[') ? isIP(host.slice(1, -1)) === 6 : isIP(host) === 4;
  const name = host.length <= 253 && host.split('.').every((label) => LABEL.test(label));
  return address || name ? url.origin : undefined;
}
