/**
 * The two bindings a browser carries SAML messages in (SAML 2.0 Bindings §3.4 HTTP-Redirect,
 * §3.5 HTTP-POST):
 * - HTTP-Redirect: `SAMLRequest`/`SAMLResponse` is base64 of the DEFLATE'd (RFC 1951, raw) XML in
 *   the query, with `RelayState` and, when signed, `SigAlg` and `Signature` over the octets
 *   `SAMLRequest=…&RelayState=…&SigAlg=…` exactly as they came in the query (§3.4.4.1: the
 *   values as sent, not re-encoded, since encoders differ in case and in what they escape).
 *   Inflating stops at 64 KiB (MAX_INFLATED_BYTES): a small message that inflates to more is a
 *   bomb, refused before it is read.
 * - HTTP-POST: base64 of the XML in a form field (line breaks allowed), at most 256 KiB decoded.
 * Each parameter may appear once; `RelayState` is at most 80 bytes (§3.4.3, §3.5.3) and is given
 * back unchanged. Base64 is read strictly: anything but the alphabet, padding and line breaks is
 * refused rather than skipped, as Node's lenient decoder would.
 */
import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';
import { MAX_XML_BYTES, xmlText } from './xml.js';
import { SamlRefusal } from './refusal.js';

export const MAX_INFLATED_BYTES = 64 * 1024;
export const MAX_RELAY_STATE_BYTES = 80;

export type Binding = 'HTTP-Redirect' | 'HTTP-POST';
export const BINDING_URNS: Record<Binding, string> = {
  'HTTP-Redirect': 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
  'HTTP-POST': 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
};
export const bindingOfUrn = (urn: string): Binding | undefined =>
  (Object.entries(BINDING_URNS) as [Binding, string][]).find(([, u]) => u === urn)?.[0];

export type MessageParam = 'SAMLRequest' | 'SAMLResponse';

/** A message as it arrived, not read yet: its XML text and how it was carried. */
export interface Carried {
  binding: Binding;
  param: MessageParam;
  xml: string;
  relayState: string | undefined;
  /** HTTP-Redirect only, when signed: the signed octets, the algorithm URI and the signature. */
  querySignature: { octets: string; sigAlg: string; signature: Buffer } | undefined;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict base64 (line breaks and spaces allowed between characters), at most `max` bytes decoded. */
export function strictBase64(value: string, max: number): Buffer {
  const compact = value.replace(/[\r\n\t ]/g, '');
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) throw new SamlRefusal('bad_encoding', 'the message is not base64');
  if ((compact.length / 4) * 3 > max + 2) throw new SamlRefusal('too_large', `the message is larger than ${max} bytes`);
  return Buffer.from(compact, 'base64');
}

/** DEFLATE'd bytes inflated, stopping at MAX_INFLATED_BYTES. */
export function inflateBounded(bytes: Buffer): Buffer {
  try {
    return inflateRawSync(bytes, { maxOutputLength: MAX_INFLATED_BYTES });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
      throw new SamlRefusal('inflate_too_large', `the message inflates to more than ${MAX_INFLATED_BYTES} bytes`);
    }
    throw new SamlRefusal('bad_encoding', 'the message is not DEFLATE data');
  }
}

function relayStateOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Buffer.byteLength(value) > MAX_RELAY_STATE_BYTES) throw new SamlRefusal('relay_state_too_long', `RelayState is longer than ${MAX_RELAY_STATE_BYTES} bytes`);
  return value;
}

/** `application/x-www-form-urlencoded` decoding of one value; a malformed escape is refused. */
function formDecode(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    throw new SamlRefusal('bad_binding', 'the query has a malformed escape');
  }
}

/** The query's parameters with their raw (still encoded) values; each may appear once. */
export function rawQuery(url: string): Map<string, string> {
  const at = url.indexOf('?');
  const params = new Map<string, string>();
  if (at < 0) return params;
  for (const part of url.slice(at + 1).split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = formDecode(eq < 0 ? part : part.slice(0, eq));
    if (params.has(name)) throw new SamlRefusal('bad_binding', `${name} appears more than once`);
    params.set(name, eq < 0 ? '' : part.slice(eq + 1));
  }
  return params;
}

/** A base64 parameter's value: form decoding turns an unescaped `+` into a space, which base64 never holds. */
const base64Param = (raw: string) => formDecode(raw).replace(/ /g, '+');

/** Reads an HTTP-Redirect message from the request URL (`param`: which message it must be). */
export function fromRedirect(url: string, param: MessageParam): Carried {
  const query = rawQuery(url);
  const raw = query.get(param);
  if (raw === undefined) throw new SamlRefusal('bad_binding', `the query has no ${param}`);
  const relayRaw = query.get('RelayState');
  const relayState = relayStateOf(relayRaw === undefined ? undefined : formDecode(relayRaw));
  const sigAlgRaw = query.get('SigAlg');
  const signatureRaw = query.get('Signature');
  let querySignature: Carried['querySignature'];
  if (sigAlgRaw !== undefined || signatureRaw !== undefined) {
    if (sigAlgRaw === undefined || signatureRaw === undefined) throw new SamlRefusal('bad_signature', 'the query has SigAlg or Signature without the other');
    const octets = [`${param}=${raw}`, ...(relayRaw === undefined ? [] : [`RelayState=${relayRaw}`]), `SigAlg=${sigAlgRaw}`].join('&');
    querySignature = { octets, sigAlg: formDecode(sigAlgRaw), signature: strictBase64(base64Param(signatureRaw), 1024) };
  }
  const deflated = strictBase64(base64Param(raw), MAX_XML_BYTES);
  return { binding: 'HTTP-Redirect', param, xml: xmlText(inflateBounded(deflated)), relayState, querySignature };
}

/** Reads an HTTP-POST message from a parsed form body (each field once). */
export function fromPost(body: unknown, param: MessageParam): Carried {
  const fields = (body ?? {}) as Record<string, unknown>;
  const field = (name: string): string | undefined => {
    const value = fields[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw new SamlRefusal('bad_binding', `${name} appears more than once`);
    return value;
  };
  const encoded = field(param);
  if (encoded === undefined) throw new SamlRefusal('bad_binding', `the form has no ${param}`);
  const relayState = relayStateOf(field('RelayState'));
  if (field('SigAlg') !== undefined || field('Signature') !== undefined) {
    throw new SamlRefusal('bad_binding', 'HTTP-POST messages are signed inside the XML, not with SigAlg and Signature');
  }
  return { binding: 'HTTP-POST', param, xml: xmlText(strictBase64(encoded, MAX_XML_BYTES)), relayState, querySignature: undefined };
}

/** The query of an outgoing HTTP-Redirect message, before its signature (`SigAlg` included when signed). */
export function redirectQuery(param: MessageParam, xml: string, relayState: string | undefined, sigAlg: string | undefined): string {
  const deflated = deflateRawSync(Buffer.from(xml), { level: constants.Z_BEST_SPEED }).toString('base64');
  const parts = [`${param}=${encodeURIComponent(deflated)}`];
  if (relayState !== undefined) parts.push(`RelayState=${encodeURIComponent(relayState)}`);
  if (sigAlg !== undefined) parts.push(`SigAlg=${encodeURIComponent(sigAlg)}`);
  return parts.join('&');
}
