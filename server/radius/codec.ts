/**
 * RFC 2865 §3 (packet format) and §5 (attributes), RFC 2866 §3 (accounting authenticators),
 * RFC 3579 §3.2 (Message-Authenticator), RFC 2868 §3 (tagged tunnel attributes) and RFC 2548
 * §2.4.2–2.4.3 (MS-MPPE keys): the RADIUS wire format, read strictly and written simply.
 *
 * Reading: a packet is 20 to 4,096 octets (§3: "maximum length is 4096"; the spec's cap too), its
 * Length field within what arrived (octets past it are padding and ignored, as §3 says), every
 * attribute at least 2 octets long and inside the packet. Anything else is a `RadiusCodecError`,
 * and the server drops the datagram and counts it. A reader never loops on a zero length and never
 * allocates more than the packet it reads.
 *
 * Hand-written rather than a library (decision 0410): the npm packages (`radius`, `radius-server`)
 * are unmaintained, load dictionaries from files at run time and neither checks the
 * Message-Authenticator of a request nor bounds what it reads.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export class RadiusCodecError extends Error {
  override name = 'RadiusCodecError';
}

/** RFC 2865 §3 and RFC 2866 §3 codes. */
export const Code = {
  accessRequest: 1,
  accessAccept: 2,
  accessReject: 3,
  accountingRequest: 4,
  accountingResponse: 5,
  accessChallenge: 11,
} as const;

/** The attribute types this server reads or writes (RFC 2865 §5, 2866 §5, 2868 §3, 3579 §3). */
export const Attr = {
  userName: 1,
  userPassword: 2,
  chapPassword: 3,
  nasIpAddress: 4,
  nasPort: 5,
  serviceType: 6,
  framedIpAddress: 8,
  replyMessage: 18,
  state: 24,
  class: 25,
  vendorSpecific: 26,
  sessionTimeout: 27,
  calledStationId: 30,
  callingStationId: 31,
  nasIdentifier: 32,
  proxyState: 33,
  acctStatusType: 40,
  acctInputOctets: 42,
  acctOutputOctets: 43,
  acctSessionId: 44,
  acctSessionTime: 46,
  acctTerminateCause: 49,
  nasPortType: 61,
  tunnelType: 64,
  tunnelMediumType: 65,
  eapMessage: 79,
  messageAuthenticator: 80,
  tunnelPrivateGroupId: 81,
  nasIpv6Address: 95,
} as const;

/** RFC 2548 §2.4: Microsoft's vendor id and the MS-MPPE key attributes. */
export const MICROSOFT = 311;
export const MS_MPPE_SEND_KEY = 16;
export const MS_MPPE_RECV_KEY = 17;

export const MAX_PACKET = 4096;
const HEADER = 20;

export interface Attribute {
  type: number;
  value: Buffer;
}

export interface Packet {
  code: number;
  identifier: number;
  /** The 16-octet Authenticator field as it arrived. */
  authenticator: Buffer;
  attributes: Attribute[];
  /** The packet's own octets (Length of them), for checking its Message-Authenticator. */
  raw: Buffer;
}

/** Reads one datagram. Throws `RadiusCodecError` for anything RFC 2865 §3 and §5 do not allow. */
export function decodePacket(datagram: Buffer): Packet {
  if (datagram.length < HEADER) throw new RadiusCodecError('shorter than a RADIUS header');
  if (datagram.length > MAX_PACKET) throw new RadiusCodecError('over 4096 octets');
  const length = datagram.readUInt16BE(2);
  if (length < HEADER || length > MAX_PACKET) throw new RadiusCodecError('the Length field is out of range');
  if (length > datagram.length) throw new RadiusCodecError('the Length field is past the datagram');
  const raw = datagram.subarray(0, length);
  const attributes: Attribute[] = [];
  let at = HEADER;
  while (at < length) {
    if (at + 2 > length) throw new RadiusCodecError('an attribute header is cut short');
    const type = raw[at]!;
    const size = raw[at + 1]!;
    if (size < 2) throw new RadiusCodecError('an attribute is shorter than its header');
    if (at + size > length) throw new RadiusCodecError('an attribute runs past the packet');
    attributes.push({ type, value: raw.subarray(at + 2, at + size) });
    at += size;
  }
  return { code: raw[0]!, identifier: raw[1]!, authenticator: raw.subarray(4, 20), attributes, raw };
}

/** The first attribute of a type. */
export function attribute(packet: Pick<Packet, 'attributes'>, type: number): Buffer | undefined {
  return packet.attributes.find((a) => a.type === type)?.value;
}

/** Every attribute of a type, in order (EAP-Message is split over several, RFC 3579 §3.1). */
export function attributesOf(packet: Pick<Packet, 'attributes'>, type: number): Buffer[] {
  return packet.attributes.filter((a) => a.type === type).map((a) => a.value);
}

