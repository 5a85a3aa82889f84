/**
 * The messages the identity provider writes (SAML 2.0 Core §2 assertions, §3.2.2 Response, §3.7
 * logout; Metadata §2.4.3 IDPSSODescriptor), as text with every value escaped, signed afterwards
 * by signature.ts. AttributeValues carry no `xsi:type`: SAML does not require it, and a QName in
 * an attribute value is what exclusive c14n cannot see (its namespace would be dropped from the
 * signed form). Times are whole seconds, UTC.
 *
 * Every message, and the metadata, is written in its exclusive canonical form (Exclusive XML
 * Canonicalization 1.0: attributes in order, empty elements as start and end tags, c14n's
 * escapes, each namespace declared on the outermost element of its subtree that uses it, so
 * `saml` on a protocol message's Issuer, NameID and Assertion, not on its root, which uses only
 * `samlp`), which is what a signature digests: signature.ts signs our messages without parsing
 * them, known by their type, CanonicalXml (decisions 0434, 0435, 0436).
 * test/unit/saml-xml.test.ts checks that xml-crypto's canonicaliser gives back exactly this text,
 * for awkward values too.
 */
import { randomBytes } from 'node:crypto';
import { NS, xmlCharacters } from './xml.js';
import { BINDING_URNS, type Binding } from './bindings.js';
import { STATUS } from './messages.js';
import type { SamlNameIdFormat } from '../db/schema.js';

declare const canonicalXml: unique symbol;
/**
 * A message this builder wrote, in its exclusive canonical form: the root's start tag with its
 * own namespace declared first and its unqualified attributes in c14n's order (a plain `ID` among
 * them), the Issuer its first child, every `<` and `"` in values escaped, no `<x/>` tags. Only
 * the builder's message functions make one (and signature.ts's text way, whose Signature is
 * canonical too); signature.ts signs it from its text (signRoot, signResponse). A string brand:
 * nothing at run time, so a message is known for ours by its type, not by reading its text.
 */
export type CanonicalXml = string & { readonly [canonicalXml]: true };
/** The builder's text, known for canonical (the message functions' one cast). */
const canonical = (xml: string) => xml as CanonicalXml;

export const NAME_ID_FORMATS: Record<SamlNameIdFormat, string> = {
  persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  emailAddress: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  unspecified: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
  transient: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
};
export const nameIdFormatOfUrn = (urn: string): SamlNameIdFormat | undefined =>
  (Object.entries(NAME_ID_FORMATS) as [SamlNameIdFormat, string][]).find(([, u]) => u === urn)?.[0];

export const ATTRIBUTE_NAME_FORMATS = {
  basic: 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic',
  uri: 'urn:oasis:names:tc:SAML:2.0:attrname-format:uri',
} as const;

/** The authentication context classes we state (docs/saml.md "What the assertion says"). */
export const AUTHN_CONTEXT = {
  password: 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport',
  mfa: 'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract',
  refedsMfa: 'https://refeds.org/profile/mfa',
} as const;

/** A fresh xs:ID: `_` and 160 random bits in hex. */
export const newMessageId = () => `_${randomBytes(20).toString('hex')}`;

