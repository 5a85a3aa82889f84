/**
 * RFC 3748 §4 (EAP packet format), §5.1 (Identity), §5.3.1 (Legacy Nak), RFC 5216 §3.1–3.2
 * (EAP-TLS packets and fragmentation) and RFC 5281 §9.2 (EAP-TTLS packets, the same flags and a
 * version of 0): the EAP wire format, read strictly.
 *
 * An EAP packet arrives split over EAP-Message attributes (RFC 3579 §3.1), joined before it is
 * read here. A TLS-based method's data may itself be split over several EAP packets (the M flag);
 * `Reassembly` joins them, refusing more than MAX_EAP_TOTAL octets in one conversation (the spec's
 * 64 KiB), a Length (L flag) that disagrees with what arrives, or a fragment after the last.
 */

export class EapError extends Error {
  override name = 'EapError';
}

export const EapCode = { request: 1, response: 2, success: 3, failure: 4 } as const;
export const EapType = { identity: 1, notification: 2, nak: 3, md5: 4, tls: 13, ttls: 21, peap: 25, mschapv2: 26 } as const;

/** RFC 5216 §3.1 flags. */
export const Flag = { length: 0x80, more: 0x40, start: 0x20 } as const;

/** The whole of one conversation's TLS data may not pass this (spec radius.md: 64 KiB). */
export const MAX_EAP_TOTAL = 64 * 1024;
/** The TLS data we put in one EAP packet: the answer stays well inside a 4,096-octet RADIUS packet. */
export const FRAGMENT = 1_000;

export interface EapPacket {
  code: number;
  identifier: number;
  /** Requests and responses only. */
  type: number | undefined;
  /** After the type octet. */
  data: Buffer;
}

export function decodeEap(bytes: Buffer): EapPacket {
  if (bytes.length < 4) throw new EapError('shorter than an EAP header');
  const length = bytes.readUInt16BE(2);
  if (length < 4 || length !== bytes.length) throw new EapError('the EAP Length does not match the EAP-Message attributes');
  const code = bytes[0]!;
  if (code === EapCode.success || code === EapCode.failure) {
    if (length !== 4) throw new EapError('a Success or Failure carries no data');
    return { code, identifier: bytes[1]!, type: undefined, data: Buffer.alloc(0) };
  }
  if (code !== EapCode.request && code !== EapCode.response) throw new EapError(`unknown EAP code ${code}`);
  if (length < 5) throw new EapError('a request or response without a type');
  return { code, identifier: bytes[1]!, type: bytes[4]!, data: bytes.subarray(5, length) };
}

export function encodeEap(code: number, identifier: number, type?: number, data: Buffer = Buffer.alloc(0)): Buffer {
  const head = type === undefined ? 4 : 5;
  const out = Buffer.alloc(head + data.length);
  out[0] = code;
  out[1] = identifier;
  out.writeUInt16BE(out.length, 2);
  if (type !== undefined) out[4] = type;
  data.copy(out, head);
  return out;
}

/** A TLS-based method's payload: its flags and the TLS data it carries (RFC 5216 §3.1). */
export interface TlsFragment {
  flags: number;
  /** The TLS Message Length, when the L flag is set. */
  total: number | undefined;
  data: Buffer;
}

export function decodeTlsFragment(data: Buffer): TlsFragment {
  if (data.length < 1) throw new EapError('a TLS-based EAP packet without flags');
  const flags = data[0]!;
  if (flags & Flag.length) {
    if (data.length < 5) throw new EapError('the TLS Message Length is cut short');
    return { flags, total: data.readUInt32BE(1), data: data.subarray(5) };
  }
  return { flags, total: undefined, data: data.subarray(1) };
}

/** One outgoing fragment's payload: the flags (with the length on the first of several), then the data. */
export function encodeTlsFragment(flags: number, data: Buffer, total?: number): Buffer {
  if (total === undefined) return Buffer.concat([Buffer.from([flags]), data]);
  const head = Buffer.alloc(5);
  head[0] = flags | Flag.length;
  head.writeUInt32BE(total, 1);
  return Buffer.concat([head, data]);
}

/** Joins a peer's fragments (RFC 5216 §3.1: "more fragments" until the last), within the budget. */
export class Reassembly {
  private parts: Buffer[] = [];
  private length = 0;
  private expected: number | undefined;
  /** Every octet the peer sent in this conversation. */
  received = 0;

  /** Adds a fragment; the whole message when it was the last one, else undefined (ask for more). */
  add(fragment: TlsFragment): Buffer | undefined {
    this.received += fragment.data.length;
    if (this.received > MAX_EAP_TOTAL) throw new EapError('the conversation sent over 64 KiB');
    if (fragment.total !== undefined) {
      if (fragment.total > MAX_EAP_TOTAL) throw new EapError('a TLS Message Length over 64 KiB');
      if (this.expected !== undefined && this.parts.length && fragment.total !== this.expected) throw new EapError('the TLS Message Length changed');
      if (!this.parts.length) this.expected = fragment.total;
    }
    this.parts.push(fragment.data);
    this.length += fragment.data.length;
    if (this.expected !== undefined && this.length > this.expected) throw new EapError('more data than the TLS Message Length');
    if (fragment.flags & Flag.more) return undefined;
    if (this.expected !== undefined && this.length !== this.expected) throw new EapError('less data than the TLS Message Length');
    const whole = Buffer.concat(this.parts);
    this.parts = [];
    this.length = 0;
    this.expected = undefined;
    return whole;
  }
}

/** What we still have to send of one TLS flight, a fragment per round. */
export class Outgoing {
  private offset = 0;
  constructor(private readonly data: Buffer) {}

  get pending(): boolean {
    return this.offset < this.data.length;
  }

  /** The next fragment's payload (flags included). */
  next(): Buffer {
    const first = this.offset === 0;
    const chunk = this.data.subarray(this.offset, this.offset + FRAGMENT);
    this.offset += chunk.length;
    const more = this.offset < this.data.length;
    if (first && more) return encodeTlsFragment(Flag.more, chunk, this.data.length);
    return encodeTlsFragment(more ? Flag.more : 0, chunk);
  }
}

/** The types a Legacy Nak asks for (RFC 3748 §5.3.1). */
export function nakTypes(data: Buffer): number[] {
  return [...data];
}
