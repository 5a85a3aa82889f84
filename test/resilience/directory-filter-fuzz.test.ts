/**
 * LDAP filters built from outside values (issue 47; server/directory-sources/filter.ts, RFC 4515):
 * whatever a username, e-mail or DN holds — specials, NUL, control characters, any Unicode, lone
 * surrogates — the escaped assertion value holds no special or control character, reads back (through ldapts's own
 * parser, the one that puts it on the wire) as exactly the value given, and combined with an
 * administrator's filter stays one assertion inside `(&…)`: never more filter. And the check of an
 * administrator's filter answers (a reason or nothing) for any text, never throws.
 *
 * `FUZZ_SEED=<n>` replays a run; `FUZZ_RUNS=<n>` sets the cases per property.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AndFilter, EqualityFilter, ExtensibleFilter, FilterParser, OrFilter } from 'ldapts';
import { and, checkFilter, equals, escapeFilterValue, extensible, or } from '../../server/directory-sources/filter.js';

const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const options = { seed: SEED, numRuns: RUNS };

/** Text with a good share of what filters care about: specials, NUL, controls, non-ASCII. */
const hostileText = fc.oneof(
  fc.string({ unit: fc.constantFrom('*', '(', ')', '\\', '\u0000', '=', '&', '|', '!', '~', '>', '<', ':', 'a', ' ', 'é', '\u202e', '😀'), maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

/** The value as bytes on the wire (ldapts keeps a parsed value as text, or bytes when not UTF-8). */
const bytesOf = (value: string | Buffer) => (typeof value === 'string' ? Buffer.from(value, 'utf8') : value);

describe(`LDAP filter escaping (seed ${SEED})`, () => {
  it('escapes every special and control character', () => {
    fc.assert(fc.property(hostileText, (value) => {
      const escaped = escapeFilterValue(value);
      expect(escaped).not.toMatch(/[\u0000-\u001f\u007f]/);
      // Every `\` starts an escape of two hex digits; no raw `*`, `(`, `)`.
      expect(escaped.replace(/\\[0-9a-f]{2}/g, '')).not.toMatch(/[*()\\]/);
    }), options);
  });

  it('reads back through the parser as exactly the value given', () => {
    fc.assert(fc.property(hostileText, (value) => {
      const parsed = FilterParser.parseString(equals('uid', value));
      expect(parsed).toBeInstanceOf(EqualityFilter);
      const filter = parsed as EqualityFilter;
      expect(filter.attribute).toBe('uid');
      expect(bytesOf(filter.value).equals(Buffer.from(value, 'utf8'))).toBe(true);
    }), options);
  });

  it('stays one assertion when combined with an administrator\'s filter', () => {
    fc.assert(fc.property(hostileText, hostileText, (username, email) => {
      const parsed = FilterParser.parseString(and('(objectClass=inetOrgPerson)', or(equals('mail', email), equals('uid', username))));
      expect(parsed).toBeInstanceOf(AndFilter);
      const [first, second] = (parsed as AndFilter).filters;
      expect((parsed as AndFilter).filters).toHaveLength(2);
      expect(first!.toString()).toBe('(objectClass=inetOrgPerson)');
      expect(second).toBeInstanceOf(OrFilter);
      const [mail, uid] = (second as OrFilter).filters as EqualityFilter[];
      expect((second as OrFilter).filters).toHaveLength(2);
      expect([mail!.attribute, bytesOf(mail!.value).equals(Buffer.from(email, 'utf8'))]).toEqual(['mail', true]);
      expect([uid!.attribute, bytesOf(uid!.value).equals(Buffer.from(username, 'utf8'))]).toEqual(['uid', true]);
    }), options);
  });

  it('keeps a DN in Active Directory\'s in-chain match one value', () => {
    fc.assert(fc.property(hostileText, (cn) => {
      const dn = `CN=${cn},OU=Groups,DC=corp,DC=example`;
      const parsed = FilterParser.parseString(extensible('memberOf', '1.2.840.113556.1.4.1941', dn));
      expect(parsed).toBeInstanceOf(ExtensibleFilter);
      expect(bytesOf((parsed as ExtensibleFilter).value).equals(Buffer.from(dn, 'utf8'))).toBe(true);
    }), options);
  });

  it('refuses attribute names that are not names, rather than writing them into a filter', () => {
    for (const name of ['uid)(x', 'uid=*', '', 'a b', 'uid\u0000']) expect(() => equals(name, 'x')).toThrow(/not an attribute description/);
  });

  it('checks any administrator\'s filter without throwing', () => {
    fc.assert(fc.property(fc.oneof(hostileText, hostileText.map((t) => `(${t})`), hostileText.map((t) => `(&(a=${t})(b=c))`)), (text) => {
      const verdict = checkFilter(text);
      expect(verdict === undefined || typeof verdict === 'string').toBe(true);
    }), options);
    expect(checkFilter('(&(objectClass=person)(uid=a\\2a))')).toBeUndefined();
    expect(checkFilter('objectClass=person')).toMatch(/in parentheses/);
    expect(checkFilter('(a=b)(c=d)')).toMatch(/one filter/);
    expect(checkFilter('(&(a=b)')).toMatch(/unbalanced/);
  });
});
