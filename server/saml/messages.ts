/**
 * Reading the protocol messages an SP sends (SAML 2.0 Core §3.2.1 RequestAbstractType, §3.2.2
 * StatusResponseType, §3.4.1 AuthnRequest, §3.7.1 LogoutRequest, §3.7.3 LogoutResponse), from a
 * document xml.ts parsed. Only what the profiles use is read; the rules checked here are those
 * of the message itself (version 2.0, an ID, an IssueInstant within its lifetime, an Issuer);
 * who the Issuer is, the signature and the ACS are the SSO and SLO services' (sso.ts, slo.ts).
 * Times are UTC xs:dateTime (Core §1.3.3).
 */
import { SamlRefusal } from './refusal.js';
import { NS, attr, booleanAttr, child, children, isElement, textOf } from './xml.js';

/** How far in the past a message's IssueInstant may be, and in the future (clock skew). */
export const MESSAGE_LIFETIME_MS = 10 * 60_000;
export const CLOCK_SKEW_MS = 3 * 60_000;

const DATE_TIME = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?Z$/;
/** xs:ID is an NCName; we also bound its length. */
const XS_ID = /^[A-Za-z_][A-Za-z0-9._-]{0,255}$/;

export function parseDateTime(value: string | undefined, what: string): Date {
  const match = value === undefined ? null : DATE_TIME.exec(value.trim());
  const at = match ? new Date(value!.trim()) : undefined;
  if (!at || Number.isNaN(at.getTime())) throw new SamlRefusal('unexpected_message', `${what} is not a UTC date and time`);
  return at;
}

/** What every request from an SP has (RequestAbstractType). */
export interface RequestHeader {
  id: string;
  issueInstant: Date;
  destination: string | undefined;
  issuer: string;
}

function header(root: Element, now: Date): RequestHeader {
  if (attr(root, 'Version') !== '2.0') throw new SamlRefusal('unexpected_message', 'the message is not SAML 2.0');
  const id = attr(root, 'ID');
  if (id === undefined || !XS_ID.test(id)) throw new SamlRefusal('unexpected_message', 'the message has no valid ID');
  const issueInstant = parseDateTime(attr(root, 'IssueInstant'), 'IssueInstant');
  if (issueInstant.getTime() < now.getTime() - MESSAGE_LIFETIME_MS || issueInstant.getTime() > now.getTime() + CLOCK_SKEW_MS) {
    throw new SamlRefusal('expired', 'the message was issued too long ago or in the future');
  }
  const issuerElement = child(root, NS.assertion, 'Issuer');
  if (!issuerElement) throw new SamlRefusal('unexpected_message', 'the message has no Issuer');
  const format = attr(issuerElement, 'Format');
  if (format !== undefined && format !== 'urn:oasis:names:tc:SAML:2.0:nameid-format:entity') {
    throw new SamlRefusal('unexpected_message', 'the Issuer is not an entity ID');
  }
  const issuer = textOf(issuerElement).trim();
  if (!issuer) throw new SamlRefusal('unexpected_message', 'the Issuer is empty');
  return { id, issueInstant, destination: attr(root, 'Destination'), issuer };
}

/** The root element, which must be `local` in the protocol namespace. */
function rootOf(doc: Document, local: string): Element {
  const root = doc.documentElement;
  if (!isElement(root, NS.protocol, local)) throw new SamlRefusal('unexpected_message', `the message is not a ${local}`);
  return root;
}

export interface AuthnRequest extends RequestHeader {
  forceAuthn: boolean;
  isPassive: boolean;
  acsUrl: string | undefined;
  acsIndex: number | undefined;
  protocolBinding: string | undefined;
  nameIdFormat: string | undefined;
  /** RequestedAuthnContext's class references (empty when absent) and its comparison. */
  requestedContexts: string[];
  comparison: 'exact' | 'minimum' | 'maximum' | 'better';
}

