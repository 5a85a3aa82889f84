/**
 * RFC 4511 §4: LDAPv3 messages. Requests are decoded from one framed LDAPMessage (ber.ts) into
 * plain values; responses are encoded from them. Limits on what a request may carry (attributes
 * asked for, string lengths, the filter's size: filter.ts) keep one message's work bounded.
 *
 * A request that cannot be decoded is a `BerError`: the connection answers it with the Notice of
 * Disconnection (§4.4.1, protocolError) and closes, as §4.1.1 says. A well-formed request that
 * asks for more than the limits allow is a `RequestRefused` for that one message.
 */
import { BerError, BerReader, Tag, constructed, encode, enumerated, integer, octets, sequence, set, type Element } from './ber.js';
import { decodeFilter, type Filter } from './filter.js';

/** RFC 4511 §4.1.9 and Appendix A: the result codes this server answers with. */
export const ResultCode = {
  success: 0,
  operationsError: 1,
  protocolError: 2,
  timeLimitExceeded: 3,
  sizeLimitExceeded: 4,
  authMethodNotSupported: 7,
  unavailableCriticalExtension: 12,
  confidentialityRequired: 13,
  noSuchObject: 32,
  invalidDNSyntax: 34,
  invalidCredentials: 49,
  insufficientAccessRights: 50,
  busy: 51,
  unavailable: 52,
  unwillingToPerform: 53,
  other: 80,
} as const;
export type ResultCodeValue = (typeof ResultCode)[keyof typeof ResultCode];

/** [APPLICATION n] tags of the protocol operations (§4.2–4.14). */
export const Op = {
  bindRequest: 0x60,
  bindResponse: 0x61,
  unbindRequest: 0x42,
  searchRequest: 0x63,
  searchResultEntry: 0x64,
  searchResultDone: 0x65,
  modifyRequest: 0x66,
  modifyResponse: 0x67,
  addRequest: 0x68,
  addResponse: 0x69,
  delRequest: 0x4a,
  delResponse: 0x6b,
  modDNRequest: 0x6c,
  modDNResponse: 0x6d,
  compareRequest: 0x6e,
  compareResponse: 0x6f,
  abandonRequest: 0x50,
  extendedRequest: 0x77,
  extendedResponse: 0x78,
} as const;

export const OID = {
  startTls: '1.3.6.1.4.1.1466.20037',
  whoAmI: '1.3.6.1.4.1.4203.1.11.3',
  pagedResults: '1.2.840.113556.1.4.319',
  noticeOfDisconnection: '1.3.6.1.4.1.1466.20036',
} as const;

/** What one message may carry. */
export const LIMITS = {
  /** A whole LDAPMessage, in bytes: binds and searches are a few hundred. */
  messageBytes: 64 * 1024,
  /** Attributes asked for in one search. */
  attributes: 100,
  /** A DN, an attribute description or an assertion value, in bytes. */
  stringBytes: 4096,
  /** Controls on one message. */
  controls: 16,
} as const;

/** A well-formed request asking for more than the server allows: answered, not disconnected. */
export class RequestRefused extends Error {
  override name = 'RequestRefused';
  constructor(
    readonly messageId: number,
    readonly responseTag: number,
    readonly resultCode: ResultCodeValue,
    message: string,
  ) {
    super(message);
  }
}

export interface Control {
  oid: string;
  critical: boolean;
  value: Buffer | undefined;
}

export type SearchScope = 'base' | 'one' | 'sub';

export interface BindRequest {
  type: 'bind';
  version: number;
  name: string;
  /** Simple: the password's bytes; SASL: the mechanism (not supported). */
  auth: { kind: 'simple'; password: Buffer } | { kind: 'sasl'; mechanism: string };
}

export interface SearchRequest {
  type: 'search';
  baseObject: string;
  scope: SearchScope;
  sizeLimit: number;
  timeLimit: number;
  typesOnly: boolean;
  filter: Filter;
  attributes: string[];
}

/** The operations a read-only directory refuses (§4.6–4.10): only their response tag matters. */
export interface WriteRequest {
  type: 'write';
  operation: 'modify' | 'add' | 'delete' | 'modifyDN' | 'compare';
  responseTag: number;
}

