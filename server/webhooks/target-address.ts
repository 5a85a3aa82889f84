/**
 * Addresses a webhook may never be sent to, whatever the administrator or an API key with
 * `webhooks:write` configures: link-local (169.254.0.0/16, where cloud and hypervisor metadata
 * services answer, and fe80::/10, plus AWS's fd00:ec2::254), "this network" / unspecified
 * (0.0.0.0/8, ::) and multicast, also when spelled through the NAT64 prefix 64:ff9b::/96.
 *
 * Loopback (127.0.0.0/8, ::1, their IPv4-mapped and NAT64 spellings, and the `localhost` names)
 * is refused too unless the operator opts in (`GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK=1`, issue 22): a
 * key holder could otherwise probe and post to services bound to this machine only. The server's
 * own listening sockets are refused always (nothing useful listens there for a webhook). Private
 * LAN addresses stay allowed: a small team's receivers usually live there.
 *
 * Checked twice: when the URL is saved (an IP literal or a `localhost` name in it) and when a
 * delivery connects (every address a host name resolves to), so a name that later resolves to
 * such an address is refused too. node:net's BlockList also matches IPv4-mapped IPv6 forms of the
 * IPv4 ranges.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, type AddressInfo } from 'node:net';
import { isIP } from '../util/ip-family.js';
import { networkInterfaces } from 'node:os';
import type { AppContext } from '../context.js';

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

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');
// The deprecated IPv4-compatible spelling (::127.0.0.1) and NAT64's (64:ff9b::127.0.0.1).
loopback.addSubnet('::7f00:0', 104, 'ipv6');
loopback.addSubnet('64:ff9b::7f00:0', 104, 'ipv6');

/** How a server decides about webhook targets beyond the fixed rules. */
export interface TargetPolicy {
  /** `GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK=1`: receivers on this machine are allowed. */
  allowLoopback: boolean;
  /** Whether `ip:port` is one of this server's own listening sockets. */
  isOwnEndpoint(ip: string, port: number): boolean;
}

/** This server's policy: the operator's loopback opt-in and the sockets it listens on. */
export function webhookTargetPolicy(ctx: AppContext): TargetPolicy {
  return { allowLoopback: ctx.config.webhookAllowLoopback, isOwnEndpoint: ownEndpoints(ctx.listenAddresses) };
}

export const FORBIDDEN_ADDRESS_MESSAGE = 'must not point at a link-local, unspecified or multicast address';
export const LOOPBACK_MESSAGE = 'must not point at a loopback address (GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK=1 allows it)';
export const OWN_ENDPOINT_MESSAGE = 'must not point at this server itself';

const unbracket = (address: string) => (address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address);
const familyOf = (ip: string) => (isIP(ip) === 6 ? 'ipv6' : 'ipv4');

function isLoopbackAddress(ip: string): boolean {
  return isIP(ip) !== 0 && loopback.check(ip, familyOf(ip));
}

/** `localhost` and `*.localhost` (RFC 6761 §6.3: always loopback), any case, with or without a final dot. */
function isLoopbackName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** This machine's interface addresses, read at most once a second (every delivery asks). */
let interfaces = { at: 0, addresses: [] as string[] };
function machineAddresses(): string[] {
  if (Date.now() - interfaces.at > 1000) {
    const addresses = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((info) => info.address.split('%')[0]!));
    interfaces = { at: Date.now(), addresses };
  }
  return interfaces.addresses;
}

/**
 * `isOwnEndpoint` for the sockets `listening()` names: a wildcard address (0.0.0.0, ::) stands for
 * every address of this machine. Read on every check, so a port chosen at listen (0) is known.
 */
export function ownEndpoints(listening: () => Pick<AddressInfo, 'address' | 'port' | 'family'>[]): (ip: string, port: number) => boolean {
  return (ip, port) => {
    const candidate = unbracket(ip);
    if (isIP(candidate) === 0) return false;
    const own = new BlockList();
    for (const socket of listening()) {
      if (socket.port !== port) continue;
      const wildcard = socket.address === '0.0.0.0' || socket.address === '::';
      const addresses = wildcard ? machineAddresses() : [socket.address];
      for (const address of addresses) own.addAddress(address, familyOf(address));
      // Loopback is this machine whatever interface list the OS reports.
      if (wildcard) for (const address of ['127.0.0.1', '::1']) own.addAddress(address, familyOf(address));
    }
    return own.check(candidate, familyOf(candidate));
  };
}

/**
 * Why a saved webhook URL's host (and port) may not be used, or undefined. Only IP literals and
 * `localhost` names can be judged here; other names are judged at each delivery.
 */
export function webhookHostProblem(host: string, port: number, policy: TargetPolicy): string | undefined {
  const ip = unbracket(host);
  if (isForbiddenAddress(ip)) return FORBIDDEN_ADDRESS_MESSAGE;
  if (policy.isOwnEndpoint(ip, port) || (isLoopbackName(host) && policy.isOwnEndpoint('127.0.0.1', port))) return OWN_ENDPOINT_MESSAGE;
  if (!policy.allowLoopback && (isLoopbackAddress(ip) || isLoopbackName(host))) return LOOPBACK_MESSAGE;
  return undefined;
}

/** Whether `address` (an IP literal, brackets allowed) is one webhooks may not reach. */
export function isForbiddenAddress(address: string): boolean {
  const ip = unbracket(address);
  return isIP(ip) !== 0 && forbidden.check(ip, familyOf(ip));
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function refused(message: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(message);
  error.code = 'EFORBIDDENADDRESS';
  return error;
}

/** Why a resolved address may not be connected to (the words of a delivery's error), or undefined. */
function addressProblem(address: string, port: number, policy: TargetPolicy): string | undefined {
  if (isForbiddenAddress(address)) return `${address}, which webhooks may not reach`;
  if (policy.isOwnEndpoint(address, port)) return `${address}:${port}, this server itself`;
  if (!policy.allowLoopback && isLoopbackAddress(address)) return `${address}, which webhooks may not reach`;
  return undefined;
}

/** `lookup` for node:http(s) requests to `port`: resolves as usual, then refuses what the rules forbid. */
export function guardedLookup(policy: TargetPolicy, port: number) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      for (const entry of addresses) {
        const problem = addressProblem(entry.address, port, policy);
        if (problem) return callback(refused(`${hostname} resolves to ${problem}`), []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/** Why an IP-literal target may not be connected to (Node connects to literals without a lookup), or undefined. */
export function literalTargetProblem(host: string, port: number, policy: TargetPolicy): string | undefined {
  const ip = unbracket(host);
  if (isIP(ip) === 0) return undefined;
  if (policy.isOwnEndpoint(ip, port)) return `${ip}:${port} is this server itself`;
  if (isForbiddenAddress(ip) || (!policy.allowLoopback && isLoopbackAddress(ip))) return `${host} is an address webhooks may not reach`;
  return undefined;
}
