/**
 * XML signatures of SAML messages (SAML 2.0 Core §5, XML Signature 1.1, Exclusive XML
 * Canonicalization 1.0; Bindings §3.4.4.1 for the Redirect binding's query signature), done by
 * xml-crypto on @xmldom/xmldom (docs/decisions/0430-saml-xml-signatures.md).
 *
 * Signing (ours): RSA-SHA256 over SignedInfo, exclusive c14n, one Reference to the signed
 * element's ID with the enveloped-signature and exclusive-c14n transforms, a SHA-256 digest, and
 * the certificate in KeyInfo; the Signature goes right after the element's Issuer (Core §5.4.2).
 * SHA-1 is never used.
 *
 * Verifying (an SP's enveloped signature on the message root), against signature wrapping:
 * 1. exactly one ds:Signature in the whole message, a child of the root;
 * 2. its SignedInfo uses exclusive c14n, RSA-SHA256 or RSA-SHA512, one Reference whose URI is
 *    `#` + the root's `ID`, transforms only enveloped-signature and exclusive c14n, a SHA-256 or
 *    SHA-512 digest; a SHA-1 algorithm anywhere is refused as such (`sha1_refused`);
 * 3. xml-crypto checks digest and signature with the SP's certificates only: KeyInfo is never
 *    trusted to name the key (`getCertFromKeyInfo` answers nothing);
 * 4. the canonical XML xml-crypto verified (`getSignedReferences`) must equal the canonical form
 *    of the root element this code reads: the element verified is exactly the element read.
 * xml-crypto reads the same text with the same parser (@xmldom/xmldom), after xml.ts has
 * screened it, so there is no parser differential between what is verified and what is read.
 */
