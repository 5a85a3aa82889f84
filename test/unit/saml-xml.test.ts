/**
 * The SAML identity provider's hostile-input layer (spec saml.md, "Hostile input"): the XML
 * parser's refusals (server/saml/xml.ts), the bindings' decoding bounds (bindings.ts), and the
 * signature checks against wrapping, SHA-1 and foreign keys (signature.ts). Our own signed
 * Response is verified by xmlsec1 (Debian's XML Security Library), the verifier mod_auth_mellon
 * and pysaml2 use, so "signed as the SPs expect" is checked by theirs, not ours.
 */
import { DOMParser, XMLSerializer } from '@xmldom/xmldom';
import { ExclusiveCanonicalization } from 'xml-crypto';
import { execFileSync } from 'node:child_process';
import { createHash, createPrivateKey, generateKeyPairSync, sign as cryptoSign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_XML_BYTES, parseXml } from '../../server/saml/xml.js';
import { fromPost, fromRedirect, MAX_INFLATED_BYTES } from '../../server/saml/bindings.js';
import { ALG, canonicalSignedInfo, envelopedSignature, signedInfoOf, signResponse, signRoot, signRootParsed, signRootWithSignedXml, verifyEnveloped, verifyQuerySignature, type SigningMaterial } from '../../server/saml/signature.js';
import { SamlRefusal } from '../../server/saml/refusal.js';
import { assertionXml, AUTHN_CONTEXT, idpMetadataXml, logoutRequestXml, logoutResponseXml, newMessageId, responseXml, type CanonicalXml } from '../../server/saml/builder.js';
import { newKeyMaterial } from '../../server/saml/keys.js';
import { readAuthnRequest, STATUS } from '../../server/saml/messages.js';

const refusal = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    if (error instanceof SamlRefusal) return error.reason;
    throw error;
  }
  throw new Error('not refused');
};

const NOW = new Date('2026-11-29T10:00:00Z');
const authnRequest = (id = '_req1', extra = '') =>
  `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${id}" Version="2.0" IssueInstant="2026-11-29T09:59:00Z" Destination="https://idp.example/saml/sso" AssertionConsumerServiceURL="https://sp.example/acs"${extra}><saml:Issuer>https://sp.example/metadata</saml:Issuer></samlp:AuthnRequest>`;

describe('the XML parser refuses what must never be read', () => {
  it('reads a plain AuthnRequest', () => {
    const req = readAuthnRequest(parseXml(`<?xml version="1.0" encoding="UTF-8"?>\n${authnRequest()}`), NOW);
    expect(req).toMatchObject({ id: '_req1', issuer: 'https://sp.example/metadata', acsUrl: 'https://sp.example/acs', forceAuthn: false, isPassive: false });
  });

  it('refuses a DTD, entities (XXE, billion laughs) and external references', () => {
    const xxe = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>`;
    const laughs = `<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">]><lolz>&lol2;</lolz>`;
    const external = `<!DOCTYPE r SYSTEM "http://attacker.example/x.dtd"><r/>`;
    for (const xml of [xxe, laughs, external, '<r><!ELEMENT a ANY></r>']) expect(refusal(() => parseXml(xml)), xml).toBe('dtd_forbidden');
    // An undeclared entity is not well-formed, not fetched.
    expect(refusal(() => parseXml('<r>&x;</r>'))).toBe('not_well_formed');
  });

  it('caps size at 256 KiB and depth at 64', () => {
    const padded = (n: number) => `<r>${'a'.repeat(n - 7)}</r>`;
    expect(parseXml(padded(MAX_XML_BYTES)).documentElement!.localName).toBe('r');
    expect(refusal(() => parseXml(padded(MAX_XML_BYTES + 1)))).toBe('too_large');
    const nest = (n: number) => '<a>'.repeat(n) + '</a>'.repeat(n);
    expect(parseXml(nest(64)).documentElement!.localName).toBe('a');
    expect(refusal(() => parseXml(nest(65)))).toBe('too_deep');
    expect(refusal(() => parseXml(nest(20_000)))).toBe('too_deep');
  });

  it('refuses comments and processing instructions in protocol messages, two roots, bad UTF-8 declarations, duplicate IDs', () => {
    expect(refusal(() => parseXml('<r><!-- x --></r>'))).toBe('not_well_formed');
    expect(parseXml('<r><!-- x --></r>', { comments: true }).documentElement!.localName).toBe('r');
    expect(refusal(() => parseXml('<r><?php x ?></r>'))).toBe('not_well_formed');
    expect(refusal(() => parseXml('<r/><r/>'))).toBe('not_well_formed');
    expect(refusal(() => parseXml('<r>'))).toBe('not_well_formed');
    expect(refusal(() => parseXml('<?xml version="1.0" encoding="ISO-8859-1"?><r/>'))).toBe('not_well_formed');
    expect(refusal(() => parseXml('<r><a ID="x"/><b ID="x"/></r>'))).toBe('duplicate_id');
    expect(refusal(() => parseXml('<r><a ID="x"/><b xmlns:w="urn:w" w:Id="x"/></r>'))).toBe('duplicate_id');
  });
});

