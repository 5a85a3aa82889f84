/**
 * An SP's metadata, imported (spec saml.md, "Per application": `POST
 * /api/admin/applications/:id/saml/metadata`; SAML 2.0 Metadata §2.3.2 EntityDescriptor, §2.4.4
 * SPSSODescriptor): its `entityID`, its AssertionConsumerServices of the HTTP-POST binding (the
 * one marked `isDefault`, else the first, becomes the default), its SingleLogoutService
 * (HTTP-Redirect preferred, else HTTP-POST) and the certificates of its signing KeyDescriptors.
 * Read by the same guarded parser as the protocol messages (xml.ts; comments allowed), its URLs by
 * the redirect-URI rules. Anything wrong is a field error on `body.xml` (or `body.url`) saying
 * what. Given as a URL, it is fetched once, with the webhook rules for addresses (no link-local,
 * loopback only when allowed, never this server), no redirects, 10 s, at most 256 KiB.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { FieldError } from '../http/problem.js';
import { guardedLookup, literalTargetProblem, type TargetPolicy } from '../webhooks/target-address.js';
import { BINDING_URNS, bindingOfUrn } from './bindings.js';
import { SamlRefusal } from './refusal.js';
import { certificatePem, checkEndpoints, type SamlInput } from './settings.js';
import { MAX_XML_BYTES, NS, attr, booleanAttr, childElements, children, isElement, parseXml, textOf } from './xml.js';

export type ImportedMetadata = Pick<SamlInput, 'entityId' | 'acs' | 'slo'> & { spCertificates: string[] };

const FETCH_TIMEOUT_MS = 10_000;

/** The SP's settings from its metadata, or the errors (under `path`) saying what is wrong. */
export function readSpMetadata(xml: string, path: string, errors: FieldError[]): ImportedMetadata | undefined {
  const wrong = (message: string) => {
    errors.push({ path, message });
    return undefined;
  };
  let doc: Document;
  try {
    doc = parseXml(xml, { comments: true });
  } catch (error) {
    return wrong(`is not readable metadata: ${error instanceof SamlRefusal ? error.detail : 'unreadable XML'}`);
  }
  let entity: Element = doc.documentElement!;
  if (isElement(entity, NS.metadata, 'EntitiesDescriptor')) {
    const inside = children(entity, NS.metadata, 'EntityDescriptor');
    if (inside.length !== 1) return wrong(`holds ${inside.length} entities; give the metadata of the one service provider`);
    entity = inside[0]!;
  }
  if (!isElement(entity, NS.metadata, 'EntityDescriptor')) return wrong('is not SAML 2.0 metadata (no md:EntityDescriptor)');
  const entityId = attr(entity, 'entityID')?.trim();
  if (!entityId || entityId.length > 1024) return wrong('has no entityID (or one longer than 1,024 characters)');
  const sp = children(entity, NS.metadata, 'SPSSODescriptor').find((d) => (attr(d, 'protocolSupportEnumeration') ?? '').split(/\s+/).includes(NS.protocol));
  if (!sp) return wrong('describes no SAML 2.0 service provider (no SPSSODescriptor for the SAML 2.0 protocol)');

  const services = children(sp, NS.metadata, 'AssertionConsumerService').filter((s) => attr(s, 'Binding') === BINDING_URNS['HTTP-POST']);
  if (!services.length) return wrong('has no AssertionConsumerService with the HTTP-POST binding, the one assertions are sent with');
  if (services.length > 20) return wrong('has more than 20 HTTP-POST AssertionConsumerServices');
  const acs: SamlInput['acs'] = [];
  for (const [i, service] of services.entries()) {
    const location = attr(service, 'Location');
    const indexRaw = attr(service, 'index');
    const index = indexRaw !== undefined && /^\d{1,5}$/.test(indexRaw) && Number(indexRaw) <= 65535 ? Number(indexRaw) : undefined;
    if (!location) return wrong(`AssertionConsumerService ${i + 1} has no Location`);
    if (indexRaw !== undefined && index === undefined) return wrong(`AssertionConsumerService ${i + 1} has an index that is not an unsigned short`);
    let isDefault = false;
    try {
      isDefault = booleanAttr(service, 'isDefault', false);
    } catch {
      return wrong(`AssertionConsumerService ${i + 1} has an isDefault that is not a boolean`);
    }
    const entry = { url: location, binding: 'HTTP-POST' as const, index: index ?? i };
    if (isDefault) acs.unshift(entry);
    else acs.push(entry);
  }
  if (new Set(acs.map((a) => a.index)).size !== acs.length) return wrong('has two AssertionConsumerServices with the same index');

  const logout = children(sp, NS.metadata, 'SingleLogoutService');
  const preferred = logout.find((s) => attr(s, 'Binding') === BINDING_URNS['HTTP-Redirect']) ?? logout.find((s) => attr(s, 'Binding') === BINDING_URNS['HTTP-POST']);
  const sloLocation = preferred && attr(preferred, 'Location');
  const slo = preferred && sloLocation ? { url: sloLocation, binding: bindingOfUrn(attr(preferred, 'Binding')!)! } : null;

  const spCertificates: string[] = [];
  for (const descriptor of children(sp, NS.metadata, 'KeyDescriptor')) {
    const use = attr(descriptor, 'use');
    if (use !== undefined && use !== 'signing') continue;
    for (const keyInfo of children(descriptor, NS.dsig, 'KeyInfo')) {
      for (const data of children(keyInfo, NS.dsig, 'X509Data')) {
        for (const cert of childElements(data).filter((e) => isElement(e, NS.dsig, 'X509Certificate'))) {
          let text: string;
          try {
            text = textOf(cert);
          } catch {
            return wrong('has an X509Certificate that is not text');
          }
          const pem = certificatePem(text);
          if (!pem) return wrong('has an X509Certificate that is not a readable certificate');
          if (!spCertificates.includes(pem)) spCertificates.push(pem);
        }
      }
    }
  }
  if (spCertificates.length > 4) return wrong('has more than 4 signing certificates');

  const urlErrors: FieldError[] = [];
  checkEndpoints({ acs, slo }, 'metadata', urlErrors);
  for (const e of urlErrors) {
    const what = e.path.startsWith('metadata.slo') ? 'The SingleLogoutService Location' : `AssertionConsumerService Location ${acs[Number(e.path.split('.')[2])]?.url ?? ''}`;
    errors.push({ path, message: `${what} ${e.message}` });
  }
  if (urlErrors.length) return undefined;
  return { entityId, acs, slo, spCertificates };
}