export type Request =
  | BindRequest
  | SearchRequest
  | WriteRequest
  | { type: 'unbind' }
  | { type: 'abandon'; messageId: number }
  | { type: 'extended'; oid: string; value: Buffer | undefined };

export interface Message {
  id: number;
  request: Request;
  controls: Control[];
}

const MAX_MESSAGE_ID = 2 ** 31 - 1;

function boundedString(reader: BerReader, tag: number = Tag.octetString): string {
  const bytes = reader.bytes(tag);
  if (bytes.length > LIMITS.stringBytes) throw new BerError(`a string of ${bytes.length} bytes (at most ${LIMITS.stringBytes})`);
  return bytes.toString('utf8');
}

const SCOPES: SearchScope[] = ['base', 'one', 'sub'];

const WRITES: Record<number, WriteRequest> = {
  [Op.modifyRequest]: { type: 'write', operation: 'modify', responseTag: Op.modifyResponse },
  [Op.addRequest]: { type: 'write', operation: 'add', responseTag: Op.addResponse },
  [Op.delRequest]: { type: 'write', operation: 'delete', responseTag: Op.delResponse },
  [Op.modDNRequest]: { type: 'write', operation: 'modifyDN', responseTag: Op.modDNResponse },
  [Op.compareRequest]: { type: 'write', operation: 'compare', responseTag: Op.compareResponse },
};

/** Decodes one framed LDAPMessage (§4.1.1). Throws `BerError` or `RequestRefused`. */
export function decodeMessage(frame: Buffer): Message {
  const outer = new BerReader(frame);
  const message = outer.sequence(Tag.sequence);
  if (!outer.done) throw new BerError('bytes after the message');
  const id = message.integer();
  if (id < 0 || id > MAX_MESSAGE_ID) throw new BerError('a message id out of range');
  const tag = message.peek();
  if (tag === undefined) throw new BerError('a message without an operation');
  let request: Request;
  if (tag === Op.bindRequest) request = decodeBind(message.sequence(Op.bindRequest));
  else if (tag === Op.searchRequest) request = decodeSearch(id, message.sequence(Op.searchRequest));
  else if (tag === Op.unbindRequest) {
    const { start, end } = message.element(Op.unbindRequest);
    if (end !== start) throw new BerError('an unbind request carries nothing');
    request = { type: 'unbind' };
  } else if (tag === Op.abandonRequest) request = { type: 'abandon', messageId: message.integer(Op.abandonRequest) };
  else if (tag === Op.extendedRequest) request = decodeExtended(message.sequence(Op.extendedRequest));
  else if (WRITES[tag]) {
    message.skip();
    request = WRITES[tag]!;
  } else throw new BerError(`0x${tag.toString(16)} is not a request`);
  const controls = message.done ? [] : decodeControls(message.sequence(0xa0));
  if (!message.done) throw new BerError('bytes after the controls');
  return { id, request, controls };
}

function decodeBind(reader: BerReader): BindRequest {
  const version = reader.integer();
  const name = boundedString(reader);
  const tag = reader.peek();
  let auth: BindRequest['auth'];
  if (tag === 0x80) {
    const password = reader.bytes(0x80);
    if (password.length > LIMITS.stringBytes) throw new BerError('a password longer than any this server accepts');
    auth = { kind: 'simple', password };
  } else if (tag === 0xa3) {
    const sasl = reader.sequence(0xa3);
    auth = { kind: 'sasl', mechanism: boundedString(sasl) };
  } else throw new BerError('a bind without simple or SASL credentials');
  return { type: 'bind', version, name, auth };
}

function decodeSearch(id: number, reader: BerReader): SearchRequest {
  const baseObject = boundedString(reader);
  const scope = SCOPES[reader.integer(Tag.enumerated)];
  if (!scope) throw new BerError('an unknown search scope');
  const deref = reader.integer(Tag.enumerated);
  if (deref < 0 || deref > 3) throw new BerError('an unknown alias dereferencing');
  const sizeLimit = reader.integer();
  const timeLimit = reader.integer();
  if (sizeLimit < 0 || timeLimit < 0) throw new BerError('a negative limit');
  const typesOnly = reader.boolean();
  const filter = decodeFilter(reader, (why) => new RequestRefused(id, Op.searchResultDone, ResultCode.protocolError, why));
  const list = reader.sequence(Tag.sequence);
  const attributes: string[] = [];
  while (!list.done) {
    if (attributes.length >= LIMITS.attributes) {
      throw new RequestRefused(id, Op.searchResultDone, ResultCode.protocolError, `a search may ask for at most ${LIMITS.attributes} attributes`);
    }
    attributes.push(boundedString(list));
  }
  if (!reader.done) throw new BerError('bytes after the search request');
  return { type: 'search', baseObject, scope, sizeLimit, timeLimit, typesOnly, filter, attributes };
}

