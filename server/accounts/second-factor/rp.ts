/**
 * Where passkeys can work (WebAuthn L3 §5.1.3 "RP ID", §13.4.8): the RP ID is the issuer's host
 * name and the expected origin the issuer's origin. Browsers offer WebAuthn only in a secure
 * context on a domain name: an IP-address host never works, and plain HTTP works only on
 * `localhost`. Such an issuer cannot offer passkeys; TOTP and recovery codes still work. The
 * reason is said in words on the pages and by `gatehouse status`.
 */
import { isIP } from '../../util/ip-family.js';
import { hostname } from 'node:os';

export type PasskeySupport =
  | { available: true; rpId: string; origin: string }
  /** `address`: the issuer's; `example`: an issuer that would work (the pages translate the reason from these). */
  | { available: false; reason: 'ip_address' | 'insecure_http'; message: string; address: string; example: string };

const exampleIssuer = () => `https://${hostname().split('.')[0] || 'this-machine'}.local:8787`;
const LAN_HINT = () => `run Gatehouse in LAN mode (GATEHOUSE_TLS=auto) and use its host name as the issuer, e.g. GATEHOUSE_ISSUER=${exampleIssuer()}`;

const isLocalhost = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/** Whether an issuer URL can offer passkeys, and why not. */
export function passkeySupport(issuer: string): PasskeySupport {
  const url = new URL(issuer);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    return {
      available: false,
      reason: 'ip_address',
      address: url.host,
      example: exampleIssuer(),
      message: `Passkeys need a host name, but this server's address (${url.host}) is an IP address: ${LAN_HINT()}.`,
    };
  }
  if (url.protocol !== 'https:' && !isLocalhost(host)) {
    return {
      available: false,
      reason: 'insecure_http',
      address: url.origin,
      example: exampleIssuer(),
      message: `Passkeys need HTTPS: open this page over https:// (see LAN mode). This server's address (${url.origin}) is plain HTTP: ${LAN_HINT()}.`,
    };
  }
  return { available: true, rpId: host, origin: url.origin };
}
