/**
 * A list of client addresses: single addresses, CIDR ranges and the named ranges that
 * GATEHOUSE_TRUST_PROXY also accepts (`loopback`, `linklocal`, `uniquelocal`), matched with
 * node:net's BlockList. Used by GATEHOUSE_METRICS_ALLOW.
 */
import { BlockList } from 'node:net';
import { isIP } from './ip-family.js';

export const NAMED_RANGES: Record<string, [string, number, 'ipv4' | 'ipv6'][]> = {
  loopback: [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']],
  linklocal: [['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']],
  uniquelocal: [['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['fc00::', 7, 'ipv6']],
};

/** Why `entry` is not an address, a CIDR range or a named range; undefined when it is one. */
export function addressEntryProblem(entry: string): string | undefined {
  if (entry in NAMED_RANGES) return undefined;
  const [address, bits, extra] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || extra !== undefined) return `"${entry}" is not an address or a CIDR range`;
  if (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32))) return `"${entry}" has a prefix length out of range`;
  return undefined;
}

export interface AddressList {
  /** Whether `ip` (as Node reports a socket's peer, IPv4-mapped IPv6 included) is in the list. */
  has(ip: string): boolean;
}

/** The list of already validated entries (see `addressEntryProblem`). */
export function addressList(entries: readonly string[]): AddressList {
  const list = new BlockList();
  for (const entry of entries) {
    const named = NAMED_RANGES[entry];
    if (named) {
      for (const [network, prefix, type] of named) list.addSubnet(network, prefix, type);
      continue;
    }
    const [address, bits] = entry.split('/') as [string, string | undefined];
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return {
    has(ip) {
      // A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d.
      const plain = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
      const family = isIP(plain);
      return family !== 0 && list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
    },
  };
}
