/**
 * RFC 4511 §5.1: the subset of BER (X.690) that LDAP uses, read strictly and written simply.
 *
 * Reading: one-byte tags only (LDAP has no tag above 30), definite lengths of at most four octets
 * (§5.1: "Only the definite form of length encoding is used"), and every element must fit inside
 * the one that holds it. Anything else is a `BerError`, which the connection answers with a Notice
 * of Disconnection (protocolError). Every read advances through bytes that exist: a reader never
 * loops, recurses (filters recurse through filter.ts, which bounds the depth) or allocates more
 * than the message it reads. We wrote this rather than use @ldapjs/asn1 + @ldapjs/messages: those
 * are archived, and a 100-byte malformed search request made them loop until the process died
 * (docs/decisions, "LDAP protocol library").
 *
 * Writing: elements are nested arrays of buffers whose lengths are computed once, bottom up.
 */

export class BerError extends Error {
  override name = 'BerError';
}

/** Universal tags LDAP uses. */
export const Tag = {
  boolean: 0x01,
  integer: 0x02,
  octetString: 0x04,
  null: 0x05,
  enumerated: 0x0a,
  sequence: 0x30,
  set: 0x31,
} as const;

/** A reader over `buffer[start, end)`. */
export class BerReader {
  private pos: number;

  constructor(
    private readonly buffer: Buffer,
    start = 0,
    private readonly end = buffer.length,
  ) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** The next element's tag, without reading it; undefined at the end. */
  peek(): number | undefined {
    return this.pos < this.end ? this.buffer[this.pos] : undefined;
  }

  /** Reads one element's header: its tag and where its value lies; the reader moves past it. */
  element(expected?: number): { tag: number; start: number; end: number } {
    if (this.pos >= this.end) throw new BerError('an element is missing');
    const tag = this.buffer[this.pos]!;
    if ((tag & 0x1f) === 0x1f) throw new BerError('multi-byte tags are not used by LDAP');
    if (expected !== undefined && tag !== expected) throw new BerError(`expected tag 0x${expected.toString(16)}, got 0x${tag.toString(16)}`);
    const { length, headerLength } = readLength(this.buffer, this.pos + 1, this.end);
    const start = this.pos + 1 + headerLength;
    const end = start + length;
    if (end > this.end) throw new BerError('an element is longer than what holds it');
    this.pos = end;
    return { tag, start, end };
  }

  /** A reader over the next element's value (a SEQUENCE, SET or constructed choice). */
  sequence(expected: number = Tag.sequence): BerReader {
    const { start, end } = this.element(expected);
    return new BerReader(this.buffer, start, end);
  }

  /** The next element's raw value bytes (a view, not a copy). */
  bytes(expected: number = Tag.octetString): Buffer {
    const { start, end } = this.element(expected);
    return this.buffer.subarray(start, end);
  }

  /** An OCTET STRING (or an implicitly tagged one) as UTF-8 text. */
  string(expected: number = Tag.octetString): string {
    const { start, end } = this.element(expected);
    return this.buffer.toString('utf8', start, end);
  }

  /** An INTEGER or ENUMERATED of at most four octets, two's complement. */
  integer(expected: number = Tag.integer): number {
    const { start, end } = this.element(expected);
    const length = end - start;
    if (length < 1 || length > 4) throw new BerError('an integer of 1 to 4 octets was expected');
    return this.buffer.readIntBE(start, length);
  }

  boolean(expected: number = Tag.boolean): boolean {
    const { start, end } = this.element(expected);
    if (end - start !== 1) throw new BerError('a boolean is one octet');
    return this.buffer[start] !== 0;
  }

  /** Skips the next element. */
  skip(): void {
    this.element();
  }
}

/** A definite length at `at`: short form, or long form of 1 to 4 octets. */
function readLength(buffer: Buffer, at: number, limit: number): { length: number; headerLength: number } {
  if (at >= limit) throw new BerError('a length is missing');
  const first = buffer[at]!;
  if (first < 0x80) return { length: first, headerLength: 1 };
  const octets = first & 0x7f;
  if (octets === 0) throw new BerError('indefinite lengths are not used by LDAP');
  if (octets > 4) throw new BerError('a length of more than four octets');
  if (at + 1 + octets > limit) throw new BerError('a length is cut short');
  let length = 0;
  for (let i = 1; i <= octets; i++) length = length * 256 + buffer[at + i]!;
  return { length, headerLength: 1 + octets };
}

