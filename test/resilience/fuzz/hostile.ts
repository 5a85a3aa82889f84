/**
 * fast-check arbitraries for hostile input: unicode edge cases (lone surrogates, NUL, RTL
 * overrides, stacked combining marks, non-characters, overlong UTF-8 bytes), wrong types, huge
 * strings, deep nesting, malformed JSON and form bodies, and abused headers.
 */
import fc from 'fast-check';

/** Strings that have broken parsers, escapers, collations and log lines elsewhere. */
export const EDGE_STRINGS = [
  '', ' ', '\t', '\u0000', 'a\u0000b', '\ud800', '\udfff', 'x\udc00\ud800y', '\u202eevil.exe', '\u200f\u200e\u2067',
  'e\u0301\u0302\u0303\u0304', '\u0301'.repeat(300), '\ufeff', '\uffff', '\ufffe', '\u{10ffff}', '😀'.repeat(60),
  'ｆｕｌｌｗｉｄｔｈ', 'İı', 'ß', '\r\nX-Injected: 1', '../../../etc/passwd', '%00', '%', '%zz', '<script>alert(1)</script>',
  "' OR 1=1;--", '"\\', '__proto__', 'constructor', 'prototype', 'null', 'true', '1e999', '-0', 'NaN', '[]', '{}',
  'a@b', '@', 'x'.repeat(257) + '@example.com', 'ADA@EXAMPLE.COM', 'https://evil.example/', 'javascript:alert(1)',
];

const edgeString = fc.constantFrom(...EDGE_STRINGS);
/** Strings up to 100 KiB and a little beyond (the body limit), built cheaply. */
const hugeString = fc
  .tuple(fc.integer({ min: 1_000, max: 110_000 }), fc.constantFrom('x', 'é', '\u0301', '😀', '\u0000'))
  .map(([n, unit]) => unit.repeat(Math.ceil(n / unit.length)));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: edgeString },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.tuple(edgeString, fc.string({ maxLength: 10 }), edgeString).map((parts) => parts.join('')) },
  { weight: 1, arbitrary: hugeString },
);

/** A JSON value nested `depth` levels deep (arrays or objects). */
export function nested(depth: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { a: value };
  return value;
}

/** Any JSON value of the wrong type or shape for a field. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constantFrom(0, -1, 2 ** 53 + 1, 1e308, -1e308, 0.1, 5e-324)) },
  { weight: 1, arbitrary: fc.oneof(fc.boolean(), fc.constant(null)) },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(hostileString, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 2, max: 400 }), fc.constantFrom('array', 'object' as const)).map(([d, k]) => nested(d, k)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
);

/** Each byte's text in `encodeBytes`: itself when unreserved, else `%XX`. */
const BYTE_TEXT = Array.from({ length: 256 }, (_, b) =>
  /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
);

/**
 * Percent-encodes every UTF-8 byte outside the unreserved set (lone surrogates become U+FFFD).
 * From a table: a regular expression and a string per byte made this a tenth of the fuzzer's CPU
 * on hostile strings of up to 50,000 characters (issue 45).
 */
export function encodeBytes(value: string): string {
  let text = '';
  for (const b of Buffer.from(value, 'utf8')) text += BYTE_TEXT[b];
  return text;
}

/** Raw path/query fragments that are not valid percent-encoding or not valid UTF-8. */
export const BAD_ENCODINGS = ['%', '%z', '%zz', '%E0%A4%A', '%C0%AF', '%C0%80', '%ED%A0%80', '%F8%88%80%80%80', '%FF', '%00', '%2F..%2F', '%25%', '%u0041'];

/** Bodies that are not valid JSON, or valid JSON in hostile ways (duplicate and prototype keys). */
export const malformedJson: fc.Arbitrary<string | Buffer> = fc.oneof(
  fc.constantFrom(
    '{', '}', '{"a":', '{"a":1,}', "{'a':1}", '{"a":undefined}', '[1,2', 'nul', 'NaN', '1e999', '"\\ud800"', '"\\u0000"',
    '\ufeff{}', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}', '{"a":1,"a":2}',
    ' ', '\u0000', '{"email":"a@b.c"}\u0000garbage', '{}{}', '[]', '"string"', '42', 'true', 'null',
  ),
  fc.string({ unit: 'binary', maxLength: 60 }),
  // Invalid UTF-8 inside a JSON string: overlong '/', a lone continuation byte, a CESU surrogate.
  fc.constantFrom([0xc0, 0xaf], [0x80], [0xed, 0xa0, 0x80], [0xff, 0xfe], [0xf4, 0x90, 0x80, 0x80]).map((bytes) =>
    Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('"}')]),
  ),
  // Deep nesting in raw text, up to the body limit (deeper than any recursive walker should go).
  fc.tuple(fc.integer({ min: 1_000, max: 50_000 }), fc.boolean()).map(([depth, arrays]) =>
    arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
  ),
);

/** Form bodies (application/x-www-form-urlencoded) that no form would send. */
export const malformedForm: fc.Arbitrary<string | Buffer> = fc.oneof(
  fc.constantFrom('&&&', '=', '==&==', 'a', 'a[b]=1', 'a[]=1&a[]=2', '__proto__[x]=1', 'constructor[prototype][x]=1', '%', '%zz=1', 'a=%E0%A4%A'),
  fc.constantFrom(...BAD_ENCODINGS).map((bad) => `email=${bad}&password=${bad}`),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.integer({ min: 10_000, max: 40_000 }).map((n) => `name=${'x'.repeat(n)}`),
  fc.constantFrom([0xc0, 0xaf], [0xff], [0xed, 0xa0, 0x80]).map((bytes) => Buffer.concat([Buffer.from('email='), Buffer.from(bytes)])),
);

export const CONTENT_TYPES = [
  'text/plain', 'application/x-www-form-urlencoded', 'application/json', 'multipart/form-data; boundary=x',
  'application/json; charset=utf-16', 'application/json;charset=latin1', 'APPLICATION/JSON', 'application/json, text/plain',
  'application/jsonx', 'application/*', '*/*', ';;;', 'application/json; boundary=' + 'x'.repeat(4000), 'text/html',
  'application/x-www-form-urlencoded; charset=utf-7', 'application/problem+json', '\u0000',
];

export const ORIGINS = ['null', 'https://evil.example', 'http://127.0.0.1:8787.evil.example', 'http://127.0.0.1', 'x'.repeat(5000), '', 'file://'];

export const clientAddress = fc.oneof(
  fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)).map(([a, b, c]) => `10.${a}.${b}.${c}`),
  fc.constantFrom('::1', '::ffff:10.0.0.1', 'fe80::1', '2001:db8::42'),
);