/** Fetches metadata from `url` once (see the header); the text, or a field error under `path`. */
export async function fetchSpMetadata(url: string, policy: TargetPolicy, path: string, errors: FieldError[]): Promise<string | undefined> {
  const wrong = (message: string) => {
    errors.push({ path, message });
    return undefined;
  };
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return wrong('must be an absolute http(s) URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return wrong('must be an absolute http(s) URL');
  if (target.username || target.password) return wrong('must not carry credentials');
  const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
  const literal = literalTargetProblem(target.hostname, port, policy);
  if (literal) return wrong(literal);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const answer = await new Promise<{ status: number; body: Buffer } | { error: string }>((resolve) => {
    const req = send(target, { method: 'GET', lookup: guardedLookup(policy, port), signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_XML_BYTES) {
          res.destroy();
          resolve({ error: `answered more than ${MAX_XML_BYTES} bytes` });
        } else chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', () => resolve({ error: 'the answer broke off' }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code === 'EFORBIDDENADDRESS' ? error.message : `could not be fetched (${error.code ?? error.name})` }));
    req.end();
  });
  if ('error' in answer) return wrong(answer.error);
  if (answer.status < 200 || answer.status >= 300) return wrong(`answered HTTP ${answer.status}${answer.status >= 300 && answer.status < 400 ? ' (redirects are not followed)' : ''}`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(answer.body);
  } catch {
    return wrong('did not answer UTF-8 text');
  }
}
