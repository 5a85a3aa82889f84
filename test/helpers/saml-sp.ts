/**
 * A SAML service provider's side for inject tests (the real SPs, mod_auth_mellon and pysaml2, are
 * in test/interop/saml-*.test.ts): AuthnRequests and LogoutRequests in either binding, signed with
 * the SP's own key when asked, and the IdP's auto-posting form read back into the Response XML.
 * The Response's signatures are checked here with xml-crypto against the IdP's certificate from
 * its metadata, the element read being the one each signature covers.
 */
import { createPrivateKey, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { DOMParser } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { newKeyMaterial } from '../../server/saml/keys.js';
import { signRootParsed } from '../../server/saml/signature.js';
import type { TestApp } from './app.js';

export const SP_ENTITY = 'https://sp.example.com/saml/metadata';
export const SP_ACS = 'https://sp.example.com/saml/acs';
export const SP_SLO = 'https://sp.example.com/saml/slo';
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
const RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1';

export interface SpKey {
  privateKey: KeyObject;
  certificatePem: string;
}

export async function spKey(name = 'sp.example.com'): Promise<SpKey> {
  const made = await newKeyMaterial(`https://${name}`, new Date());
  return { privateKey: createPrivateKey(made.privateKeyPem), certificatePem: made.certificatePem };
}

let counter = 0;
export const requestId = () => `_req${Date.now().toString(36)}${(++counter).toString(36)}`;

export interface AuthnOptions {
  id?: string;
  issuer?: string;
  issueInstant?: Date;
  acsUrl?: string | null;
  acsIndex?: number;
  destination?: string | null;
  forceAuthn?: boolean;
  isPassive?: boolean;
  nameIdFormat?: string;
  requestedContext?: { comparison?: string; classes: string[] };
  protocolBinding?: string;
  /** Extra XML inside the request, after the Issuer. */
  inner?: string;
}

export function authnRequestXml(t: TestApp, o: AuthnOptions = {}): string {
  const attrs: string[] = [
    `ID="${o.id ?? requestId()}"`, 'Version="2.0"', `IssueInstant="${(o.issueInstant ?? t.clock.now()).toISOString()}"`,
  ];
  const destination = o.destination === undefined ? `${t.config.issuer}/saml/sso` : o.destination;
  if (destination !== null) attrs.push(`Destination="${destination}"`);
  if (o.acsIndex !== undefined) attrs.push(`AssertionConsumerServiceIndex="${o.acsIndex}"`);
  else if (o.acsUrl !== null) attrs.push(`AssertionConsumerServiceURL="${o.acsUrl ?? SP_ACS}"`);
  if (o.forceAuthn) attrs.push('ForceAuthn="true"');
  if (o.isPassive) attrs.push('IsPassive="true"');
  if (o.protocolBinding) attrs.push(`ProtocolBinding="${o.protocolBinding}"`);
  const policy = o.nameIdFormat ? `<samlp:NameIDPolicy Format="${o.nameIdFormat}" AllowCreate="true"/>` : '';
  const context = o.requestedContext
    ? `<samlp:RequestedAuthnContext Comparison="${o.requestedContext.comparison ?? 'exact'}">${o.requestedContext.classes.map((c) => `<saml:AuthnContextClassRef>${c}</saml:AuthnContextClassRef>`).join('')}</samlp:RequestedAuthnContext>`
    : '';
  return `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ${attrs.join(' ')}><saml:Issuer>${o.issuer ?? SP_ENTITY}</saml:Issuer>${o.inner ?? ''}${policy}${context}</samlp:AuthnRequest>`;
}

/** `path?SAMLRequest=…&RelayState=…[&SigAlg&Signature]` (HTTP-Redirect), signed with `key` when given. */
export function redirectUrl(path: string, xml: string, options: { relayState?: string; key?: SpKey; sigAlg?: string; param?: string } = {}): string {
  const param = options.param ?? 'SAMLRequest';
  const parts = [`${param}=${encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString('base64'))}`];
  if (options.relayState !== undefined) parts.push(`RelayState=${encodeURIComponent(options.relayState)}`);
  if (options.key) {
    const sigAlg = options.sigAlg ?? RSA_SHA256;
    parts.push(`SigAlg=${encodeURIComponent(sigAlg)}`);
    const signature = cryptoSign(sigAlg === RSA_SHA1 ? 'sha1' : 'sha256', Buffer.from(parts.join('&')), options.key.privateKey).toString('base64');
    parts.push(`Signature=${encodeURIComponent(signature)}`);
  }
  return `${path}?${parts.join('&')}`;
}

/** The HTTP-POST binding's form body. */
export function postBody(xml: string, relayState?: string, param = 'SAMLRequest'): string {
  const fields: Record<string, string> = { [param]: Buffer.from(xml).toString('base64') };
  if (relayState !== undefined) fields.RelayState = relayState;
  return new URLSearchParams(fields).toString();
}

/** `xml` with an enveloped signature of the SP's key, placed after its Issuer. */
export const signedBySp = (xml: string, key: SpKey) => signRootParsed(xml, key);

export interface PostedForm {
  action: string;
  fields: Record<string, string>;
}

const unescape = (value: string) =>
  value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The auto-posting form of an IdP answer (200 text/html, no inline script, form-action allowing the target). */
export function postedForm(res: LightMyRequestResponse): PostedForm {
  expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.body).toContain('data-auto-submit');
  expect(res.body).not.toMatch(/<script>/);
  const action = unescape(/<form method="post" action="([^"]+)" data-auto-submit>/.exec(res.body)![1]!);
  const csp = String(res.headers['content-security-policy']);
  expect(csp).toContain(`form-action 'self' ${new URL(action).origin}`);
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  const fields: Record<string, string> = {};
  for (const match of res.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[unescape(match[1]!)] = unescape(match[2]!);
  return { action, fields };
}

