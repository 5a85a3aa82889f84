/**
 * DNS messages on the wire, as far as ACME DNS-01 through a dynamic-update server needs them:
 * RFC 1035 §4 (header, question, resource records, names with §4.1.4 compression when reading),
 * RFC 2136 §2 (UPDATE: zone, prerequisite, update and additional sections; class NONE and ANY for
 * deletions, §2.5) and TXT rdata (RFC 1035 §3.3.14, strings of at most 255 bytes).
 *
 * Written here rather than taken from dns-packet (decision 0371): dns-packet encodes classes only by
 * name and knows no NONE (254), which deleting one record needs (RFC 2136 §2.5.4), and cannot give
 * the byte offsets TSIG verification needs. Reading is defensive: every length is checked against
 * the buffer, compression pointers may only point backwards (no loops), and anything malformed is a
 * `DnsWireError` (test/unit/dns-wire.test.ts fuzzes it).
 */

export class DnsWireError extends Error {
  override name = 'DnsWireError';
}

export const TYPE = { A: 1, NS: 2, SOA: 6, TXT: 16, TSIG: 250, ANY: 255 } as const;
export const CLASS = { IN: 1, NONE: 254, ANY: 255 } as const;
export const OPCODE = { QUERY: 0, UPDATE: 5 } as const;
export const RCODE_NAMES: Readonly<Record<number, string>> = {
  0: 'NOERROR', 1: 'FORMERR', 2: 'SERVFAIL', 3: 'NXDOMAIN', 4: 'NOTIMP', 5: 'REFUSED',
  6: 'YXDOMAIN', 7: 'YXRRSET', 8: 'NXRRSET', 9: 'NOTAUTH', 10: 'NOTZONE',
  16: 'BADSIG', 17: 'BADKEY', 18: 'BADTIME', 22: 'BADTRUNC',
};

export interface Question {
  name: string;
  type: number;
  class: number;
}

export interface ResourceRecord {
  name: string;
  type: number;
  class: number;
  ttl: number;
  data: Buffer;
}

export interface Message {
  id: number;
  /** The 16 flag bits: QR, opcode, AA, TC, RD, RA, Z, rcode. */
  flags: number;
  questions: Question[];
  answers: ResourceRecord[];
  authorities: ResourceRecord[];
  additionals: ResourceRecord[];
}

export const opcodeOf = (flags: number) => (flags >> 11) & 0xf;
export const rcodeOf = (flags: number) => flags & 0xf;

/** A name in wire form, uncompressed (`a.b.` and `a.b` alike; the root is `.` or empty). */
export function encodeName(name: string): Buffer {
  const trimmed = name.replace(/\.$/, '');
  const labels = trimmed === '' ? [] : trimmed.split('.');
  const parts: Buffer[] = [];
  for (const label of labels) {
    const bytes = Buffer.from(label, 'utf8');
    if (bytes.length === 0 || bytes.length > 63) throw new DnsWireError(`DNS label "${label}" must be 1 to 63 bytes`);
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  parts.push(Buffer.from([0]));
  const out = Buffer.concat(parts);
  if (out.length > 255) throw new DnsWireError('DNS name longer than 255 bytes');
  return out;
}

/** TXT rdata: the value cut into character-strings of at most 255 bytes (RFC 1035 §3.3.14). */
export function txtData(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length || i === 0; i += 255) {
    const chunk = bytes.subarray(i, i + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
    if (bytes.length === 0) break;
  }
  return Buffer.concat(parts);
}

/** The character-strings of TXT rdata, joined (what a DNS-01 validator compares). */
export function readTxt(data: Buffer): string {
  let offset = 0;
  const parts: Buffer[] = [];
  while (offset < data.length) {
    const length = data[offset]!;
    if (offset + 1 + length > data.length) throw new DnsWireError('TXT string runs past its record');
    parts.push(data.subarray(offset + 1, offset + 1 + length));
    offset += 1 + length;
  }
  return Buffer.concat(parts).toString('utf8');
}

function encodeRecord(record: ResourceRecord): Buffer {
  if (record.data.length > 0xffff) throw new DnsWireError('record data longer than 65535 bytes');
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(record.type, 0);
  fixed.writeUInt16BE(record.class, 2);
  fixed.writeUInt32BE(record.ttl >>> 0, 4);
  fixed.writeUInt16BE(record.data.length, 8);
  return Buffer.concat([encodeName(record.name), fixed, record.data]);
}

export function encodeMessage(message: Message): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(message.id, 0);
  header.writeUInt16BE(message.flags, 2);
  header.writeUInt16BE(message.questions.length, 4);
  header.writeUInt16BE(message.answers.length, 6);
  header.writeUInt16BE(message.authorities.length, 8);
  header.writeUInt16BE(message.additionals.length, 10);
  const questions = message.questions.map((q) => {
    const fixed = Buffer.alloc(4);
    fixed.writeUInt16BE(q.type, 0);
    fixed.writeUInt16BE(q.class, 2);
    return Buffer.concat([encodeName(q.name), fixed]);
  });
  const records = [...message.answers, ...message.authorities, ...message.additionals].map(encodeRecord);
  return Buffer.concat([header, ...questions, ...records]);
}

