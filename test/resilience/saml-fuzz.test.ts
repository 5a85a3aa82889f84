/**
 * Hostile input for the SAML identity provider (spec saml.md, "Hostile input"; issue 42, item 5):
 * fast-check against the decoders themselves (the XML screen and parser, the bindings' base64 and
 * bounded DEFLATE, the message readers, SP metadata), each of which either answers or throws its
 * own `SamlRefusal`, never anything else; signature wrapping as a property (a mutated signed
 * request either is refused or, if it verifies, reads exactly as what was signed); then against
 * the server's browser routes (/saml/sso and /saml/slo, both bindings): random and mutated
 * messages are answered by the hosted refusal page (400, HTML), never a 500, and a valid request
 * is still answered after every batch.
 *
 * `FUZZ_SEED=<n>` replays a run; `FUZZ_RUNS=<n>` sets the cases per property.
 */
import fc from 'fast-check';
import { deflateRawSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers/app.js';
import { authnRequestXml, redirectUrl, samlSettings, signedBySp, spKey, spMetadataXml, type SpKey } from '../helpers/saml-sp.js';
import { MAX_XML_DEPTH, parseXml } from '../../server/saml/xml.js';
import { MAX_INFLATED_BYTES, fromPost, fromRedirect, inflateBounded, strictBase64 } from '../../server/saml/bindings.js';
import { envelopedSignature, verifyEnveloped } from '../../server/saml/signature.js';
import { readAuthnRequest, readLogoutRequest, readLogoutResponse } from '../../server/saml/messages.js';
import { readSpMetadata } from '../../server/saml/sp-metadata.js';
import { SamlRefusal } from '../../server/saml/refusal.js';
import type { FieldError } from '../../server/http/problem.js';

const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const params = { seed: SEED, numRuns: RUNS };

const ENTITY = 'https://fuzz.example.com/saml/metadata';
const ACS = 'https://fuzz.example.com/saml/acs';

let t: TestApp;
let key: SpKey;

beforeAll(async () => {
  t = await makeApp({ perFile: true });
  key = await spKey('fuzz.example.com');
  const res = await t.admin('POST', '/api/admin/applications', {
    id: 'fuzz', name: 'Fuzz', audience: 'https://fuzz.example.com/api', redirectUris: ['https://fuzz.example.com/'],
    saml: samlSettings({ entityId: ENTITY, acs: [{ url: ACS, binding: 'HTTP-POST', index: 0 }], slo: { url: 'https://fuzz.example.com/saml/slo', binding: 'HTTP-Redirect' }, spCertificates: [key.certificatePem] }),
  });
  expect(res.statusCode, res.body).toBe(201);
}, 60_000);

/** Whether `fn` returns or throws a SamlRefusal (anything else fails the property). */
function answersOrRefuses(fn: () => unknown): boolean {
  try {
    fn();
    return true;
  } catch (error) {
    if (error instanceof SamlRefusal) return true;
    throw error;
  }
}

const request = () => authnRequestXml(t, { issuer: ENTITY, acsUrl: ACS });

/** Fragments a hostile sender would splice in. */
const HOSTILE = [
  '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>', '&x;', '&amp;', '&#0;', '&#x110000;', '<?xml-stylesheet href="x"?>', '<!-- c -->',
  '<![CDATA[<a>]]>', '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="file:///etc/passwd"/>', ']]>', '<', '>', '"', "'", '\u0000', '\uFFFE',
  '\uD800', '<a>'.repeat(MAX_XML_DEPTH + 1), 'xmlns:saml="x"', 'ID="dup"', '<saml:Issuer>https://other.example</saml:Issuer>',
];

/** Text cut, with characters flipped, or with a hostile fragment spliced in, at a random place. */
const mutate = (base: () => string) =>
  fc.tuple(fc.constantFrom('flip', 'cut', 'splice', 'repeat'), fc.nat(), fc.constantFrom(...HOSTILE), fc.string({ maxLength: 8 })).map(([how, at, fragment, chars]) => {
    const text = base();
    const i = at % (text.length + 1);
    if (how === 'flip') return text.slice(0, i) + chars + text.slice(i + chars.length);
    if (how === 'cut') return text.slice(0, i);
    if (how === 'splice') return text.slice(0, i) + fragment + text.slice(i);
    return text.slice(0, i) + text.slice(i, i + 40).repeat(1 + (at % 50)) + text.slice(i);
  });

const xmlish = fc.oneof(fc.string({ maxLength: 400, unit: 'binary' }), mutate(request));

describe('the decoders', () => {
  it('the XML parser answers a document no deeper than the cap, or refuses', () => {
    fc.assert(fc.property(xmlish, fc.boolean(), (text, comments) =>
      answersOrRefuses(() => {
        const doc = parseXml(text, { comments });
        let depth = 0;
        for (let node: Element | null = doc.documentElement; node; node = node.firstElementChild ?? null) depth++;
        expect(depth).toBeLessThanOrEqual(MAX_XML_DEPTH);
      })), params);
  });

  it('the message readers answer or refuse whatever parses', () => {
    fc.assert(fc.property(mutate(request), (text) =>
      answersOrRefuses(() => {
        const doc = parseXml(text);
        for (const read of [readAuthnRequest, readLogoutRequest, readLogoutResponse]) answersOrRefuses(() => read(doc, t.clock.now()));
      })), params);
  });

  it('base64 and DEFLATE: strict, and inflating stops at 64 KiB', () => {
    const deflated = fc.oneof(
      fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b)),
      fc.tuple(fc.nat({ max: 4 * MAX_INFLATED_BYTES }), fc.nat({ max: 255 })).map(([n, byte]) => deflateRawSync(Buffer.alloc(n, byte))),
      fc.tuple(fc.nat(), fc.nat({ max: 255 })).map(([at, byte]) => {
        const good = deflateRawSync(Buffer.from(request()));
        good[at % good.length] = byte;
        return good;
      }),
    );
    fc.assert(fc.property(deflated, (bytes) =>
      answersOrRefuses(() => expect(inflateBounded(bytes).length).toBeLessThanOrEqual(MAX_INFLATED_BYTES))), params);
    fc.assert(fc.property(fc.string({ maxLength: 300 }), (text) =>
      answersOrRefuses(() => expect(strictBase64(text, 1024).length).toBeLessThanOrEqual(1024))), params);
  });

  it('the bindings answer a carried message or refuse any query string or form body', () => {
    const queryPart = fc.oneof(fc.constantFrom('SAMLRequest', 'SAMLResponse', 'RelayState', 'SigAlg', 'Signature', '', '%', '%zz', '&', '='), fc.string({ maxLength: 30 }));
    const query = fc.array(fc.tuple(queryPart, queryPart), { maxLength: 6 }).map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
    fc.assert(fc.property(query, fc.constantFrom('SAMLRequest' as const, 'SAMLResponse' as const), (q, param) =>
      answersOrRefuses(() => fromRedirect(`/saml/sso?${q}`, param))), params);
    const body = fc.oneof(fc.anything(), fc.dictionary(queryPart, fc.oneof(fc.string({ maxLength: 50 }), fc.array(fc.string(), { maxLength: 3 }))));
    fc.assert(fc.property(body, (b) => answersOrRefuses(() => fromPost(b, 'SAMLRequest'))), params);
  });

  it('SP metadata: read, or field errors; never a throw', () => {
    const base = () => spMetadataXml({ entityId: ENTITY, acs: [ACS], slo: 'https://fuzz.example.com/saml/slo', certificate: key.certificatePem });
    fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 400 }), mutate(base)), (text) => {
      const errors: FieldError[] = [];
      const read = readSpMetadata(text, 'body.xml', errors);
      expect(read === undefined ? errors.length > 0 : errors.length === 0).toBe(true);
    }), params);
  });

  it('no signature wrapping: a mutated signed request is refused, or reads exactly as what was signed', async () => {
    const signed = await signedBySp(request(), key);
    const original = readAuthnRequest(parseXml(signed), t.clock.now());
    const signedXml = signed;
    // Wrapping moves: the signed element duplicated with another ID and issuer, inside or beside the root.
    const evil = (xml: string) => xml.replace(/ID="[^"]+"/, 'ID="_evil"').replace(ENTITY, 'https://evil.example/md').replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '');
    const wrapped = fc.constantFrom(
      signedXml.replace('</saml:Issuer>', `</saml:Issuer>${evil(signedXml)}`),
      evil(signedXml).replace('</saml:Issuer>', `</saml:Issuer>${signedXml.match(/<ds:Signature[\s\S]*<\/ds:Signature>/)![0]}`),
      `<wrap>${signedXml}${evil(signedXml)}</wrap>`,
      signedXml.replace(/(<samlp:AuthnRequest[^>]*>)/, `$1<samlp:Extensions>${evil(signedXml)}</samlp:Extensions>`),
    );
    fc.assert(fc.property(fc.oneof(mutate(() => signedXml), wrapped), (text) => {
      let read;
      try {
        const doc = parseXml(text);
        const signature = envelopedSignature(doc);
        if (!signature) return true; // unsigned: the SSO rules decide (wantAuthnRequestsSigned)
        verifyEnveloped(text, doc, signature, [key.certificatePem]);
        read = readAuthnRequest(doc, t.clock.now());
      } catch (error) {
        if (error instanceof SamlRefusal) return true;
        throw error;
      }
      expect({ id: read.id, issuer: read.issuer, acsUrl: read.acsUrl }).toEqual({ id: original.id, issuer: original.issuer, acsUrl: original.acsUrl });
      return true;
    }), { ...params, numRuns: Math.max(50, Math.floor(RUNS / 3)) });
  });
});