import { createHash, createPublicKey, createVerify, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { ExclusiveCanonicalization, SignedXml } from 'xml-crypto';
import type { CanonicalXml } from './builder.js';
import { SamlRefusal } from './refusal.js';
import { NS, attr, child, children, isElement } from './xml.js';

export const ALG = {
  rsaSha256: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  rsaSha512: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  sha512: 'http://www.w3.org/2001/04/xmlenc#sha512',
  excC14n: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  enveloped: 'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
} as const;

/** Signature algorithms accepted from an SP, with the hash each uses (Node's name). */
const ACCEPTED_SIGNATURES: Record<string, string> = { [ALG.rsaSha256]: 'sha256', [ALG.rsaSha512]: 'sha512' };
const ACCEPTED_DIGESTS = new Set<string>([ALG.sha256, ALG.sha512]);
const ACCEPTED_TRANSFORMS = new Set<string>([ALG.enveloped, ALG.excC14n]);
const SHA1 = /sha1\b|#(rsa|dsa|hmac)-sha1$/i;

/** The key that signs our messages: its private key and its certificate (PEM). */
export interface SigningMaterial {
  privateKey: KeyObject;
  certificatePem: string;
}

const keyInfos = new Map<string, string>();
/** `<X509Data><X509Certificate>…` of a PEM certificate (unprefixed; the signer adds `ds:`). */
function keyInfoOf(pem: string): string {
  let found = keyInfos.get(pem);
  if (!found) {
    found = `<X509Data><X509Certificate>${pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '')}</X509Certificate></X509Data>`;
    if (keyInfos.size > 16) keyInfos.clear();
    keyInfos.set(pem, found);
  }
  return found;
}

/** Our messages put the Issuer first (builder.ts), where the Signature follows it (Core §5.4.2). */
const ISSUER_CHILD = '/*/*[1]';

/**
 * RSA-SHA256 for xml-crypto's signer, run on libuv's thread pool (node:crypto `sign` with a
 * callback), so the event loop only does the XML work while the RSA operation runs beside it.
 */
class ThreadPoolRsaSha256 {
  getSignature(signedInfo: string, privateKey: KeyObject, callback?: (error: Error | null, signature?: string) => void): string {
    if (!callback) return cryptoSign('sha256', Buffer.from(signedInfo), privateKey).toString('base64');
    cryptoSign('sha256', Buffer.from(signedInfo), privateKey, (error, signature) => (error ? callback(error) : callback(null, signature.toString('base64'))));
    return '';
  }
  verifySignature(): boolean {
    throw new Error('signing only');
  }
  getAlgorithmName(): string {
    return ALG.rsaSha256;
  }
}

/**
 * Signs the root element of a message our builder wrote (a CanonicalXml) with an enveloped
 * signature placed after the Issuer; resolves to the signed message, canonical still.
 *
 * Signed from the text, without a parse (decisions 0434, 0435, 0436): the text is the root's
 * canonical form, so the digest is the SHA-256 of the text; the SignedInfo's canonical form is
 * filled in from xml-crypto's rendering of a template (signedInfoOf), RSA-SHA256 runs on libuv's
 * pool, and the Signature, written in canonical form too, goes right after the Issuer's end tag.
 * Any other text (an SP's message, in tests) is signed by signRootParsed, explicitly. The ways
 * make the same signatures (test/unit/saml-xml.test.ts).
 */
export async function signRoot(xml: CanonicalXml, key: SigningMaterial): Promise<CanonicalXml> {
  const { id, signatureAt } = signedPlace(xml);
  const signature = await canonicalSignature(id, xml, key);
  return (xml.slice(0, signatureAt) + signature + xml.slice(signatureAt)) as CanonicalXml;
}

/**
 * Signs the root of any other text (an SP's message, in tests): parsed once and the root
 * canonicalised by xml-crypto (decision 0432; the Signature after the Issuer's end tag), or,
 * without a plain ID or an Issuer first, through SignedXml.
 */
export async function signRootParsed(xml: string, key: SigningMaterial): Promise<string> {
  const root = parseOwn(xml).documentElement;
  const at = root && ownTarget(xml, root);
  if (!at) return signWithSignedXml(xml, key);
  return xml.slice(0, at) + (await signatureOf(root, key)) + xml.slice(at);
}

/**
 * Signs a Response of our builder's and the Assertion in it, as `which` says: the Assertion alone
 * (signRoot), then the Response around the signed Assertion (signRoot). Exclusive c14n renders
 * the Assertion the same inside its Response and alone, as it declares every namespace it uses
 * (builder.ts), so both are signed from the text.
 */
export async function signResponse(xml: CanonicalXml, key: SigningMaterial, which: { assertion: boolean; response: boolean }): Promise<CanonicalXml> {
  const at = which.assertion ? assertionSpan(xml) : undefined;
  const signed = at ? ((xml.slice(0, at.from) + (await signRoot(xml.slice(at.from, at.to) as CanonicalXml, key)) + xml.slice(at.to)) as CanonicalXml) : xml;
  return which.response ? signRoot(signed, key) : signed;
}

/**
 * Where the Assertion of our Response is in its text; undefined when there is none. The builder
 * escapes every `<` in values, so its start tag and its end tag are the only ones.
 */
function assertionSpan(xml: CanonicalXml): { from: number; to: number } | undefined {
  const from = startTagIndex(xml, 'saml:Assertion');
  const close = '</saml:Assertion>';
  const to = from < 0 ? -1 : xml.indexOf(close, from);
  return to < 0 ? undefined : { from, to: to + close.length };
}

const ISSUER_END = '</saml:Issuer>';

/**
 * The ID of a message our builder wrote and where its Signature goes (after its Issuer's end
 * tag), read from the text in the shape the builder writes (CanonicalXml): the root's attributes
 * one by one (every `"` in a value is escaped), and the first Issuer end tag (every `<` in a value
 * is escaped, and the Issuer is the root's first child). Throws on what the builder never writes
 * (an ID that is not plain, a message already signed): a mistake in our code, not a message.
 */
function signedPlace(xml: CanonicalXml): { id: string; signatureAt: number } {
  const attribute = / ([\w:]+)="([^"]*)"/y;
  attribute.lastIndex = xml.indexOf(' ');
  let id: string | undefined;
  for (let found = attribute.exec(xml); found; found = attribute.exec(xml)) if (found[1] === 'ID') id = found[2];
  const issuerEnd = xml.indexOf(ISSUER_END);
  const signatureAt = issuerEnd + ISSUER_END.length;
  if (!id || !PLAIN_ID.test(id) || issuerEnd < 0 || xml.startsWith('<ds:Signature', signatureAt)) {
    throw new Error('signRoot takes an unsigned message of builder.ts with a plain ID');
  }
  return { id, signatureAt };
}

/** The Signature over `canonical` (an element's canonical text), in its canonical form inside that element. */
async function canonicalSignature(id: string, canonical: string, key: SigningMaterial): Promise<string> {
  const { signedInfo, value } = await signedInfoSigned(id, canonical, key);
  return signatureText(expandEmpty(signedInfo.written), value, key.certificatePem);
}

/** `<x a="…"/>` as canonical XML writes it, `<x a="…"></x>` (the SignedInfo's values are URIs without `>`). */
const expandEmpty = (written: string) => written.replace(/<([\w:]+)([^<>]*)\/>/g, '<$1$2></$1>');

