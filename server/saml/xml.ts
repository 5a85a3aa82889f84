/**
 * The one XML parser of the SAML identity provider (spec saml.md, "Hostile input"; SAML 2.0 Core
 * §1.3, XML 1.0 §2.8), guarding what @xmldom/xmldom is given:
 * - at most 256 KiB of UTF-8 (MAX_XML_BYTES), valid UTF-8 only, an XML declaration only at the
 *   start and only for UTF-8;
 * - no `<!DOCTYPE`, `<!ENTITY` or any other markup declaration, so no DTD, internal or external
 *   entity, or external reference is ever read (XXE, billion laughs); no processing instruction;
 *   comments only where the caller allows them (SP metadata), never in protocol messages, where a
 *   comment splitting a text node is the classic way to truncate a NameID or a digest;
 * - well-formed, one root element, every warning and error of the parser fatal;
 * - elements nested at most 64 deep (MAX_XML_DEPTH);
 * - no two elements with the same `ID`/`Id`/`id` value, so a signature reference names one
 *   element only (signature wrapping: signature.ts checks the rest).
 * Refusals are `SamlRefusal`s with a stable reason (refusal.ts), never the XML.
 */
import { DOMParser } from '@xmldom/xmldom';
import { SamlRefusal } from './refusal.js';

export const MAX_XML_BYTES = 256 * 1024;
export const MAX_XML_DEPTH = 64;

export const NS = {
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
} as const;

/** The attribute names an XML signature reference may point at (xml-crypto's `idAttributes`). */
export const ID_ATTRIBUTES = ['ID', 'Id', 'id'] as const;

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;
const CDATA_SECTION_NODE = 4;
const COMMENT_NODE = 8;

