/**
 * The messages the identity provider writes (SAML 2.0 Core §2 assertions, §3.2.2 Response, §3.7
 * logout; Metadata §2.4.3 IDPSSODescriptor), as text with every value escaped, signed afterwards
 * by signature.ts. AttributeValues carry no `xsi:type`: SAML does not require it, and a QName in
 * an attribute value is what exclusive c14n cannot see (its namespace would be dropped from the
 * signed form). Times are whole seconds, UTC.
 *
 * The Response and its Assertion are written in their exclusive canonical form (Exclusive XML
 * Canonicalization 1.0: attributes in order, empty elements as start and end tags, c14n's
 * escapes, each namespace declared on the outermost element of its subtree that uses it, so
 * `saml` on the Response's Issuer and on the Assertion), which is what their signatures digest:
 * signature.ts signs them without parsing them (decision 0434). test/unit/saml-xml.test.ts checks
 * that xml-crypto's canonicaliser gives back exactly this text, for awkward values too.
 */
import { randomBytes } from 'node:crypto';
import { escapeXml as x, NS, xmlCharacters } from './xml.js';
import { BINDING_URNS, type Binding } from './bindings.js';
import { STATUS } from './messages.js';
import type { SamlNameIdFormat } from '../db/schema.js';

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

const issuerXml = (issuer: string) => `<saml:Issuer>${x(issuer)}</saml:Issuer>`;
const statusXml = (code: string, second?: string) =>
  `<samlp:Status><samlp:StatusCode Value="${x(code)}">${second ? `<samlp:StatusCode Value="${x(second)}"/>` : ''}</samlp:StatusCode></samlp:Status>`;
const attrs = (pairs: Record<string, string | undefined>) =>
  Object.entries(pairs).filter((p): p is [string, string] => p[1] !== undefined).map(([k, v]) => ` ${k}="${x(v)}"`).join('');

/** Text as exclusive c14n writes it: `&`, `<`, `>` and CR escaped; what XML cannot carry is U+FFFD (as escapeXml). */
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

export function assertionXml(a: AssertionInput): string {
  const notOnOrAfter = samlTime(a.now.getTime() + a.lifetimeMs);
  const attributes = a.attributes.filter((at) => at.values.length > 0);
  const nameId = { Format: NAME_ID_FORMATS[a.nameId.format], NameQualifier: a.nameId.spNameQualifier && a.issuer, SPNameQualifier: a.nameId.spNameQualifier };
  return (
    `<saml:Assertion xmlns:saml="${NS.assertion}"${cattrs({ ID: a.id, IssueInstant: samlTime(a.now), Version: '2.0' })}>` +
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
      : '') +
    '</saml:Assertion>'
  );
}

export interface ResponseInput {
  id: string;
  issuer: string;
  now: Date;
  destination: string;
  inResponseTo: string | undefined;
  /** Success with the (signed, when asked) assertion, or an error status with none. */
  status: { code: string; second?: string | undefined };
  assertion: string | undefined;
}

export function responseXml(r: ResponseInput): string {
  return (
    `<samlp:Response xmlns:samlp="${NS.protocol}"${cattrs({
      Destination: r.destination, ID: r.id, InResponseTo: r.inResponseTo, IssueInstant: samlTime(r.now), Version: '2.0',
    })}>` +
    `<saml:Issuer xmlns:saml="${NS.assertion}">${ct(r.issuer)}</saml:Issuer>` +
    canonicalStatus(r.status.code, r.status.second) +
    (r.assertion ?? '') +
    '</samlp:Response>'
  );
}

export function logoutRequestXml(r: {
  id: string; issuer: string; now: Date; destination: string; notOnOrAfter: Date;
  nameId: { value: string; format: SamlNameIdFormat; spNameQualifier: string | undefined }; sessionIndex: string;
}): string {
  return (
    `<samlp:LogoutRequest xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}"${attrs({
      ID: r.id, Version: '2.0', IssueInstant: samlTime(r.now), Destination: r.destination, NotOnOrAfter: samlTime(r.notOnOrAfter),
      Reason: 'urn:oasis:names:tc:SAML:2.0:logout:user',
    })}>` +
    issuerXml(r.issuer) +
    `<saml:NameID${attrs({ Format: NAME_ID_FORMATS[r.nameId.format], NameQualifier: r.nameId.spNameQualifier && r.issuer, SPNameQualifier: r.nameId.spNameQualifier })}>${x(r.nameId.value)}</saml:NameID>` +
    `<samlp:SessionIndex>${x(r.sessionIndex)}</samlp:SessionIndex>` +
    '</samlp:LogoutRequest>'
  );
}

export function logoutResponseXml(r: { id: string; issuer: string; now: Date; destination: string; inResponseTo: string; partial: boolean }): string {
  return (
    `<samlp:LogoutResponse xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}"${attrs({
      ID: r.id, Version: '2.0', IssueInstant: samlTime(r.now), Destination: r.destination, InResponseTo: r.inResponseTo,
    })}>` +
    issuerXml(r.issuer) +
    statusXml(STATUS.success, r.partial ? STATUS.partialLogout : undefined) +
    '</samlp:LogoutResponse>'
  );
}

/** The base64 body of a PEM certificate, for ds:X509Certificate. */
export const certificateBody = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');

/** The IdP's metadata (Metadata §2.3.2, §2.4.3): its certificates, endpoints and NameID formats. */
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
    `<md:EntityDescriptor xmlns:md="${NS.metadata}" xmlns:ds="${NS.dsig}"${attrs({ entityID: m.entityId, cacheDuration: m.cacheDuration })}>` +
    `<md:IDPSSODescriptor${attrs({ WantAuthnRequestsSigned: String(m.wantAuthnRequestsSigned), protocolSupportEnumeration: NS.protocol })}>` +
    m.certificates
      .map((pem) => `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certificateBody(pem)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`)
      .join('') +
    bindings.map((b) => `<md:SingleLogoutService${attrs({ Binding: BINDING_URNS[b], Location: m.sloUrl })}/>`).join('') +
    Object.values(NAME_ID_FORMATS).map((f) => `<md:NameIDFormat>${x(f)}</md:NameIDFormat>`).join('') +
    bindings.map((b) => `<md:SingleSignOnService${attrs({ Binding: BINDING_URNS[b], Location: m.ssoUrl })}/>`).join('') +
    '</md:IDPSSODescriptor>' +
    '</md:EntityDescriptor>\n'
  );
}
