/**
 * `isIP` as node:net answers it, without running Node's IPv6 expression on what cannot be an IPv6
 * address (issue 45, docs/decisions/0476-ip-family-without-the-ipv6-expression.md). Node's
 * `isIP` tries its IPv4 expression, then its IPv6 one (`IPv6Reg`, lib/internal/net.js); V8
 * compiles an expression to native code on its second run and keeps that code as long as the
 * expression lives, and IPv6Reg's is 139 KB, kept for good once a few host names (forward auth's
 * every check asks whether the site's host is an address) have been tested. An IPv6 address
 * always has a colon and an IPv4 one never has, so a string without a colon is tested as IPv4
 * only: the same answer for every string.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** 4, 6 or 0, as node:net's `isIP`. */
export function isIP(input: string): 0 | 4 | 6 {
  if (!input.includes(':')) return isIPv4(input) ? 4 : 0;
  return isIPv6(input) ? 6 : 0;
}