describe('the browser routes', () => {
  const enc = (xml: string) => encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString('base64'));
  /**
   * Percent-encoded as sent: a lone surrogate (HOSTILE's '\uD800', or one a cut leaves), which
   * encodeURIComponent refuses to encode, as the three bytes a careless client writes for it, a
   * sequence that is not UTF-8.
   */
  const percent = (text: string) => text.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]|[^]/g, (c) => {
    if (c.length === 2 || c < '\uD800' || c > '\uDFFF') return encodeURIComponent(c);
    const code = c.charCodeAt(0);
    return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
  });

  async function stillAnswers() {
    const res = await t.app.inject({ method: 'GET', url: redirectUrl('/saml/sso', request()) });
    // No session: the sign-in page takes the request over.
    expect(res.statusCode, res.body.slice(0, 300)).toBe(302);
    expect(res.headers.location).toMatch(/^\/(sign-in|authorize|login)|\/saml\/sso\/continue|sign-in/);
  }

  it('random and mutated messages on /saml/sso and /saml/slo: the refusal page, never a 500', async () => {
    const cases = fc.tuple(
      fc.constantFrom('GET /saml/sso', 'POST /saml/sso', 'GET /saml/slo', 'POST /saml/slo'),
      fc.oneof(mutate(request), fc.string({ maxLength: 200 })),
      fc.constantFrom('deflate', 'raw', 'base64'),
    );
    const sample = fc.sample(cases, { seed: SEED, numRuns: Math.max(40, Math.floor(RUNS / 3)) });
    for (const [route, xml, encoding] of sample) {
      const [method, path] = route.split(' ') as ['GET' | 'POST', string];
      const param = path === '/saml/slo' && xml.length % 2 ? 'SAMLResponse' : 'SAMLRequest';
      const value = encoding === 'raw' ? percent(xml) : encoding === 'base64' ? encodeURIComponent(Buffer.from(xml).toString('base64')) : enc(xml);
      const res = method === 'GET'
        ? await t.app.inject({ method, url: `${path}?${param}=${value}` })
        : await t.app.inject({ method, url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `${param}=${encodeURIComponent(Buffer.from(xml).toString('base64'))}` });
      expect(res.statusCode, `${route} ${JSON.stringify(xml).slice(0, 200)} → ${res.body.slice(0, 200)}`).toBeLessThan(500);
      if (res.statusCode === 400) expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).not.toMatch(/at .*\.ts:\d+|stack/i);
    }
    await stillAnswers();
  });
});
