/**
 * A raw LDAP connection for the tests that must send what no client library sends (malformed or
 * oversized messages, abandon, a forged paged-results cookie) and read every response as bytes
 * arrived: requests are written with the server's BER writer, responses read with a small decoder
 * here (RFC 4511 §4.1.1, §4.1.9, §4.5.2).
 */
import { connect, type Socket } from 'node:net';
import { BerReader, Tag, boolean, constructed, elementLength, encode, enumerated, integer, octets, sequence, type Element } from '../../server/ldap/ber.js';

export interface Response {
  id: number;
  tag: number;
  code?: number;
  matchedDN?: string;
  diagnostic?: string;
  /** ExtendedResponse: responseName / responseValue. */
  name?: string;
  value?: Buffer;
  /** SearchResultEntry. */
  dn?: string;
  attributes?: Record<string, string[]>;
  controls: { oid: string; value?: Buffer }[];
}

export function decodeResponse(frame: Buffer): Response {
  const message = new BerReader(frame).sequence();
  const id = message.integer();
  const tag = message.peek()!;
  const op = message.sequence(tag);
  const out: Response = { id, tag, controls: [] };
  if (tag === 0x64) {
    out.dn = op.string();
    out.attributes = {};
    const list = op.sequence();
    while (!list.done) {
      const attribute = list.sequence();
      const name = attribute.string();
      const values = attribute.sequence(Tag.set);
      out.attributes[name] = [];
      while (!values.done) out.attributes[name].push(values.string());
    }
  } else {
    out.code = op.integer(Tag.enumerated);
    out.matchedDN = op.string();
    out.diagnostic = op.string();
    if (op.peek() === 0x8a) out.name = op.string(0x8a);
    if (op.peek() === 0x8b) out.value = Buffer.from(op.bytes(0x8b));
  }
  if (!message.done) {
    const controls = message.sequence(0xa0);
    while (!controls.done) {
      const control = controls.sequence();
      const oid = control.string();
      if (control.peek() === Tag.boolean) control.boolean();
      out.controls.push({ oid, value: control.peek() === Tag.octetString ? Buffer.from(control.bytes()) : undefined });
    }
  }
  return out;
}

export class RawLdap {
  readonly responses: Response[] = [];
  private buffer = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  closed = false;
  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      for (;;) {
        const length = elementLength(this.buffer);
        if (length === undefined || this.buffer.length < length) break;
        this.responses.push(decodeResponse(this.buffer.subarray(0, length)));
        this.buffer = this.buffer.subarray(length);
      }
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => {});
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawLdap> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host, () => resolve(new RawLdap(socket)));
      socket.once('error', reject);
    });
  }

  private wake() {
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w();
  }

  send(bytes: Buffer) {
    this.socket.write(bytes);
  }

  /** Waits until `until` holds for the responses so far (or the connection closed), at most `ms`. */
  async waitFor(until: (responses: Response[]) => boolean, ms = 10_000): Promise<Response[]> {
    const deadline = Date.now() + ms;
    while (!until(this.responses) && !this.closed) {
      if (Date.now() > deadline) throw new Error(`no such responses within ${ms} ms: ${JSON.stringify(this.responses.map((r) => [r.id, r.tag, r.code]))}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return this.responses;
  }

  /** The responses to message `id` once its final one (anything but a search entry) arrived. */
  async answers(id: number, ms?: number): Promise<Response[]> {
    await this.waitFor((rs) => rs.some((r) => r.id === id && r.tag !== 0x64), ms);
    return this.responses.filter((r) => r.id === id);
  }

  close() {
    this.socket.destroy();
  }
}

// --- Requests --------------------------------------------------------------------------------

export const message = (id: number, op: Element, controls?: Element[]) =>
  encode(sequence(integer(id), op, ...(controls?.length ? [constructed(0xa0, ...controls)] : [])));

export const bindRequest = (id: number, name: string, password: string, version = 3) =>
  message(id, constructed(0x60, integer(version), octets(name), octets(password, 0x80)));

export function searchRequest(id: number, base: string, filter: Element, options: { scope?: number; sizeLimit?: number; attributes?: string[]; controls?: Element[] } = {}) {
  return message(
    id,
    constructed(0x63, octets(base), enumerated(options.scope ?? 2), enumerated(0), integer(options.sizeLimit ?? 0), integer(0), boolean(false), filter, sequence(...(options.attributes ?? []).map((a) => octets(a)))),
    options.controls,
  );
}

export const present = (attribute: string) => octets(attribute, 0x87);
export const equality = (attribute: string, value: string) => constructed(0xa3, octets(attribute), octets(value));
export const and = (...filters: Element[]) => constructed(0xa0, ...filters);
export const not = (filter: Element) => constructed(0xa2, filter);

export const pagedControl = (size: number, cookie: Buffer = Buffer.alloc(0), critical = false) =>
  sequence(octets('1.2.840.113556.1.4.319'), ...(critical ? [boolean(true)] : []), octets(encode(sequence(integer(size), octets(cookie)))));

export const abandonRequest = (id: number, target: number) => message(id, integer(target, 0x50));
export const unbindRequest = (id: number) => message(id, Buffer.from([0x42, 0x00]));
