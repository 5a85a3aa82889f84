/**
 * TSIG (RFC 8945): signing a DNS request with a shared HMAC key and checking the server's signed
 * answer, so a dynamic update (RFC 2136) is accepted only from who holds the key and its answer
 * cannot be forged on the way.
 * - §4.2/§4.3.3: the MAC covers the message as sent without the TSIG record, then the "TSIG
 *   variables": key name and algorithm name in canonical (lower-case, uncompressed) form, class
 *   ANY, TTL 0, time signed (48 bits), fudge, error, other len and other data;
 * - §5.3.1: the answer's MAC covers the request's MAC (with its length) first, then the answer
 *   without its TSIG record and with ARCOUNT one less, its ID the original ID;
 * - §5.2.2/§5.2.3: the answer's MAC is compared in constant time, its time within the fudge.
 * The algorithms are HMAC-SHA256/384/512 (§6: hmac-sha256 is mandatory to implement).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TsigAlgorithm } from '../../config.js';
import { CLASS, DnsWireError, encodeName, RCODE_NAMES, TYPE, type DecodedMessage, type ResourceRecord } from './dns-wire.js';

export interface TsigKey {
  name: string;
  algorithm: TsigAlgorithm;
  secret: Buffer;
}

const HASH: Record<TsigAlgorithm, string> = { 'hmac-sha256': 'sha256', 'hmac-sha384': 'sha384', 'hmac-sha512': 'sha512' };
/** Seconds of clock difference allowed (§10: 300 is recommended). */
const FUDGE = 300;

const canonical = (name: string) => encodeName(name.toLowerCase());

function time48(seconds: number): Buffer {
  const out = Buffer.alloc(6);
  out.writeUInt16BE(Math.floor(seconds / 2 ** 32) & 0xffff, 0);
  out.writeUInt32BE(seconds % 2 ** 32, 2);
  return out;
}

/** The TSIG variables of §4.3.3 (other data empty). */
function variables(key: TsigKey, timeSigned: number, fudge: number, error: number): Buffer {
  const fixed = Buffer.alloc(6);
  fixed.writeUInt16BE(CLASS.ANY, 0);
  fixed.writeUInt32BE(0, 2);
  const tail = Buffer.alloc(6);
  tail.writeUInt16BE(fudge, 0);
  tail.writeUInt16BE(error, 2);
  tail.writeUInt16BE(0, 4);
  return Buffer.concat([canonical(key.name), fixed, canonical(key.algorithm), time48(timeSigned), tail]);
}

/** A signed request: the message with its TSIG record appended (ARCOUNT raised), and the MAC to check the answer by. */
export function signRequest(message: Buffer, key: TsigKey, nowSeconds: number): { signed: Buffer; mac: Buffer } {
  const id = message.readUInt16BE(0);
  const mac = createHmac(HASH[key.algorithm], key.secret).update(message).update(variables(key, nowSeconds, FUDGE, 0)).digest();
  const macLength = Buffer.alloc(2);
  macLength.writeUInt16BE(mac.length);
  const after = Buffer.alloc(6);
  after.writeUInt16BE(id, 0);
  after.writeUInt16BE(0, 2); // error
  after.writeUInt16BE(0, 4); // other len
  const fudge = Buffer.alloc(2);
  fudge.writeUInt16BE(FUDGE);
  const rdata = Buffer.concat([canonical(key.algorithm), time48(nowSeconds), fudge, macLength, mac, after]);
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(TYPE.TSIG, 0);
  fixed.writeUInt16BE(CLASS.ANY, 2);
  fixed.writeUInt32BE(0, 4);
  fixed.writeUInt16BE(rdata.length, 8);
  const signed = Buffer.concat([message, canonical(key.name), fixed, rdata]);
  signed.writeUInt16BE(signed.readUInt16BE(10) + 1, 10);
  return { signed, mac };
}

interface TsigFields {
  algorithm: string;
  timeSigned: number;
  fudge: number;
  mac: Buffer;
  originalId: number;
  error: number;
}

function readTsig(record: ResourceRecord): TsigFields {
  const data = record.data;
  let offset = 0;
  const labels: string[] = [];
  for (;;) {
    const length = data[offset];
    if (length === undefined || (length & 0xc0) !== 0) throw new DnsWireError('TSIG algorithm name is malformed');
    offset += 1;
    if (length === 0) break;
    if (offset + length > data.length) throw new DnsWireError('TSIG algorithm name runs past its record');
    labels.push(data.toString('latin1', offset, offset + length));
    offset += length;
  }
  if (offset + 10 > data.length) throw new DnsWireError('TSIG record is truncated');
  const timeSigned = data.readUInt16BE(offset) * 2 ** 32 + data.readUInt32BE(offset + 2);
  const fudge = data.readUInt16BE(offset + 6);
  const macLength = data.readUInt16BE(offset + 8);
  offset += 10;
  if (offset + macLength + 6 > data.length) throw new DnsWireError('TSIG MAC runs past its record');
  const mac = data.subarray(offset, offset + macLength);
  offset += macLength;
  return { algorithm: labels.join('.').toLowerCase(), timeSigned, fudge, mac, originalId: data.readUInt16BE(offset), error: data.readUInt16BE(offset + 2) };
}

/**
 * Checks the answer to a signed request. Returns undefined when it is signed by the key and fresh;
 * otherwise why not, in words (an unsigned answer is what a server sends when it refused the key:
 * its rcode and TSIG error say why).
 */
export function verifyResponse(response: Buffer, decoded: DecodedMessage, key: TsigKey, requestMac: Buffer, nowSeconds: number): string | undefined {
  const last = decoded.additionals.at(-1);
  if (!last || last.type !== TYPE.TSIG) return 'the answer is not signed';
  const tsig = readTsig(last);
  if (tsig.error !== 0) return `TSIG ${RCODE_NAMES[tsig.error] ?? tsig.error}`;
  if (last.name.toLowerCase().replace(/\.$/, '') !== key.name.toLowerCase().replace(/\.$/, '') || tsig.algorithm !== key.algorithm) return 'the answer is signed by another key';
  const unsigned = Buffer.from(response.subarray(0, decoded.additionalOffsets.at(-1)));
  unsigned.writeUInt16BE(tsig.originalId, 0);
  unsigned.writeUInt16BE(unsigned.readUInt16BE(10) - 1, 10);
  const macLength = Buffer.alloc(2);
  macLength.writeUInt16BE(requestMac.length);
  const expected = createHmac(HASH[key.algorithm], key.secret)
    .update(macLength)
    .update(requestMac)
    .update(unsigned)
    .update(variables(key, tsig.timeSigned, tsig.fudge, tsig.error))
    .digest();
  if (tsig.mac.length !== expected.length || !timingSafeEqual(tsig.mac, expected)) return 'the answer\'s TSIG signature does not verify';
  if (Math.abs(nowSeconds - tsig.timeSigned) > tsig.fudge) return 'the answer\'s TSIG time is outside its fudge (are the clocks set?)';
  return undefined;
}