describe('the bindings decode within their bounds', () => {
  const encode = (xml: string) => encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString('base64'));

  it('HTTP-Redirect: inflates, keeps RelayState as sent, refuses a bomb past 64 KiB', () => {
    const carried = fromRedirect(`/saml/sso?SAMLRequest=${encode(authnRequest())}&RelayState=${encodeURIComponent('back to /x?y=1 é')}`, 'SAMLRequest');
    expect(carried.relayState).toBe('back to /x?y=1 é');
    expect(carried.xml).toBe(authnRequest());
    const bomb = `<r>${' '.repeat(MAX_INFLATED_BYTES)}</r>`;
    expect(deflateRawSync(Buffer.from(bomb)).length).toBeLessThan(1000);
    expect(refusal(() => fromRedirect(`/x?SAMLRequest=${encode(bomb)}`, 'SAMLRequest'))).toBe('inflate_too_large');
  });

  it('refuses a RelayState over 80 bytes, repeated parameters, loose base64, a missing message', () => {
    expect(fromRedirect(`/x?SAMLRequest=${encode('<r/>')}&RelayState=${'a'.repeat(80)}`, 'SAMLRequest').relayState).toHaveLength(80);
    expect(refusal(() => fromRedirect(`/x?SAMLRequest=${encode('<r/>')}&RelayState=${'a'.repeat(81)}`, 'SAMLRequest'))).toBe('relay_state_too_long');
    expect(refusal(() => fromRedirect(`/x?SAMLRequest=${encode('<r/>')}&RelayState=${encodeURIComponent('é'.repeat(41))}`, 'SAMLRequest'))).toBe('relay_state_too_long');
    expect(refusal(() => fromRedirect(`/x?SAMLRequest=${encode('<r/>')}&SAMLRequest=${encode('<r/>')}`, 'SAMLRequest'))).toBe('bad_binding');
    expect(refusal(() => fromRedirect('/x?SAMLRequest=%%%', 'SAMLRequest'))).toBe('bad_binding');
    expect(refusal(() => fromRedirect('/x?SAMLRequest=ab*d', 'SAMLRequest'))).toBe('bad_encoding');
    expect(refusal(() => fromRedirect('/x?SAMLRequest=AAAA', 'SAMLRequest'))).toBe('bad_encoding');
    expect(refusal(() => fromRedirect('/x?RelayState=a', 'SAMLRequest'))).toBe('bad_binding');
    expect(refusal(() => fromPost({ SAMLRequest: ['a', 'b'] }, 'SAMLRequest'))).toBe('bad_binding');
    expect(fromPost({ SAMLRequest: Buffer.from('<r/>').toString('base64').replace(/(.{2})/, '$1\r\n') }, 'SAMLRequest').xml).toBe('<r/>');
    expect(refusal(() => fromPost({ SAMLRequest: Buffer.alloc(MAX_XML_BYTES + 3, 0x61).toString('base64') }, 'SAMLRequest'))).toBe('too_large');
  });
});