/** An attribute holding text (User-Name), or undefined when absent or not UTF-8. */
export function textAttribute(packet: Pick<Packet, 'attributes'>, type: number): string | undefined {
  const value = attribute(packet, type);
  if (!value) return undefined;
  const text = value.toString('utf8');
  return Buffer.byteLength(text) === value.length && !text.includes('\uFFFD') ? text : undefined;
}

/** A 4-octet integer attribute (RFC 2865 §5: "integer"), or undefined. */
export function integerAttribute(packet: Pick<Packet, 'attributes'>, type: number): number | undefined {
  const value = attribute(packet, type);
  return value?.length === 4 ? value.readUInt32BE(0) : undefined;
}

/**
 * RFC 3579 §3.2: whether the packet's Message-Authenticator is HMAC-MD5 over the packet with
 * that attribute's value zeroed, keyed with the shared secret. `requestAuthenticator` is the
 * request's (for answers); a request uses its own. False when there is none, or more than one.
 */
export function validMessageAuthenticator(packet: Packet, secret: Buffer, requestAuthenticator?: Buffer): boolean {
  let offset = -1;
  let at = HEADER;
  for (const a of packet.attributes) {
    if (a.type === Attr.messageAuthenticator) {
      if (offset >= 0 || a.value.length !== 16) return false;
      offset = at + 2;
    }
    at += a.value.length + 2;
  }
  if (offset < 0) return false;
  const copy = Buffer.from(packet.raw);
  copy.fill(0, offset, offset + 16);
  if (requestAuthenticator) requestAuthenticator.copy(copy, 4);
  const expected = createHmac('md5', secret).update(copy).digest();
  return timingSafeEqual(expected, packet.raw.subarray(offset, offset + 16));
}

/** RFC 2866 §3: an Accounting-Request's Authenticator is MD5(Code+Id+Length+16 zeros+attributes+secret). */
export function validAccountingAuthenticator(packet: Packet, secret: Buffer): boolean {
  const copy = Buffer.from(packet.raw);
  copy.fill(0, 4, 20);
  const expected = createHash('md5').update(copy).update(secret).digest();
  return timingSafeEqual(expected, packet.authenticator);
}

/**
 * RFC 2865 §5.2: User-Password is hidden 16 octets at a time, c(i) = p(i) xor MD5(secret +
 * c(i-1)), c(0) being the Request Authenticator. Returns the password without its NUL padding, or
 * undefined when the value is not 16 to 128 octets in steps of 16.
 */
export function revealUserPassword(hidden: Buffer, secret: Buffer, requestAuthenticator: Buffer): Buffer | undefined {
  if (hidden.length < 16 || hidden.length > 128 || hidden.length % 16 !== 0) return undefined;
  const out = Buffer.alloc(hidden.length);
  let previous = requestAuthenticator;
  for (let i = 0; i < hidden.length; i += 16) {
    const b = createHash('md5').update(secret).update(previous).digest();
    for (let j = 0; j < 16; j++) out[i + j] = hidden[i + j]! ^ b[j]!;
    previous = hidden.subarray(i, i + 16);
  }
  let end = out.length;
  while (end > 0 && out[end - 1] === 0) end--;
  return out.subarray(0, end);
}

/** The inverse of `revealUserPassword` (clients' side: the tests and the bench send with it). */
export function hideUserPassword(password: Buffer, secret: Buffer, requestAuthenticator: Buffer): Buffer {
  const padded = Buffer.alloc(Math.max(16, Math.ceil(password.length / 16) * 16));
  password.copy(padded);
  const out = Buffer.alloc(padded.length);
  let previous = requestAuthenticator;
  for (let i = 0; i < padded.length; i += 16) {
    const b = createHash('md5').update(secret).update(previous).digest();
    for (let j = 0; j < 16; j++) out[i + j] = padded[i + j]! ^ b[j]!;
    previous = out.subarray(i, i + 16);
  }
  return out;
}

/**
 * RFC 2548 §2.4.2: an MS-MPPE-Send/Recv-Key value: a 2-octet salt (high bit set, unique per
 * packet), then the key's length and the key, padded to 16 and hidden like User-Password with
 * MD5(secret + Request Authenticator + salt) for the first block.
 */
export function mppeKeyValue(key: Buffer, secret: Buffer, requestAuthenticator: Buffer, salt: number): Buffer {
  const plain = Buffer.alloc(Math.ceil((key.length + 1) / 16) * 16);
  plain[0] = key.length;
  key.copy(plain, 1);
  const saltBytes = Buffer.from([0x80 | ((salt >> 8) & 0x7f), salt & 0xff]);
  const out = Buffer.alloc(plain.length);
  let previous = Buffer.concat([requestAuthenticator, saltBytes]);
  for (let i = 0; i < plain.length; i += 16) {
    const b = createHash('md5').update(secret).update(previous).digest();
    for (let j = 0; j < 16; j++) out[i + j] = plain[i + j]! ^ b[j]!;
    previous = out.subarray(i, i + 16);
  }
  return Buffer.concat([saltBytes, out]);
}