/**
 * Parses one of our own messages (never an SP's: those go through xml.ts). Options without a
 * `locator`: @xmldom/xmldom's default one records each node's line and column, which nothing here
 * reads (about 15 % of the parse).
 */
const parseOwn = (xml: string): Document => new DOMParser({}).parseFromString(xml, 'text/xml') as unknown as Document;

function firstElement(parent: Element): Element | undefined {
  let first = parent.firstChild;
  while (first && first.nodeType !== first.ELEMENT_NODE) first = first.nextSibling;
  return (first as Element | null) ?? undefined;
}

/**
 * Where in `xml` the first start tag named `tagName` begins (-1: none). Our messages escape every
 * `<` in text and attribute values, so a `<name` followed by a space or `>` is a start tag.
 */
function startTagIndex(xml: string, tagName: string): number {
  for (let at = xml.indexOf(`<${tagName}`); at >= 0; at = xml.indexOf(`<${tagName}`, at + 1)) {
    const next = xml[at + tagName.length + 1];
    if (next === ' ' || next === '>' || next === '/') return at;
  }
  return -1;
}

/** IDs our builder makes (builder.ts newMessageId), and any other that needs no escaping in an attribute. */
const PLAIN_ID = /^[A-Za-z_][A-Za-z0-9_.-]{0,255}$/;

/**
 * For the parsing way: where the Signature of the root goes in the text, right after its Issuer's
 * end tag; undefined when that way does not apply (no plain ID, no Issuer first, a signature
 * already there).
 */
function ownTarget(xml: string, root: Element): number | undefined {
  const id = root.getAttribute('ID');
  if (!id || !PLAIN_ID.test(id)) return undefined;
  for (let node = root.firstChild; node; node = node.nextSibling) if (isElement(node, NS.dsig, 'Signature')) return undefined;
  const first = firstElement(root);
  if (!isElement(first, NS.assertion, 'Issuer')) return undefined;
  // The Issuer holds only text (escaped), so its end tag's first occurrence is its own.
  const close = `</${first.tagName}>`;
  const at = xml.indexOf(close);
  return at < 0 ? undefined : at + close.length;
}

/** The `ds:Signature` of `element` (its ID plain, checked by ownTarget), as xml-crypto's SignedXml writes it. */
async function signatureOf(element: Element, key: SigningMaterial): Promise<string> {
  const canonical = new ExclusiveCanonicalization().process(element as never, { defaultNsForPrefix: { ds: NS.dsig } } as never).toString();
  const { signedInfo, value } = await signedInfoSigned(element.getAttribute('ID')!, canonical, key);
  return signatureText(signedInfo.written, value, key.certificatePem);
}

/** The SignedInfo over `#id` with the digest of `canonical`, and its RSA-SHA256 value (on libuv's pool). */
async function signedInfoSigned(id: string, canonical: string, key: SigningMaterial) {
  const digest = createHash('sha256').update(canonical).digest('base64');
  const signedInfo = signedInfoOf(id, digest);
  const value = await new Promise<string>((resolve, reject) =>
    cryptoSign('sha256', Buffer.from(signedInfo.canonical), key.privateKey, (error, signature) => (error ? reject(error) : resolve(signature.toString('base64')))));
  return { signedInfo, value };
}

function signatureText(signedInfo: string, value: string, certificatePem: string): string {
  const keyInfo = keyInfoOf(certificatePem).replace(/<(\/?)X509/g, '<$1ds:X509');
  return `<ds:Signature xmlns:ds="${NS.dsig}">${signedInfo}<ds:SignatureValue>${value}</ds:SignatureValue><ds:KeyInfo>${keyInfo}</ds:KeyInfo></ds:Signature>`;
}

const writtenSignedInfo = (id: string, digest: string) =>
  `<ds:SignedInfo><ds:CanonicalizationMethod Algorithm="${ALG.excC14n}"/><ds:SignatureMethod Algorithm="${ALG.rsaSha256}"/>` +
  `<ds:Reference URI="#${id}"><ds:Transforms><ds:Transform Algorithm="${ALG.enveloped}"/><ds:Transform Algorithm="${ALG.excC14n}"/></ds:Transforms>` +
  `<ds:DigestMethod Algorithm="${ALG.sha256}"/><ds:DigestValue>${digest}</ds:DigestValue></ds:Reference></ds:SignedInfo>`;

/** The canonical form of a SignedInfo as xml-crypto's canonicaliser renders it inside its Signature. */
export function canonicalSignedInfo(written: string): string {
  const inSignature = new DOMParser().parseFromString(`<ds:Signature xmlns:ds="${NS.dsig}">${written}</ds:Signature>`, 'text/xml').documentElement!.firstChild!;
  return new ExclusiveCanonicalization().process(inSignature as never, {} as never).toString();
}