export function readAuthnRequest(doc: Document, now: Date): AuthnRequest {
  const root = rootOf(doc, 'AuthnRequest');
  const head = header(root, now);
  const acsIndexRaw = attr(root, 'AssertionConsumerServiceIndex');
  let acsIndex: number | undefined;
  if (acsIndexRaw !== undefined) {
    if (!/^\d{1,5}$/.test(acsIndexRaw.trim()) || Number(acsIndexRaw) > 65535) throw new SamlRefusal('unexpected_message', 'AssertionConsumerServiceIndex is not an unsigned short');
    acsIndex = Number(acsIndexRaw);
  }
  const acsUrl = attr(root, 'AssertionConsumerServiceURL');
  if (acsUrl !== undefined && acsIndex !== undefined) {
    throw new SamlRefusal('unexpected_message', 'the request names both an ACS URL and an ACS index');
  }
  const policy = child(root, NS.protocol, 'NameIDPolicy');
  const requested = child(root, NS.protocol, 'RequestedAuthnContext');
  const comparison = (requested && attr(requested, 'Comparison')) ?? 'exact';
  if (!['exact', 'minimum', 'maximum', 'better'].includes(comparison)) throw new SamlRefusal('unexpected_message', 'RequestedAuthnContext has an unknown Comparison');
  return {
    ...head,
    forceAuthn: booleanAttr(root, 'ForceAuthn', false),
    isPassive: booleanAttr(root, 'IsPassive', false),
    acsUrl,
    acsIndex,
    protocolBinding: attr(root, 'ProtocolBinding'),
    nameIdFormat: policy ? attr(policy, 'Format') : undefined,
    requestedContexts: requested ? children(requested, NS.assertion, 'AuthnContextClassRef').map((e) => textOf(e).trim()) : [],
    comparison: comparison as AuthnRequest['comparison'],
  };
}

export interface LogoutRequest extends RequestHeader {
  nameId: string;
  sessionIndexes: string[];
}

export function readLogoutRequest(doc: Document, now: Date): LogoutRequest {
  const root = rootOf(doc, 'LogoutRequest');
  const head = header(root, now);
  const notOnOrAfter = attr(root, 'NotOnOrAfter');
  if (notOnOrAfter !== undefined && parseDateTime(notOnOrAfter, 'NotOnOrAfter').getTime() <= now.getTime() - CLOCK_SKEW_MS) {
    throw new SamlRefusal('expired', 'the logout request has expired');
  }
  const nameIdElement = child(root, NS.assertion, 'NameID');
  if (!nameIdElement) throw new SamlRefusal('unexpected_message', 'the logout request has no NameID');
  return {
    ...head,
    nameId: textOf(nameIdElement).trim(),
    sessionIndexes: children(root, NS.protocol, 'SessionIndex').map((e) => textOf(e).trim()),
  };
}

export interface LogoutResponse extends RequestHeader {
  inResponseTo: string | undefined;
  success: boolean;
}

export function readLogoutResponse(doc: Document, now: Date): LogoutResponse {
  const root = rootOf(doc, 'LogoutResponse');
  const head = header(root, now);
  const status = child(root, NS.protocol, 'Status');
  const code = status && child(status, NS.protocol, 'StatusCode');
  if (!code) throw new SamlRefusal('unexpected_message', 'the logout response has no StatusCode');
  return { ...head, inResponseTo: attr(root, 'InResponseTo'), success: attr(code, 'Value') === STATUS.success };
}

/** Which message a document is, to tell a LogoutRequest from a LogoutResponse at /saml/slo. */
export function messageKind(doc: Document): string | undefined {
  const root = doc.documentElement;
  return root && root.namespaceURI === NS.protocol ? root.localName ?? undefined : undefined;
}

export const STATUS = {
  success: 'urn:oasis:names:tc:SAML:2.0:status:Success',
  requester: 'urn:oasis:names:tc:SAML:2.0:status:Requester',
  responder: 'urn:oasis:names:tc:SAML:2.0:status:Responder',
  noPassive: 'urn:oasis:names:tc:SAML:2.0:status:NoPassive',
  requestDenied: 'urn:oasis:names:tc:SAML:2.0:status:RequestDenied',
  invalidNameIdPolicy: 'urn:oasis:names:tc:SAML:2.0:status:InvalidNameIDPolicy',
  noAuthnContext: 'urn:oasis:names:tc:SAML:2.0:status:NoAuthnContext',
  partialLogout: 'urn:oasis:names:tc:SAML:2.0:status:PartialLogout',
} as const;