/** A Vendor-Specific attribute's value (RFC 2865 §5.26) holding one vendor attribute. */
export function vendorSpecific(vendor: number, type: number, value: Buffer): Buffer {
  const out = Buffer.alloc(6 + value.length);
  out.writeUInt32BE(vendor, 0);
  out[4] = type;
  out[5] = value.length + 2;
  value.copy(out, 6);
  return out;
}

/** A 4-octet integer value. */
export function integer(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value >>> 0, 0);
  return out;
}

/**
 * RFC 2868 §3.1–3.2 and §3.6: tagged tunnel values. Tunnel-Type and Tunnel-Medium-Type are a tag
 * octet and a 3-octet integer; Tunnel-Private-Group-ID a tag octet then the text. Tag 0 (§3:
 * "unused"): RFC 3580 §3.31 asks for VLAN 13 (Tunnel-Type) and IEEE-802 6 (Tunnel-Medium-Type).
 */
export function vlanAttributes(vlan: number): Attribute[] {
  const tagged = (value: number) => {
    const out = Buffer.alloc(4);
    out.writeUInt32BE(value, 0);
    out[0] = 0;
    return out;
  };
  return [
    { type: Attr.tunnelType, value: tagged(13) },
    { type: Attr.tunnelMediumType, value: tagged(6) },
    { type: Attr.tunnelPrivateGroupId, value: Buffer.concat([Buffer.from([0]), Buffer.from(String(vlan))]) },
  ];
}

/** Splits a value over attributes of at most 253 octets each (RFC 3579 §3.1, for EAP-Message). */
export function split(type: number, value: Buffer): Attribute[] {
  const out: Attribute[] = [];
  for (let i = 0; i < value.length; i += 253) out.push({ type, value: value.subarray(i, i + 253) });
  if (!out.length) out.push({ type, value: Buffer.alloc(0) });
  return out;
}

function serialize(code: number, identifier: number, authenticator: Buffer, attributes: Attribute[]): Buffer {
  let length = HEADER;
  for (const a of attributes) {
    if (a.value.length > 253) throw new RadiusCodecError(`attribute ${a.type} is over 253 octets`);
    length += 2 + a.value.length;
  }
  if (length > MAX_PACKET) throw new RadiusCodecError('the answer would be over 4096 octets');
  const out = Buffer.alloc(length);
  out[0] = code;
  out[1] = identifier;
  out.writeUInt16BE(length, 2);
  authenticator.copy(out, 4);
  let at = HEADER;
  for (const a of attributes) {
    out[at] = a.type;
    out[at + 1] = a.value.length + 2;
    a.value.copy(out, at + 2);
    at += 2 + a.value.length;
  }
  return out;
}

/**
 * An answer to `request` (RFC 2865 §3 Response Authenticator = MD5(Code+ID+Length+Request
 * Authenticator+attributes+secret)). Access answers carry a Message-Authenticator first (RFC 3579
 * §3.2, and first as the BlastRADIUS advice asks), computed over the packet with the Request
 * Authenticator in place, before the Response Authenticator is.
 */
export function encodeResponse(code: number, request: Pick<Packet, 'identifier' | 'authenticator'>, attributes: Attribute[], secret: Buffer): Buffer {
  const withAuth = code === Code.accountingResponse ? attributes : [{ type: Attr.messageAuthenticator, value: Buffer.alloc(16) }, ...attributes];
  const out = serialize(code, request.identifier, request.authenticator, withAuth);
  if (code !== Code.accountingResponse) createHmac('md5', secret).update(out).digest().copy(out, HEADER + 2);
  createHash('md5').update(out).update(secret).digest().copy(out, 4);
  return out;
}

/** A request as a client sends it (tests, the bench): Access-Requests get a Message-Authenticator. */
export function encodeRequest(code: number, identifier: number, authenticator: Buffer, attributes: Attribute[], secret: Buffer): Buffer {
  if (code === Code.accountingRequest) {
    const out = serialize(code, identifier, Buffer.alloc(16), attributes);
    createHash('md5').update(out).update(secret).digest().copy(out, 4);
    return out;
  }
  const out = serialize(code, identifier, authenticator, [{ type: Attr.messageAuthenticator, value: Buffer.alloc(16) }, ...attributes]);
  createHmac('md5', secret).update(out).digest().copy(out, HEADER + 2);
  return out;
}

/** Whether an answer's Response Authenticator is right for `requestAuthenticator` (clients' side). */
export function validResponseAuthenticator(answer: Packet, requestAuthenticator: Buffer, secret: Buffer): boolean {
  const copy = Buffer.from(answer.raw);
  requestAuthenticator.copy(copy, 4);
  return timingSafeEqual(createHash('md5').update(copy).update(secret).digest(), answer.authenticator);
}