/** Stand-ins for the ID and the digest in the SignedInfo template: characters c14n leaves as they are. */
const ID_MARK = '_gatehouseReferenceId';
const DIGEST_MARK = 'gatehouseDigestValue';
let template: { before: string; between: string; after: string } | undefined;

/**
 * The SignedInfo of an enveloped RSA-SHA256 signature over `#id`: as written into the message
 * (the form xml-crypto writes) and its exclusive canonical form inside its Signature, which is
 * what is signed. The canonical form is xml-crypto's, made once from a template with stand-ins for
 * the ID and the digest and filled in: a plain ID (PLAIN_ID) and a base64 digest hold no character
 * canonicalisation escapes, so they stand in it as written (test/unit/saml-xml.test.ts compares).
 */
export function signedInfoOf(id: string, digest: string): { written: string; canonical: string } {
  if (!template) {
    const canonical = canonicalSignedInfo(writtenSignedInfo(ID_MARK, DIGEST_MARK));
    const [before, rest, extra] = canonical.split(ID_MARK);
    const [between, after, extra2] = (rest ?? '').split(DIGEST_MARK);
    if (extra !== undefined || extra2 !== undefined || after === undefined) throw new Error('the SignedInfo template does not canonicalise as expected');
    template = { before: before!, between: between!, after };
  }
  return { written: writtenSignedInfo(id, digest), canonical: template.before + id + template.between + digest + template.after };
}

/** The general way, through xml-crypto's SignedXml. */
function signWithSignedXml(xml: string, key: SigningMaterial): Promise<string> {
  const keyInfo = keyInfoOf(key.certificatePem);
  const signer = new SignedXml({
    privateKey: key.privateKey,
    // KeyInfo written from the PEM once per certificate (xml-crypto would parse it on every signature).
    getKeyInfoContent: ({ prefix } = {}) => (prefix ? keyInfo.replace(/<(\/?)X509/g, `<$1${prefix}:X509`) : keyInfo),
    signatureAlgorithm: ALG.rsaSha256,
    canonicalizationAlgorithm: ALG.excC14n,
  });
  signer.SignatureAlgorithms = { [ALG.rsaSha256]: ThreadPoolRsaSha256 as never };
  signer.addReference({ xpath: '/*', transforms: [ALG.enveloped, ALG.excC14n], digestAlgorithm: ALG.sha256 });
  return new Promise((resolve, reject) => {
    signer.computeSignature(xml, { prefix: 'ds', location: { reference: ISSUER_CHILD, action: 'after' } }, (error) =>
      error ? reject(error) : resolve(signer.getSignedXml()));
  });
}

/** For tests: the general way, to compare the short way with. */
export const signRootWithSignedXml = signWithSignedXml;

/** The Redirect binding's signature of our own query (`SigAlg` already in `octets`): base64. */
export function signQuery(octets: string, key: SigningMaterial): string {
  return cryptoSign('sha256', Buffer.from(octets), key.privateKey).toString('base64');
}

/** The public keys of an SP's certificates (PEM); an unreadable one is left out (settings check them when saved). */
export function certificateKeys(pems: readonly string[]): KeyObject[] {
  const keys: KeyObject[] = [];
  for (const pem of pems) {
    try {
      keys.push(createPublicKey(pem));
    } catch {
      // Checked when the application was saved; a certificate that no longer reads verifies nothing.
    }
  }
  return keys;
}

/** Refuses a SHA-1 algorithm as such, anything else not accepted as a bad signature. */
function requireAlgorithm(uri: string | undefined, accepted: (uri: string) => boolean, what: string): string {
  if (uri === undefined) throw new SamlRefusal('bad_signature', `the signature has no ${what}`);
  if (SHA1.test(uri)) throw new SamlRefusal('sha1_refused', `the signature uses SHA-1 (${what} ${uri})`);
  if (!accepted(uri)) throw new SamlRefusal('bad_signature', `the signature's ${what} ${uri} is not accepted`);
  return uri;
}

/** The SigAlg of a Redirect-binding signature, checked (a SHA-1 one refused as such). */
export function checkSigAlg(sigAlg: string): string {
  return ACCEPTED_SIGNATURES[requireAlgorithm(sigAlg, (u) => u in ACCEPTED_SIGNATURES, 'SigAlg')]!;
}