export interface ParseOptions {
  /** Comments are allowed (and ignored): SP metadata files carry them; protocol messages may not. */
  comments?: boolean;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes as UTF-8 text, refusing anything larger than the cap or not valid UTF-8. */
export function xmlText(bytes: Uint8Array): string {
  if (bytes.byteLength > MAX_XML_BYTES) throw new SamlRefusal('too_large', `the XML is larger than ${MAX_XML_BYTES} bytes`);
  try {
    return utf8.decode(bytes);
  } catch {
    throw new SamlRefusal('not_well_formed', 'the XML is not valid UTF-8');
  }
}

const DECLARATION = /^\uFEFF?<\?xml(\s[^?]*)?\?>/;

/** Refuses what the parser must never see (see the file's header); returns the text without its XML declaration. */
function screen(text: string, options: ParseOptions): string {
  if (Buffer.byteLength(text) > MAX_XML_BYTES) throw new SamlRefusal('too_large', `the XML is larger than ${MAX_XML_BYTES} bytes`);
  let body = text;
  const declaration = DECLARATION.exec(text);
  if (declaration) {
    const encoding = /\bencoding\s*=\s*["']([^"']*)["']/.exec(declaration[1] ?? '');
    if (encoding && encoding[1]!.toLowerCase() !== 'utf-8') throw new SamlRefusal('not_well_formed', 'only UTF-8 XML is accepted');
    body = text.slice(declaration[0].length);
  }
  if (/<!(?!--|\[CDATA\[)/.test(body)) throw new SamlRefusal('dtd_forbidden', 'the XML has a document type or entity declaration');
  if (body.includes('<?')) throw new SamlRefusal('not_well_formed', 'the XML has a processing instruction');
  if (!options.comments && body.includes('<!--')) throw new SamlRefusal('not_well_formed', 'the XML has a comment');
  return body;
}

/**
 * Parses `text` under the rules above; the document's root element is `documentElement`.
 * Throws `SamlRefusal` for anything refused.
 */
export function parseXml(text: string, options: ParseOptions = {}): Document {
  const body = screen(text, options);
  const fail = (message: string): never => {
    throw new SamlRefusal('not_well_formed', `the XML is not well-formed (${message.split('\n')[0]!.slice(0, 120)})`);
  };
  let doc: Document;
  try {
    doc = new DOMParser({ errorHandler: { warning: fail, error: fail, fatalError: fail } }).parseFromString(body, 'text/xml') as unknown as Document;
  } catch (error) {
    if (error instanceof SamlRefusal) throw error;
    return fail(error instanceof Error ? error.message : 'unreadable');
  }
  const root = doc.documentElement;
  if (!root) return fail('no root element');
  let elements = 0;
  for (let child = doc.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === ELEMENT_NODE) elements++;
    else if (child.nodeType !== COMMENT_NODE && !(child.nodeType === TEXT_NODE && !child.nodeValue?.trim())) fail('content outside the root element');
  }
  if (elements !== 1) fail('more than one root element');
  checkTree(root);
  return doc;
}

/** Depth and ID uniqueness, walked without recursion. */
function checkTree(root: Element): void {
  const ids = new Set<string>();
  const stack: [Element, number][] = [[root, 1]];
  while (stack.length) {
    const [element, depth] = stack.pop()!;
    if (depth > MAX_XML_DEPTH) throw new SamlRefusal('too_deep', `the XML nests elements more than ${MAX_XML_DEPTH} deep`);
    for (const name of ID_ATTRIBUTES) {
      // Any namespace: xml-crypto matches reference targets by local name.
      for (let i = 0; i < element.attributes.length; i++) {
        const attr = element.attributes.item(i)!;
        if ((attr.localName ?? attr.name) !== name) continue;
        if (ids.has(attr.value)) throw new SamlRefusal('duplicate_id', 'two elements of the XML have the same ID');
        ids.add(attr.value);
      }
    }
    for (let child = element.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === ELEMENT_NODE) stack.push([child as Element, depth + 1]);
    }
  }
}

/** Whether `node` is an element named `local` in namespace `ns`. */
export function isElement(node: Node | null | undefined, ns: string, local: string): node is Element {
  return !!node && node.nodeType === ELEMENT_NODE && (node as Element).namespaceURI === ns && (node as Element).localName === local;
}

/** The element children of `parent`, in order. */
export function childElements(parent: Element): Element[] {
  const out: Element[] = [];
  for (let child = parent.firstChild; child; child = child.nextSibling) if (child.nodeType === ELEMENT_NODE) out.push(child as Element);
  return out;
}

/** The child elements of `parent` named `local` in `ns`. */
export function children(parent: Element, ns: string, local: string): Element[] {
  return childElements(parent).filter((child) => isElement(child, ns, local));
}

/** The one child named `local` in `ns`, undefined when there is none; two are refused. */
export function child(parent: Element, ns: string, local: string): Element | undefined {
  const found = children(parent, ns, local);
  if (found.length > 1) throw new SamlRefusal('unexpected_message', `the message has more than one ${local}`);
  return found[0];
}

/**
 * The text of an element that holds only text (and CDATA): an element child is refused. Comments
 * never reach here in protocol messages (the parser refuses them); in metadata they are skipped.
 */
export function textOf(element: Element): string {
  let text = '';
  for (let node = element.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === TEXT_NODE || node.nodeType === CDATA_SECTION_NODE) text += node.nodeValue ?? '';
    else if (node.nodeType === ELEMENT_NODE) throw new SamlRefusal('unexpected_message', `${element.localName} holds elements where text was expected`);
  }
  return text;
}

/** An attribute without namespace, or undefined. */
export function attr(element: Element, name: string): string | undefined {
  return element.hasAttribute(name) ? element.getAttribute(name)! : undefined;
}

/** An `xs:boolean` attribute (`true`, `1`, `false`, `0`), or `fallback` when absent; anything else is refused. */
export function booleanAttr(element: Element, name: string, fallback: boolean): boolean {
  const value = attr(element, name)?.trim();
  if (value === undefined) return fallback;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new SamlRefusal('unexpected_message', `${name} is not a boolean`);
}

/** Characters XML 1.0 cannot carry at all (controls, lone surrogates, U+FFFE/U+FFFF) as U+FFFD (our own messages: builder.ts). */
export const xmlCharacters = (value: string) =>
  value.replace(/[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