function decodeExtended(reader: BerReader): Request {
  const oid = boundedString(reader, 0x80);
  const value = reader.peek() === 0x81 ? Buffer.from(reader.bytes(0x81)) : undefined;
  if (!reader.done) throw new BerError('bytes after the extended request');
  return { type: 'extended', oid, value };
}

function decodeControls(reader: BerReader): Control[] {
  const controls: Control[] = [];
  while (!reader.done) {
    if (controls.length >= LIMITS.controls) throw new BerError('too many controls');
    const control = reader.sequence(Tag.sequence);
    const oid = boundedString(control);
    const critical = control.peek() === Tag.boolean ? control.boolean() : false;
    const value = control.peek() === Tag.octetString ? Buffer.from(control.bytes()) : undefined;
    if (!control.done) throw new BerError('bytes after a control');
    controls.push({ oid, critical, value });
  }
  return controls;
}

// --- Responses -------------------------------------------------------------------------------

/** An LDAPMessage around a response operation (and its controls). */
export function envelope(id: number, op: Element, controls: Element[] = []): Buffer {
  const parts: Element[] = [integer(id), op];
  if (controls.length) parts.push(constructed(0xa0, ...controls));
  return encode(sequence(...parts));
}

/** LDAPResult (§4.1.9): the fields every response starts with. */
function result(code: number, matchedDN: string, diagnostic: string): Element[] {
  return [enumerated(code), octets(matchedDN), octets(diagnostic)];
}

export interface ResultFields {
  code: number;
  matchedDN?: string;
  diagnostic?: string;
}

/** A response that is an LDAPResult only (bind, search done, the refused writes). */
export function resultResponse(id: number, tag: number, fields: ResultFields, controls: Element[] = []): Buffer {
  return envelope(id, constructed(tag, ...result(fields.code, fields.matchedDN ?? '', fields.diagnostic ?? '')), controls);
}

/** ExtendedResponse (§4.12), with its name and value when it has them. */
export function extendedResponse(id: number, fields: ResultFields, name?: string, value?: Buffer): Buffer {
  const parts = result(fields.code, fields.matchedDN ?? '', fields.diagnostic ?? '');
  if (name !== undefined) parts.push(octets(name, 0x8a));
  if (value !== undefined) parts.push(octets(value, 0x8b));
  return envelope(id, constructed(Op.extendedResponse, ...parts));
}

/** The Notice of Disconnection (§4.4.1): an unsolicited ExtendedResponse, message id 0. */
export function noticeOfDisconnection(code: number, diagnostic: string): Buffer {
  return extendedResponse(0, { code, diagnostic }, OID.noticeOfDisconnection);
}

export interface EntryAttribute {
  name: string;
  values: string[];
}

/** SearchResultEntry (§4.5.2). */
export function entryResponse(id: number, dn: string, attributes: EntryAttribute[]): Buffer {
  const list = sequence(...attributes.map((a) => sequence(octets(a.name), set(...a.values.map((v) => octets(v))))));
  return envelope(id, constructed(Op.searchResultEntry, octets(dn), list));
}

/** The paged-results control of a SearchResultDone (RFC 2696 §2). */
export function pagedResultsControl(size: number, cookie: Buffer): Element {
  const value = encode(sequence(integer(size), octets(cookie)));
  return sequence(octets(OID.pagedResults), octets(value));
}

/** Reads a paged-results request control's value (RFC 2696 §2): page size and cookie. */
export function decodePagedResults(value: Buffer | undefined): { size: number; cookie: Buffer } {
  if (!value) throw new BerError('a paged-results control without a value');
  const reader = new BerReader(value).sequence(Tag.sequence);
  const size = reader.integer();
  const cookie = Buffer.from(reader.bytes());
  if (!reader.done || size < 0) throw new BerError('a malformed paged-results control');
  return { size, cookie };
}

