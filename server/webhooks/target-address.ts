/**
 * Addresses a webhook may never be sent to, whatever the administrator or an API key with
 * `webhooks:write` configures: link-local (169.254.0.0/16, where cloud and hypervisor metadata
 * services answer, and fe80::/10, plus AWS's fd00:ec2::254), "this network" / unspecified
 * (0.0.0.0/8, ::) and multicast, also when spelled through the NAT64 prefix 64:ff9b::/96.
 * Loopback and private LAN addresses stay allowed: a small team's receivers usually live there.
 *
 * Checked twice: when the URL is saved (an IP literal in it) and when a delivery connects (every
 * address a host name resolves to), so a name that later resolves to such an address is refused
 * too. node:net's BlockList also matches IPv4-mapped IPv6 forms of the IPv4 ranges.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const forbidden = new BlockList();
forbidden.addSubnet('0.0.0.0', 8, 'ipv4');
forbidden.addSubnet('169.254.0.0', 16, 'ipv4');
forbidden.addSubnet('224.0.0.0', 4, 'ipv4');
forbidden.addAddress('255.255.255.255', 'ipv4');
forbidden.addAddress('::', 'ipv6');
forbidden.addSubnet('fe80::', 10, 'ipv6');
forbidden.addSubnet('ff00::', 8, 'ipv6');
// AWS's IPv6 instance metadata service (a unique-local address, otherwise allowed as private).
forbidden.addAddress('fd00:ec2::254', 'ipv6');
// NAT64 (RFC 6052): 64:ff9b::a9fe:a9fe reaches 169.254.169.254 through a translator.
for (const [prefix, bits] of [['64:ff9b::a9fe:0', 112], ['64:ff9b::', 104], ['64:ff9b::e000:0', 100], ['64:ff9b::ffff:ffff', 128]] as const) {
  forbidden.addSubnet(prefix, bits, 'ipv6');
}

/** Whether `address` (an IP literal, brackets allowed) is one webhooks may not reach. */
export function isForbiddenAddress(address: string): boolean {
  const ip = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(ip);
  return family !== 0 && forbidden.check(ip, family === 6 ? 'ipv6' : 'ipv4');
}

export const FORBIDDEN_ADDRESS_MESSAGE = 'must not point at a link-local, unspecified or multicast address';

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** `lookup` for node:http(s) requests: resolves as usual, then refuses forbidden addresses. */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const bad = addresses.find((entry) => isForbiddenAddress(entry.address));
    if (bad) {
      const refused: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${bad.address}, which webhooks may not reach`);
      refused.code = 'EFORBIDDENADDRESS';
      return callback(refused, []);
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
}