/** Reads a possibly compressed name at `offset`; `end` is where the name's bytes end in place. */
function readName(buf: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let position = offset;
  let end = -1;
  let length = 0;
  for (;;) {
    if (position >= buf.length) throw new DnsWireError('name runs past the message');
    const byte = buf[position]!;
    if ((byte & 0xc0) === 0xc0) {
      if (position + 1 >= buf.length) throw new DnsWireError('compression pointer runs past the message');
      const target = ((byte & 0x3f) << 8) | buf[position + 1]!;
      // Only backwards: a pointer can then never loop.
      if (target >= position) throw new DnsWireError('compression pointer does not point backwards');
      if (end < 0) end = position + 2;
      position = target;
      continue;
    }
    if ((byte & 0xc0) !== 0) throw new DnsWireError('unknown label type');
    if (byte === 0) {
      if (end < 0) end = position + 1;
      break;
    }
    if (position + 1 + byte > buf.length) throw new DnsWireError('label runs past the message');
    length += byte + 1;
    if (length > 255) throw new DnsWireError('name longer than 255 bytes');
    labels.push(buf.toString('latin1', position + 1, position + 1 + byte));
    position += 1 + byte;
  }
  return { name: labels.join('.'), end };
}

export interface DecodedMessage extends Message {
  /** Where each additional record starts in the buffer (TSIG verification cuts the last one off). */
  additionalOffsets: number[];
}

/** A whole message; throws DnsWireError for anything malformed or truncated. */
export function decodeMessage(buf: Buffer): DecodedMessage {
  if (buf.length < 12) throw new DnsWireError('message shorter than its header');
  const counts = [buf.readUInt16BE(4), buf.readUInt16BE(6), buf.readUInt16BE(8), buf.readUInt16BE(10)] as const;
  let offset = 12;
  const questions: Question[] = [];
  for (let i = 0; i < counts[0]; i++) {
    const { name, end } = readName(buf, offset);
    if (end + 4 > buf.length) throw new DnsWireError('question runs past the message');
    questions.push({ name, type: buf.readUInt16BE(end), class: buf.readUInt16BE(end + 2) });
    offset = end + 4;
  }
  const sections: ResourceRecord[][] = [[], [], []];
  const additionalOffsets: number[] = [];
  for (let s = 0; s < 3; s++) {
    for (let i = 0; i < counts[s + 1]!; i++) {
      if (s === 2) additionalOffsets.push(offset);
      const { name, end } = readName(buf, offset);
      if (end + 10 > buf.length) throw new DnsWireError('record runs past the message');
      const dataLength = buf.readUInt16BE(end + 8);
      if (end + 10 + dataLength > buf.length) throw new DnsWireError('record data runs past the message');
      sections[s]!.push({ name, type: buf.readUInt16BE(end), class: buf.readUInt16BE(end + 2), ttl: buf.readUInt32BE(end + 4), data: buf.subarray(end + 10, end + 10 + dataLength) });
      offset = end + 10 + dataLength;
    }
  }
  return { id: buf.readUInt16BE(0), flags: buf.readUInt16BE(2), questions, answers: sections[0]!, authorities: sections[1]!, additionals: sections[2]!, additionalOffsets };
}