/** The Response XML posted to the ACS. */
export function responseOf(res: LightMyRequestResponse): { xml: string; doc: Document; relayState: string | undefined; action: string } {
  const form = postedForm(res);
  const xml = Buffer.from(form.fields.SAMLResponse!, 'base64').toString('utf8');
  return { xml, doc: new DOMParser().parseFromString(xml, 'text/xml') as unknown as Document, relayState: form.fields.RelayState, action: form.action };
}

/** The IdP's published certificates (PEM), from its metadata. */
export async function idpCertificates(t: TestApp): Promise<string[]> {
  const res = await t.app.inject({ method: 'GET', url: '/saml/metadata' });
  expect(res.statusCode).toBe(200);
  return [...res.body.matchAll(/<ds:X509Certificate>([^<]+)<\/ds:X509Certificate>/g)].map((m) => `-----BEGIN CERTIFICATE-----\n${m[1]!.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`);
}

/** Verifies the enveloped signature on the element with `ID=id` in `xml` with one of `certificates`. */
export function verifySigned(xml: string, id: string, certificates: string[]): boolean {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  const signatures = Array.from(doc.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature')).filter((s) => {
    const ref = s.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Reference').item(0);
    return ref?.getAttribute('URI') === `#${id}`;
  });
  if (signatures.length !== 1) return false;
  for (const cert of certificates) {
    const verifier = new SignedXml({ publicCert: cert, getCertFromKeyInfo: () => null });
    verifier.loadSignature(signatures[0]!);
    try {
      if (verifier.checkSignature(xml)) return true;
    } catch {
      // another certificate
    }
  }
  return false;
}

/** The first element named `local` (any namespace) in `doc`. */
export function el(doc: Document | Element, local: string): Element {
  const found = (doc as Document).getElementsByTagNameNS('*', local).item(0);
  expect(found, local).toBeTruthy();
  return found!;
}

export const attributeValues = (doc: Document, name: string): string[] =>
  Array.from(doc.getElementsByTagNameNS('*', 'Attribute'))
    .filter((a) => a.getAttribute('Name') === name)
    .flatMap((a) => Array.from(a.getElementsByTagNameNS('*', 'AttributeValue')).map((v) => v.textContent ?? ''));

export const statusOf = (doc: Document): string[] => Array.from(doc.getElementsByTagNameNS('*', 'StatusCode')).map((s) => s.getAttribute('Value') ?? '');

/** A minimal valid `saml` application field. */
export function samlSettings(overrides: Record<string, unknown> = {}) {
  return { entityId: SP_ENTITY, acs: [{ url: SP_ACS, binding: 'HTTP-POST', index: 0 }], slo: { url: SP_SLO, binding: 'HTTP-Redirect' }, ...overrides };
}

/** The SP's metadata XML, as SP software publishes it. */
export function spMetadataXml(o: { entityId?: string; acs?: string[]; slo?: string; certificate?: string; authnRequestsSigned?: boolean } = {}): string {
  const cert = o.certificate ? `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${o.certificate.replace(/-----[A-Z ]+-----|\s/g, '')}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>` : '';
  return `<?xml version="1.0"?>
<!-- written by an SP -->
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${o.entityId ?? SP_ENTITY}">
  <md:SPSSODescriptor AuthnRequestsSigned="${o.authnRequestsSigned ?? false}" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    ${cert}
    <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${o.slo ?? SP_SLO}-post"/>
    <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${o.slo ?? SP_SLO}"/>
    <md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</md:NameIDFormat>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact" Location="https://sp.example.com/artifact" index="9"/>
    ${(o.acs ?? [SP_ACS]).map((url, i) => `<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${url}" index="${i + 1}"${i === 1 ? ' isDefault="true"' : ''}/>`).join('\n    ')}
  </md:SPSSODescriptor>
</md:EntityDescriptor>
`;
}

export { RSA_SHA1, RSA_SHA256 };
