/**
 * RFC 5281 §10 (AVP format) and §11.2.5 (PAP inside the tunnel): the Diameter-style AVPs an
 * EAP-TTLS peer sends through the tunnel. Each is Code (4 octets), Flags (V 0x80, M 0x40),
 * Length (3 octets, header included), an optional Vendor-ID, the data, padded to 4 octets. Read
 * strictly: an AVP that runs past the data, or a length under its header, is an error; an AVP with
 * the M bit set that we do not know is an error too (§10.1: "MUST fail the negotiation").
 */
import { EapError } from './eap.js';

export interface Avp {
  code: number;
  vendor: number | undefined;
  data: Buffer;
}

const FLAG_VENDOR = 0x80;
const FLAG_MANDATORY = 0x40;
/** RADIUS attribute numbers as AVP codes (§10.1): the ones PAP inside TTLS uses. */
export const AVP_USER_NAME = 1;
export const AVP_USER_PASSWORD = 2;

export function decodeAvps(bytes: Buffer): Avp[] {
  const out: Avp[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 8 > bytes.length) throw new EapError('an AVP header is cut short');
    const code = bytes.readUInt32BE(at);
    const flags = bytes[at + 4]!;
    const length = bytes.readUIntBE(at + 5, 3);
    const head = flags & FLAG_VENDOR ? 12 : 8;
    if (length < head || at + length > bytes.length) throw new EapError('an AVP length is out of range');
    const vendor = flags & FLAG_VENDOR ? bytes.readUInt32BE(at + 8) : undefined;
    const known = vendor === undefined && (code === AVP_USER_NAME || code === AVP_USER_PASSWORD);
    if (!known && flags & FLAG_MANDATORY) throw new EapError(`a mandatory AVP ${code} we do not support`);
    out.push({ code, vendor, data: bytes.subarray(at + head, at + length) });
    at += (length + 3) & ~3;
  }
  return out;
}

/** The client's side (tests, the bench): an AVP with the M bit. */
export function encodeAvp(code: number, data: Buffer): Buffer {
  const length = 8 + data.length;
  const out = Buffer.alloc((length + 3) & ~3);
  out.writeUInt32BE(code, 0);
  out[4] = FLAG_MANDATORY;
  out.writeUIntBE(length, 5, 3);
  data.copy(out, 8);
  return out;
}

/** PAP's name and password from the tunnel (§11.2.5: the password padded with NULs), or undefined. */
export function papCredentials(avps: Avp[]): { login: string; password: string } | undefined {
  const name = avps.find((a) => a.code === AVP_USER_NAME && a.vendor === undefined)?.data;
  const secret = avps.find((a) => a.code === AVP_USER_PASSWORD && a.vendor === undefined)?.data;
  if (!name || !secret) return undefined;
  let end = secret.length;
  while (end > 0 && secret[end - 1] === 0) end--;
  return { login: name.toString('utf8'), password: secret.subarray(0, end).toString('utf8') };
}