/**
 * How long the element starting at `buffer[0]` is in all (header and value), once enough of it has
 * arrived to say; undefined while its header is incomplete. Used to cut a TCP stream into messages.
 */
export function elementLength(buffer: Buffer): number | undefined {
  if (buffer.length < 2) return undefined;
  const first = buffer[1]!;
  if (first < 0x80) return 2 + first;
  const octets = first & 0x7f;
  if (octets === 0) throw new BerError('indefinite lengths are not used by LDAP');
  if (octets > 4) throw new BerError('a length of more than four octets');
  if (buffer.length < 2 + octets) return undefined;
  let length = 0;
  for (let i = 0; i < octets; i++) length = length * 256 + buffer[2 + i]!;
  return 2 + octets + length;
}

// --- Writing ---------------------------------------------------------------------------------

/** An encoded element, or one still to be encoded. */
export type Element = Buffer | Constructed;
export interface Constructed {
  tag: number;
  children: Element[];
  /** Computed by `encode`. */
  length?: number;
}

/** How many octets the definite length `length` takes (short form, or long form up to four). */
function lengthOctets(length: number): number {
  return length < 0x80 ? 1 : length < 0x100 ? 2 : length < 0x10000 ? 3 : length < 0x1000000 ? 4 : 5;
}

/** Writes the length at `at`; returns where the value starts. */
function writeLength(out: Buffer, at: number, length: number): number {
  const octets = lengthOctets(length);
  if (octets === 1) {
    out[at] = length;
    return at + 1;
  }
  out[at] = 0x80 | (octets - 1);
  for (let i = octets - 1; i >= 1; i--) {
    out[at + i] = length & 0xff;
    length = Math.floor(length / 256);
  }
  return at + octets;
}

/** A primitive element with `tag` and `value`, in one allocation. */
export function primitive(tag: number, value: Buffer): Buffer {
  const out = Buffer.allocUnsafe(1 + lengthOctets(value.length) + value.length);
  out[0] = tag;
  value.copy(out, writeLength(out, 1, value.length));
  return out;
}

/** An OCTET STRING (or an implicitly tagged one); text is written as UTF-8 without a copy. */
export function octets(value: string | Buffer, tag: number = Tag.octetString): Buffer {
  if (typeof value !== 'string') return primitive(tag, value);
  const length = Buffer.byteLength(value, 'utf8');
  const out = Buffer.allocUnsafe(1 + lengthOctets(length) + length);
  out[0] = tag;
  out.write(value, writeLength(out, 1, length), 'utf8');
  return out;
}

/** An INTEGER (or ENUMERATED) in the fewest octets, two's complement. */
export function integer(value: number, tag: number = Tag.integer): Buffer {
  const bytes: number[] = [];
  let v = value;
  do {
    bytes.unshift(v & 0xff);
    v >>= 8;
  } while (v !== 0 && v !== -1);
  // A positive number whose top bit is set needs a leading zero (and a negative one a leading 0xff).
  if (value >= 0 && (bytes[0]! & 0x80)) bytes.unshift(0);
  if (value < 0 && !(bytes[0]! & 0x80)) bytes.unshift(0xff);
  return primitive(tag, Buffer.from(bytes));
}

export const enumerated = (value: number): Buffer => integer(value, Tag.enumerated);
export const boolean = (value: boolean): Buffer => primitive(Tag.boolean, Buffer.from([value ? 0xff : 0]));
export const constructed = (tag: number, ...children: Element[]): Constructed => ({ tag, children });
export const sequence = (...children: Element[]): Constructed => constructed(Tag.sequence, ...children);
export const set = (...children: Element[]): Constructed => constructed(Tag.set, ...children);

function measure(element: Element): number {
  if (Buffer.isBuffer(element)) return element.length;
  let length = 0;
  for (const child of element.children) length += measure(child);
  element.length = length;
  return 1 + lengthOctets(length) + length;
}

function write(element: Element, out: Buffer, at: number): number {
  if (Buffer.isBuffer(element)) {
    element.copy(out, at);
    return at + element.length;
  }
  out[at] = element.tag;
  let pos = writeLength(out, at + 1, element.length!);
  for (const child of element.children) pos = write(child, out, pos);
  return pos;
}

/** The bytes of an element tree. */
export function encode(element: Element): Buffer {
  const out = Buffer.allocUnsafe(measure(element));
  write(element, out, 0);
  return out;
}