describe('signatures', () => {
  let key: SigningMaterial;
  let other: SigningMaterial;
  let dir: string;
  beforeAll(async () => {
    const made = await newKeyMaterial('https://idp.example', NOW);
    key = { privateKey: createPrivateKey(made.privateKeyPem), certificatePem: made.certificatePem };
    const foreign = await newKeyMaterial('https://attacker.example', NOW);
    other = { privateKey: createPrivateKey(foreign.privateKeyPem), certificatePem: foreign.certificatePem };
    dir = mkdtempSync(join(tmpdir(), 'saml-sig-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const signedRequest = (signer = key, id = '_req1') => signRootParsed(authnRequest(id), signer);
  const verify = (xml: string, certs = [key.certificatePem]) => {
    const doc = parseXml(xml);
    const signature = envelopedSignature(doc);
    if (!signature) throw new SamlRefusal('unsigned', 'unsigned');
    verifyEnveloped(xml, doc, signature, certs);
  };

  const signatureValues = (xml: string) => [...xml.matchAll(/<ds:SignatureValue>([^<]+)</g)].map((m) => m[1]);
  const reserialised = (text: string) => new XMLSerializer().serializeToString(new DOMParser().parseFromString(text, 'text/xml'));
  /** xml-crypto's exclusive canonical form of the text's root element, or of its first `local` element. */
  const canonicalOf = (text: string, local?: string) => {
    const doc = new DOMParser().parseFromString(text, 'text/xml');
    const element = local ? doc.getElementsByTagNameNS('*', local).item(0)! : doc.documentElement!;
    return new ExclusiveCanonicalization().process(element as never, {} as never).toString();
  };

  it('writes every message and the metadata in their exclusive canonical form, awkward values too (decisions 0434, 0435)', () => {
    const awkward = 'a&b<c>d"e\'f\tg\nh\ri\u0001j Å😀 ]]> &amp;';
    const assertion = assertionXml({
      id: newMessageId(), issuer: `https://idp.example/${awkward}`, now: NOW, nameId: { value: awkward, format: 'persistent', spNameQualifier: awkward },
      recipient: `https://sp.example/acs?${awkward}`, inResponseTo: '_req1', audience: awkward, authnInstant: NOW, sessionIndex: '_s1',
      sessionNotOnOrAfter: NOW, authnContext: AUTHN_CONTEXT.mfa, lifetimeMs: 300_000, notBeforeSkewMs: 30_000,
      attributes: [
        { name: awkward, nameFormat: 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic', friendlyName: awkward, values: [awkward, '', 'plain'] },
        { name: 'none', nameFormat: 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic', friendlyName: undefined, values: [] },
      ],
    });
    expect(canonicalOf(assertion)).toBe(assertion);
    for (const status of [{ code: STATUS.success }, { code: STATUS.responder, second: STATUS.noPassive }]) {
      const response = responseXml({
        id: newMessageId(), issuer: awkward, now: NOW, destination: `https://sp.example/${awkward}`, inResponseTo: undefined, status,
        assertion: status.second ? undefined : assertion,
      });
      expect(canonicalOf(response)).toBe(response);
      if (!status.second) expect(canonicalOf(response, 'Assertion')).toBe(assertion);
    }
    for (const format of ['persistent', 'emailAddress'] as const) {
      const logout = logoutRequestXml({
        id: newMessageId(), issuer: awkward, now: NOW, destination: `https://sp.example/slo?${awkward}`, notOnOrAfter: NOW,
        nameId: { value: awkward, format, spNameQualifier: format === 'persistent' ? awkward : undefined }, sessionIndex: awkward,
      });
      expect(canonicalOf(logout)).toBe(logout);
    }
    for (const partial of [false, true]) {
      const answer = logoutResponseXml({ id: newMessageId(), issuer: awkward, now: NOW, destination: `https://sp.example/slo?${awkward}`, inResponseTo: `_${partial}`, partial });
      expect(canonicalOf(answer)).toBe(answer);
      expect(answer.includes(STATUS.partialLogout)).toBe(partial);
    }
    // The metadata is not signed, but written the same one way: its root element is canonical too.
    const metadata = idpMetadataXml({
      entityId: `https://idp.example/${awkward}`, certificates: [key.certificatePem, other.certificatePem], ssoUrl: `https://idp.example/sso?${awkward}`,
      sloUrl: 'https://idp.example/slo', wantAuthnRequestsSigned: true, cacheDuration: 'PT3600S',
    });
    expect(metadata.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<md:EntityDescriptor ')).toBe(true);
    const element = metadata.slice(metadata.indexOf('<md:'), -1);
    expect(canonicalOf(element)).toBe(element);
    expect(metadata.endsWith('</md:EntityDescriptor>\n')).toBe(true);
    // What XML cannot carry was replaced, as before: the text parses back to the values with U+FFFD.
    expect(new DOMParser().parseFromString(assertion, 'text/xml').getElementsByTagNameNS('*', 'NameID').item(0)!.textContent).toBe(awkward.replace('\u0001', '\uFFFD').replace('\r', '\r'));
  });

  it("our own messages are signed from their text with the very signatures of the parsing way and xml-crypto's SignedXml (decisions 0432, 0434, 0435, 0436)", async () => {
    /**
     * Signs `xml` (our builder's) the text way, and checks the result against the parsing way and
     * SignedXml: the same SignatureValues (so the same digests and canonical SignedInfos), the same
     * document once re-serialised (SignedXml writes its parsed DOM back, the parsing way writes its
     * Signature as SignedXml does), the text way's result still canonical (so it took the text way:
     * only it writes the Signature canonically), and, holding one signature, verified by our verifier
     * (which takes one enveloped signature only: an SP's message).
     */
    const signedThreeWays = async (xml: CanonicalXml) => {
      const signed = await signRoot(xml, key);
      for (const other of [await signRootParsed(xml, key), await signRootWithSignedXml(xml, key)]) {
        expect(signatureValues(signed)).toEqual(signatureValues(other));
        expect(reserialised(signed)).toBe(reserialised(other));
      }
      expect(canonicalOf(signed)).toBe(signed);
      if (signatureValues(signed).length === 1) verify(signed);
      return signed;
    };
    const assertion = assertionXml({
      id: newMessageId(), issuer: 'https://idp.example/saml', now: NOW, nameId: { value: 'op&aque', format: 'persistent', spNameQualifier: 'https://sp.example/metadata' },
      recipient: 'https://sp.example/acs?a=1&b=2', inResponseTo: '_req1', audience: 'https://sp.example/metadata', authnInstant: NOW, sessionIndex: '_s1',
      sessionNotOnOrAfter: NOW, authnContext: AUTHN_CONTEXT.password, lifetimeMs: 300_000, notBeforeSkewMs: 30_000,
      attributes: [
        { name: 'email', nameFormat: 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic', friendlyName: undefined, values: ['ann & <bob>@example.com'] },
        { name: 'urn:oid:2.5.4.42', nameFormat: 'urn:oasis:names:tc:SAML:2.0:attrname-format:uri', friendlyName: 'given "name"', values: ['Ann\tÅsa', 'x\ny'] },
      ],
    });
    const signedAssertion = await signedThreeWays(assertion);
    const responseOf = (inner: CanonicalXml | undefined, id = newMessageId()) => responseXml({
      id, issuer: 'https://idp.example/saml', now: NOW, destination: 'https://sp.example/acs', inResponseTo: '_req1',
      status: inner ? { code: STATUS.success } : { code: STATUS.responder, second: STATUS.requestDenied }, assertion: inner,
    });
    const response = responseOf(signedAssertion);
    const signedResponse = await signedThreeWays(response);
    await signedThreeWays(responseOf(undefined));
    // Both through signResponse: the Assertion signed alone, then the Response around it, both from the text.
    const unsigned = responseOf(assertion, / ID="([^"]+)"/.exec(response)![1]!);
    expect(await signResponse(unsigned, key, { assertion: true, response: true })).toBe(signedResponse);
    expect(await signResponse(unsigned, key, { assertion: true, response: false })).toBe(unsigned.replace(assertion, () => signedAssertion));
    expect(await signResponse(unsigned, key, { assertion: false, response: true })).toBe(await signRoot(unsigned, key));
    expect(await signResponse(unsigned, key, { assertion: false, response: false })).toBe(unsigned);
    // The same Response through a serializer (`<x/>` tags: not our builder's text), signed the
    // parsing way, explicitly: the same signatures.
    const serialised = reserialised(responseOf(signedAssertion, / ID="([^"]+)"/.exec(response)![1]!));
    expect(serialised).toContain('/>');
    const fromParse = await signRootParsed(serialised, key);
    expect(signatureValues(fromParse)).toEqual(signatureValues(signedResponse));
    expect(reserialised(fromParse)).toBe(reserialised(signedResponse));
    // signRoot signs only an unsigned message of the builder's: a second signature is a mistake in our code.
    await expect(signRoot(signedAssertion, key)).rejects.toThrow('signRoot takes an unsigned message of builder.ts');
    // The logout messages, both ways, with and without a NameID qualifier.
    for (const format of ['persistent', 'emailAddress'] as const) {
      await signedThreeWays(logoutRequestXml({
        id: newMessageId(), issuer: 'https://idp.example/saml', now: NOW, destination: 'https://sp.example/slo?a=1&b="2"', notOnOrAfter: NOW,
        nameId: { value: 'n & <m>', format, spNameQualifier: format === 'persistent' ? 'https://sp.example/metadata' : undefined }, sessionIndex: '_s1',
      }));
    }
    for (const partial of [false, true]) {
      await signedThreeWays(logoutResponseXml({ id: newMessageId(), issuer: 'https://idp.example/saml', now: NOW, destination: 'https://sp.example/slo', inResponseTo: '_r-1.x', partial }));
    }
    // The SignedInfo's canonical form, filled in from xml-crypto's rendering of a template, is xml-crypto's rendering.
    for (const id of ['_a', '_req-9.x', newMessageId(), 'Z.z_9-']) {
      const digest = createHash('sha256').update(id).digest('base64');
      const made = signedInfoOf(id, digest);
      expect(made.canonical).toBe(canonicalSignedInfo(made.written));
    }
    // An SP's request in the test helper's shape (not our builder's text) is signed the parsing way, as SignedXml signs it.
    const request = await signRootParsed(authnRequest('_req-9.x'), key);
    expect(signatureValues(request)).toEqual(signatureValues(await signRootWithSignedXml(authnRequest('_req-9.x'), key)));
    verify(request);
  });

  it('our signature: RSA-SHA256, exclusive c14n, SHA-256 digest, after the Issuer; verified by xmlsec1', async () => {
    const assertion = assertionXml({
      id: newMessageId(), issuer: 'https://idp.example/saml', now: NOW, nameId: { value: 'opaque', format: 'persistent', spNameQualifier: 'https://sp.example/metadata' },
      recipient: 'https://sp.example/acs', inResponseTo: '_req1', audience: 'https://sp.example/metadata', authnInstant: NOW, sessionIndex: '_s1',
      sessionNotOnOrAfter: undefined, authnContext: AUTHN_CONTEXT.password, lifetimeMs: 300_000, notBeforeSkewMs: 30_000,
      attributes: [{ name: 'email', nameFormat: 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic', friendlyName: undefined, values: ['ann & <bob>@example.com'] }],
    });
    // As the SSO service signs it: both signatures from the text (signResponse, decisions 0434, 0435).
    const response = await signResponse(responseXml({
      id: newMessageId(), issuer: 'https://idp.example/saml', now: NOW, destination: 'https://sp.example/acs', inResponseTo: '_req1',
      status: { code: STATUS.success }, assertion,
    }), key, { assertion: true, response: true });
    expect(response).toContain(`<ds:SignatureMethod Algorithm="${ALG.rsaSha256}"></ds:SignatureMethod>`);
    expect(response).toContain(`<ds:DigestMethod Algorithm="${ALG.sha256}"></ds:DigestMethod>`);
    expect(response).toContain(`<ds:CanonicalizationMethod Algorithm="${ALG.excC14n}"></ds:CanonicalizationMethod>`);
    expect(response).toMatch(/<saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">https:\/\/idp\.example\/saml<\/saml:Issuer><ds:Signature/);
    expect(response).toMatch(/<saml:Issuer>https:\/\/idp\.example\/saml<\/saml:Issuer><ds:Signature/);
    expect(response).not.toMatch(/sha1/i);
    const file = join(dir, 'response.xml');
    writeFileSync(file, response);
    writeFileSync(join(dir, 'idp.pem'), key.certificatePem);
    const xmlsec = (...args: string[]) => execFileSync('xmlsec1', ['--verify', '--pubkey-cert-pem', join(dir, 'idp.pem'), ...args, file], { stdio: 'pipe' }).toString();
    xmlsec('--id-attr:ID', 'urn:oasis:names:tc:SAML:2.0:protocol:Response');
    xmlsec('--id-attr:ID', 'urn:oasis:names:tc:SAML:2.0:assertion:Assertion', '--node-xpath', "//*[local-name()='Assertion']/*[local-name()='Signature']");
    writeFileSync(join(dir, 'other.pem'), other.certificatePem);
    expect(() => execFileSync('xmlsec1', ['--verify', '--pubkey-cert-pem', join(dir, 'other.pem'), '--id-attr:ID', 'urn:oasis:names:tc:SAML:2.0:protocol:Response', file], { stdio: 'pipe' })).toThrow();
  });

  it("verifies an SP's enveloped signature with its certificate only, never KeyInfo's", async () => {
    verify(await signedRequest());
    // Signed by a key the SP does not have: its own certificate rides in KeyInfo, and is ignored.
    const foreign = await signedRequest(other);
    expect(foreign).toContain('<ds:X509Certificate>');
    expect(refusal(() => verify(foreign))).toBe('bad_signature');
    expect(refusal(() => verify(authnRequest()))).toBe('unsigned');
  });

  it('refuses signature wrapping: a second message around or beside the signed one, a moved reference, two signatures', async () => {
    const signed = await signedRequest();
    const body = signed.replace(/^<samlp:AuthnRequest[^>]*>/, '').replace(/<\/samlp:AuthnRequest>$/, '');
    // The signed request moved into Extensions of a forged one with another ID: its reference now points below the root.
    const forged = `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_evil" Version="2.0" IssueInstant="2026-11-29T09:59:00Z" AssertionConsumerServiceURL="https://attacker.example/acs"><saml:Issuer>https://sp.example/metadata</saml:Issuer><samlp:Extensions>${signed}</samlp:Extensions></samlp:AuthnRequest>`;
    expect(() => verify(forged)).toThrow(SamlRefusal);
    // The signature moved to the forged root, still referring to the signed request inside: wrong reference.
    const sig = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(signed)![0];
    const moved = `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_evil" Version="2.0" IssueInstant="2026-11-29T09:59:00Z"><saml:Issuer>https://sp.example/metadata</saml:Issuer>${sig}<samlp:Extensions>${signed.replace(sig, '')}</samlp:Extensions></samlp:AuthnRequest>`;
    await expect(async () => verify(moved)).rejects.toMatchObject({ reason: 'bad_signature' });
    // The signed content changed (another ACS): the digest no longer matches.
    await expect(async () => verify(signed.replace('https://sp.example/acs', 'https://attacker.example/acs'))).rejects.toMatchObject({ reason: 'bad_signature' });
    // A Signature xml-crypto cannot read (its Reference without a DigestValue): refused, not thrown as anything else.
    await expect(async () => verify(signed.replace(/<ds:DigestValue>[^<]*<\/ds:DigestValue>/, ''))).rejects.toMatchObject({ reason: 'bad_signature' });
    // Two signatures.
    await expect(async () => verify(signed.replace('</samlp:AuthnRequest>', `${sig.replace('<ds:Signature', '<ds:Signature Id="b"')}</samlp:AuthnRequest>`))).rejects.toMatchObject({ reason: 'bad_signature' });
    expect(body).toContain('<ds:Signature');
  });

  it('refuses SHA-1 as such, in the signature method or the digest', async () => {
    const signed = await signedRequest();
    const sha1Method = signed.replace(ALG.rsaSha256, 'http://www.w3.org/2000/09/xmldsig#rsa-sha1');
    await expect(async () => verify(sha1Method)).rejects.toMatchObject({ reason: 'sha1_refused' });
    const sha1Digest = signed.replace(ALG.sha256, 'http://www.w3.org/2000/09/xmldsig#sha1');
    await expect(async () => verify(sha1Digest)).rejects.toMatchObject({ reason: 'sha1_refused' });
  });

  it('Redirect binding query signatures: verified over the octets as sent; SHA-1 refused; a foreign key refused', () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const octets = `SAMLRequest=abc%2Bd&RelayState=r&SigAlg=${encodeURIComponent(ALG.rsaSha256)}`;
    const signature = cryptoSign('sha256', Buffer.from(octets), privateKey);
    verifyQuerySignature({ octets, sigAlg: ALG.rsaSha256, signature }, [publicKey]);
    expect(refusal(() => verifyQuerySignature({ octets: octets.replace('r&', 's&'), sigAlg: ALG.rsaSha256, signature }, [publicKey]))).toBe('bad_signature');
    expect(refusal(() => verifyQuerySignature({ octets, sigAlg: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1', signature }, [publicKey]))).toBe('sha1_refused');
    expect(refusal(() => verifyQuerySignature({ octets, sigAlg: ALG.rsaSha256, signature }, []))).toBe('bad_signature');
  });

  it('signs the logout messages from their text so that xmlsec1 verifies them too', async () => {
    writeFileSync(join(dir, 'idp.pem'), key.certificatePem);
    const messages = {
      LogoutRequest: logoutRequestXml({
        id: newMessageId(), issuer: 'https://idp.example/saml', now: NOW, destination: 'https://sp.example/slo', notOnOrAfter: new Date(NOW.getTime() + 60_000),
        nameId: { value: 'v', format: 'transient', spNameQualifier: 'https://sp.example/metadata' }, sessionIndex: '_s',
      }),
      LogoutResponse: logoutResponseXml({ id: newMessageId(), issuer: 'https://idp.example/saml', now: NOW, destination: 'https://sp.example/slo', inResponseTo: '_r', partial: true }),
    };
    for (const [local, xml] of Object.entries(messages)) {
      const signed = await signRoot(xml, key);
      expect(signed).toMatch(/^<samlp:Logout\w+ xmlns:samlp="[^"]+"[^>]*><saml:Issuer xmlns:saml="[^"]+">https:\/\/idp\.example\/saml<\/saml:Issuer><ds:Signature /);
      const file = join(dir, `${local}.xml`);
      writeFileSync(file, signed);
      execFileSync('xmlsec1', ['--verify', '--pubkey-cert-pem', join(dir, 'idp.pem'), '--id-attr:ID', `urn:oasis:names:tc:SAML:2.0:protocol:${local}`, file], { stdio: 'pipe' });
    }
  });
});
