/**
 * The DNS message code of GATEHOUSE_TLS=acme (server/trust/acme/dns-wire.ts, tsig.ts; decision
 * 0371), fuzzed: hostile bytes from a DNS server never throw anything but DnsWireError and never
 * hang (compression loops), names and TXT values round-trip, and a TSIG-signed answer verifies only
 * unaltered and under the same key. BIND itself checks the signing (test/interop/acme-pebble.test.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CLASS, DnsWireError, decodeMessage, encodeMessage, encodeName, OPCODE, readTxt, TYPE, txtData, type Message } from '../../server/trust/acme/dns-wire.js';
import { signRequest, verifyResponse, type TsigKey } from '../../server/trust/acme/tsig.js';

const label = fc.stringMatching(/^[a-z0-9_]([a-z0-9-]{0,20}[a-z0-9])?$/);
const name = fc.array(label, { minLength: 1, maxLength: 6 }).map((labels) => labels.join('.'));
const record = fc.record({ name, type: fc.constantFrom(TYPE.TXT, TYPE.A, TYPE.SOA), class: fc.constantFrom(CLASS.IN, CLASS.NONE, CLASS.ANY), ttl: fc.nat(), data: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)) });
const message = fc.record({
  id: fc.integer({ min: 0, max: 0xffff }),
  flags: fc.integer({ min: 0, max: 0xffff }),
  questions: fc.array(fc.record({ name, type: fc.constantFrom(TYPE.SOA, TYPE.TXT), class: fc.constant(CLASS.IN) }), { maxLength: 2 }),
  answers: fc.array(record, { maxLength: 3 }),
  authorities: fc.array(record, { maxLength: 3 }),
  additionals: fc.array(record, { maxLength: 2 }),
});

const decodesOrRefuses = (bytes: Buffer) => {
  try {
    decodeMessage(bytes);
  } catch (error) {
    if (!(error instanceof DnsWireError)) throw error;
  }
};

describe('DNS wire format', () => {
  it('round-trips messages, names and TXT values', () => {
    fc.assert(
      fc.property(message, (m: Message) => {
        const decoded = decodeMessage(encodeMessage(m));
        expect({ ...decoded, additionalOffsets: undefined }).toEqual({ ...m, additionalOffsets: undefined });
      }),
      { numRuns: 300 },
    );
    fc.assert(fc.property(fc.string({ maxLength: 700 }), (value) => readTxt(txtData(value)) === value), { numRuns: 300 });
    expect(txtData('x'.repeat(300)).length).toBe(302);
  });

  it('refuses names it cannot write: empty or over-long labels, over 255 bytes', () => {
    expect(() => encodeName('a..b')).toThrow(DnsWireError);
    expect(() => encodeName(`${'a'.repeat(64)}.test`)).toThrow(DnsWireError);
    expect(() => encodeName(Array(60).fill('abcd').join('.'))).toThrow(DnsWireError);
  });

  it('reads hostile bytes without throwing anything but DnsWireError: random, truncated, mutated, looping pointers', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), (a) => decodesOrRefuses(Buffer.from(a))), { numRuns: 2000 });
    fc.assert(
      fc.property(message, fc.nat(), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }), (m, cut, edits) => {
        const bytes = encodeMessage(m);
        decodesOrRefuses(bytes.subarray(0, cut % (bytes.length + 1)));
        const mutated = Buffer.from(bytes);
        for (const [at, value] of edits) mutated[at % mutated.length] = value;
        decodesOrRefuses(mutated);
      }),
      { numRuns: 1000 },
    );
    // A pointer to itself, and two pointing at each other: refused, not followed forever.
    const header = Buffer.from([0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    expect(() => decodeMessage(Buffer.concat([header, Buffer.from([0xc0, 12, 0, 6, 0, 1])]))).toThrow('compression pointer does not point backwards');
    expect(() => decodeMessage(Buffer.concat([header, Buffer.from([0xc0, 14, 0xc0, 12, 0, 6, 0, 1])]))).toThrow(DnsWireError);
  });
});

describe('TSIG', () => {
  const key: TsigKey = { name: 'gatehouse-acme', algorithm: 'hmac-sha256', secret: Buffer.alloc(32, 7) };
  const request = (): Buffer => encodeMessage({ id: 4242, flags: OPCODE.UPDATE << 11, questions: [{ name: 'acme.test', type: TYPE.SOA, class: CLASS.IN }], answers: [], authorities: [], additionals: [] });

  /**
   * A message signed as a request would be, turned into an answer: signed by `with_`, but not over
   * the request's MAC as RFC 8945 §5.3.1 wants, so it must not verify. (The valid case is BIND's
   * own signed answers, which test/interop/acme-pebble.test.ts needs to succeed at all.)
   */
  function answerSignedWithoutRequestMac(with_: TsigKey, now: number): Buffer {
    const answer = Buffer.from(request());
    answer.writeUInt16BE(answer.readUInt16BE(2) | 0x8000, 2);
    return signRequest(answer, with_, now).signed;
  }

  it('signs requests with the TSIG record last and ARCOUNT raised; a wrong or altered answer does not verify', () => {
    const now = 1_760_000_000;
    const { signed, mac } = signRequest(request(), key, now);
    const decoded = decodeMessage(signed);
    expect(decoded.additionals).toHaveLength(1);
    expect(decoded.additionals[0]).toMatchObject({ name: 'gatehouse-acme', type: TYPE.TSIG, class: CLASS.ANY, ttl: 0 });
    expect(mac).toHaveLength(32);
    // An answer signed without the request's MAC, or by another key, or not at all, is refused.
    const answer = answerSignedWithoutRequestMac(key, now);
    expect(verifyResponse(answer, decodeMessage(answer), key, mac, now)).toBe("the answer's TSIG signature does not verify");
    const other = answerSignedWithoutRequestMac({ ...key, name: 'other' }, now);
    expect(verifyResponse(other, decodeMessage(other), key, mac, now)).toBe('the answer is signed by another key');
    const unsigned = encodeMessage({ ...decodeMessage(request()), additionals: [] });
    expect(verifyResponse(unsigned, decodeMessage(unsigned), key, mac, now)).toBe('the answer is not signed');
  });
});