/** Verifies a Redirect-binding query signature with any of `keys`. */
export function verifyQuerySignature(signed: { octets: string; sigAlg: string; signature: Buffer }, keys: KeyObject[]): void {
  const hash = checkSigAlg(signed.sigAlg);
  if (!keys.length) throw new SamlRefusal('bad_signature', 'the SP has no certificate to verify its signature with');
  for (const key of keys) {
    const verifier = createVerify(hash);
    verifier.update(signed.octets);
    if (verifier.verify(key, signed.signature)) return;
  }
  throw new SamlRefusal('bad_signature', 'the query signature does not verify with the SP\'s certificates');
}

/** The one ds:Signature of the message (a child of the root), undefined when unsigned. */
export function envelopedSignature(doc: Document): Element | undefined {
  const all = doc.getElementsByTagNameNS(NS.dsig, 'Signature');
  if (all.length === 0) return undefined;
  const signature = all.item(0)!;
  if (all.length > 1 || signature.parentNode !== doc.documentElement) {
    throw new SamlRefusal('bad_signature', 'the message has a signature that is not the one enveloped signature of its root');
  }
  return signature;
}

/** Checks SignedInfo's shape (step 2 of the header) before any cryptography. */
function checkSignedInfo(signature: Element, rootId: string): void {
  const signedInfo = child(signature, NS.dsig, 'SignedInfo');
  if (!signedInfo) throw new SamlRefusal('bad_signature', 'the signature has no SignedInfo');
  const c14n = child(signedInfo, NS.dsig, 'CanonicalizationMethod');
  requireAlgorithm(c14n && attr(c14n, 'Algorithm'), (u) => u === ALG.excC14n, 'CanonicalizationMethod');
  const method = child(signedInfo, NS.dsig, 'SignatureMethod');
  requireAlgorithm(method && attr(method, 'Algorithm'), (u) => u in ACCEPTED_SIGNATURES, 'SignatureMethod');
  const references = children(signedInfo, NS.dsig, 'Reference');
  if (references.length !== 1) throw new SamlRefusal('bad_signature', 'the signature must have exactly one Reference');
  const reference = references[0]!;
  if (attr(reference, 'URI') !== `#${rootId}`) throw new SamlRefusal('bad_signature', 'the signature does not refer to the message it is in');
  const transforms = child(reference, NS.dsig, 'Transforms');
  for (const transform of transforms ? children(transforms, NS.dsig, 'Transform') : []) {
    requireAlgorithm(attr(transform, 'Algorithm'), (u) => ACCEPTED_TRANSFORMS.has(u), 'Transform');
  }
  const digest = child(reference, NS.dsig, 'DigestMethod');
  requireAlgorithm(digest && attr(digest, 'Algorithm'), (u) => ACCEPTED_DIGESTS.has(u), 'DigestMethod');
}

/** The root element as the signature's transforms see it: without its Signature, exclusive c14n. */
function canonicalRoot(root: Element, signature: Element): string {
  const copy = root.cloneNode(true) as Element;
  for (const node of Array.from(copy.childNodes)) if (isElement(node, NS.dsig, 'Signature')) copy.removeChild(node);
  void signature;
  return new ExclusiveCanonicalization().process(copy, {}).toString();
}

/**
 * Verifies the enveloped signature of `doc`'s root with one of the SP's certificates (`certificatePems`).
 * `xml` is the text `doc` was parsed from. Throws `SamlRefusal` unless it verifies.
 */
export function verifyEnveloped(xml: string, doc: Document, signature: Element, certificatePems: readonly string[]): void {
  const root = doc.documentElement!;
  const rootId = attr(root, 'ID');
  if (!rootId) throw new SamlRefusal('unexpected_message', 'the message has no ID');
  checkSignedInfo(signature, rootId);
  if (!certificatePems.length) throw new SamlRefusal('bad_signature', 'the SP has no certificate to verify its signature with');
  for (const certificate of certificatePems) {
    const verifier = new SignedXml({ publicCert: certificate, getCertFromKeyInfo: () => null });
    try {
      verifier.loadSignature(signature);
    } catch {
      // xml-crypto throws plain Errors for a Signature it cannot read (a Reference without its DigestValue, …).
      throw new SamlRefusal('bad_signature', 'the signature cannot be read');
    }
    let valid = false;
    try {
      valid = verifier.checkSignature(xml);
    } catch {
      valid = false;
    }
    if (!valid) continue;
    const signed = verifier.getSignedReferences();
    if (signed.length !== 1 || signed[0] !== canonicalRoot(root, signature)) {
      throw new SamlRefusal('bad_signature', 'the signed element is not the message that was read');
    }
    return;
  }
  throw new SamlRefusal('bad_signature', 'the signature does not verify with the SP\'s certificates');
}