/** xs:dateTime in UTC, whole seconds. */
export const samlTime = (at: Date | number) => new Date(Math.floor(new Date(at).getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** Text as exclusive c14n writes it: `&`, `<`, `>` and CR escaped; what XML cannot carry is U+FFFD (xmlCharacters). */
const ct = (value: string) => xmlCharacters(value).replace(/[&<>\r]/g, (c) => C14N_TEXT[c]!);
/** An attribute value as exclusive c14n writes it: `&`, `<`, `"`, TAB, LF and CR escaped. */
const ca = (value: string) => xmlCharacters(value).replace(/[&<"\t\n\r]/g, (c) => C14N_ATTRIBUTE[c]!);
const C14N_TEXT: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#xD;' };
const C14N_ATTRIBUTE: Record<string, string> = { '&': '&amp;', '<': '&lt;', '"': '&quot;', '\t': '&#x9;', '\n': '&#xA;', '\r': '&#xD;' };
/** Unqualified attributes in c14n's order (by name, code point by code point), undefined ones left out. */
const cattrs = (pairs: Record<string, string | undefined>) =>
  Object.keys(pairs).filter((k) => pairs[k] !== undefined).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((k) => ` ${k}="${ca(pairs[k]!)}"`).join('');
/** An element with attributes and content, canonical (never `<x/>`). */
const cel = (name: string, pairs: Record<string, string | undefined>, content = '') => `<${name}${cattrs(pairs)}>${content}</${name}>`;
/** The same, declaring its prefix's namespace (`ns`): the outermost element of its subtree to use it; c14n puts the declaration first. */
const cns = (name: string, ns: string, pairs: Record<string, string | undefined>, content = '') =>
  `<${name} xmlns:${name.slice(0, name.indexOf(':'))}="${ns}"${cattrs(pairs)}>${content}</${name}>`;
/** A protocol message's Issuer: the first element under its `samlp` root to use `saml`. */
const protocolIssuer = (issuer: string) => cns('saml:Issuer', NS.assertion, {}, ct(issuer));
const canonicalStatus = (code: string, second?: string) =>
  cel('samlp:Status', {}, cel('samlp:StatusCode', { Value: code }, second ? cel('samlp:StatusCode', { Value: second }) : ''));

export interface AssertionInput {
  id: string;
  issuer: string;
  now: Date;
  nameId: { value: string; format: SamlNameIdFormat; spNameQualifier: string | undefined };
  recipient: string;
  inResponseTo: string | undefined;
  audience: string;
  authnInstant: Date;
  sessionIndex: string;
  sessionNotOnOrAfter: Date | undefined;
  authnContext: string;
  attributes: { name: string; nameFormat: string; friendlyName: string | undefined; values: string[] }[];
  /** The bearer confirmation's and the conditions' lifetime. */
  lifetimeMs: number;
  /** How far NotBefore is set back for SPs whose clock is a little behind. */
  notBeforeSkewMs: number;
}

export function assertionXml(a: AssertionInput): CanonicalXml {
  const notOnOrAfter = samlTime(a.now.getTime() + a.lifetimeMs);
  const attributes = a.attributes.filter((at) => at.values.length > 0);
  const nameId = { Format: NAME_ID_FORMATS[a.nameId.format], NameQualifier: a.nameId.spNameQualifier && a.issuer, SPNameQualifier: a.nameId.spNameQualifier };
  return canonical(cns('saml:Assertion', NS.assertion, { ID: a.id, IssueInstant: samlTime(a.now), Version: '2.0' },
    cel('saml:Issuer', {}, ct(a.issuer)) +
    cel('saml:Subject', {},
      cel('saml:NameID', nameId, ct(a.nameId.value)) +
      cel('saml:SubjectConfirmation', { Method: 'urn:oasis:names:tc:SAML:2.0:cm:bearer' },
        cel('saml:SubjectConfirmationData', { InResponseTo: a.inResponseTo, NotOnOrAfter: notOnOrAfter, Recipient: a.recipient }))) +
    cel('saml:Conditions', { NotBefore: samlTime(a.now.getTime() - a.notBeforeSkewMs), NotOnOrAfter: notOnOrAfter },
      cel('saml:AudienceRestriction', {}, cel('saml:Audience', {}, ct(a.audience)))) +
    cel('saml:AuthnStatement', {
      AuthnInstant: samlTime(a.authnInstant), SessionIndex: a.sessionIndex, SessionNotOnOrAfter: a.sessionNotOnOrAfter && samlTime(a.sessionNotOnOrAfter),
    }, cel('saml:AuthnContext', {}, cel('saml:AuthnContextClassRef', {}, ct(a.authnContext)))) +
    (attributes.length
      ? cel('saml:AttributeStatement', {}, attributes
        .map((at) => cel('saml:Attribute', { FriendlyName: at.friendlyName, Name: at.name, NameFormat: at.nameFormat },
          at.values.map((v) => cel('saml:AttributeValue', {}, ct(v))).join('')))
        .join(''))
      : '')));
}

export interface ResponseInput {
  id: string;
  issuer: string;
  now: Date;
  destination: string;
  inResponseTo: string | undefined;
  /** Success with the (signed, when asked) assertion, or an error status with none. */
  status: { code: string; second?: string | undefined };
  assertion: CanonicalXml | undefined;
}

export function responseXml(r: ResponseInput): CanonicalXml {
  return canonical(cns('samlp:Response', NS.protocol, {
    Destination: r.destination, ID: r.id, InResponseTo: r.inResponseTo, IssueInstant: samlTime(r.now), Version: '2.0',
  }, protocolIssuer(r.issuer) + canonicalStatus(r.status.code, r.status.second) + (r.assertion ?? '')));
}

export function logoutRequestXml(r: {
  id: string; issuer: string; now: Date; destination: string; notOnOrAfter: Date;
  nameId: { value: string; format: SamlNameIdFormat; spNameQualifier: string | undefined }; sessionIndex: string;
}): CanonicalXml {
  const nameId = { Format: NAME_ID_FORMATS[r.nameId.format], NameQualifier: r.nameId.spNameQualifier && r.issuer, SPNameQualifier: r.nameId.spNameQualifier };
  return canonical(cns('samlp:LogoutRequest', NS.protocol, {
    Destination: r.destination, ID: r.id, IssueInstant: samlTime(r.now), NotOnOrAfter: samlTime(r.notOnOrAfter),
    Reason: 'urn:oasis:names:tc:SAML:2.0:logout:user', Version: '2.0',
  }, protocolIssuer(r.issuer) + cns('saml:NameID', NS.assertion, nameId, ct(r.nameId.value)) + cel('samlp:SessionIndex', {}, ct(r.sessionIndex))));
}

export function logoutResponseXml(r: { id: string; issuer: string; now: Date; destination: string; inResponseTo: string; partial: boolean }): CanonicalXml {
  return canonical(cns('samlp:LogoutResponse', NS.protocol, {
    Destination: r.destination, ID: r.id, InResponseTo: r.inResponseTo, IssueInstant: samlTime(r.now), Version: '2.0',
  }, protocolIssuer(r.issuer) + canonicalStatus(STATUS.success, r.partial ? STATUS.partialLogout : undefined)));
}

/** The base64 body of a PEM certificate, for ds:X509Certificate. */
export const certificateBody = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');

/**
 * The IdP's metadata (Metadata §2.3.2, §2.4.3): its certificates, endpoints and NameID formats.
 * Not signed, but written the one way too (canonical: `ds` declared on each KeyInfo); a plain
 * string, not a CanonicalXml: a document with its XML declaration, not a message to sign.
 */
export function idpMetadataXml(m: {
  entityId: string;
  certificates: string[];
  ssoUrl: string;
  sloUrl: string;
  wantAuthnRequestsSigned: boolean;
  cacheDuration: string;
}): string {
  const bindings: Binding[] = ['HTTP-Redirect', 'HTTP-POST'];
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    cns('md:EntityDescriptor', NS.metadata, { cacheDuration: m.cacheDuration, entityID: m.entityId },
      cel('md:IDPSSODescriptor', { WantAuthnRequestsSigned: String(m.wantAuthnRequestsSigned), protocolSupportEnumeration: NS.protocol },
        m.certificates
          .map((pem) => cel('md:KeyDescriptor', { use: 'signing' }, cns('ds:KeyInfo', NS.dsig, {}, cel('ds:X509Data', {}, cel('ds:X509Certificate', {}, certificateBody(pem))))))
          .join('') +
        bindings.map((b) => cel('md:SingleLogoutService', { Binding: BINDING_URNS[b], Location: m.sloUrl })).join('') +
        Object.values(NAME_ID_FORMATS).map((f) => cel('md:NameIDFormat', {}, ct(f))).join('') +
        bindings.map((b) => cel('md:SingleSignOnService', { Binding: BINDING_URNS[b], Location: m.ssoUrl })).join(''))) +
    '\n'
  );
}
