/**
 * LDAP search filters as Gatehouse writes them (RFC 4515, "String Representation of Search
 * Filters"). Every value that comes from outside (a username typed at sign-in, an e-mail, a DN
 * named in a group filter) goes through `escapeFilterValue`: §3 requires `*`, `(`, `)`, `\` and NUL
 * to be written as `\XX` (and we write every ASCII control character so), so an escaped value is
 * always one assertion value, never more filter. The administrator's own filters (people, groups, disabled) are parsed once when
 * saved (`checkFilter`) and only ever combined whole, inside `(&…)`.
 */
import { FilterParser } from 'ldapts';

/**
 * RFC 4515 §3: the value of an assertion, escaped: `*`, `(`, `)`, `\`, NUL and the other ASCII
 * control characters as `\XX`. Other characters stay as they are (RFC 4515 allows UTF-8 there):
 * ldapts's parser reads an escaped byte as one character, so escaping the bytes of a multi-byte
 * character would send other characters (found by test/resilience/directory-filter-fuzz.test.ts).
 */
export function escapeFilterValue(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (code < 0x20 || code === 0x7f || ch === '*' || ch === '(' || ch === ')' || ch === '\\') out += `\\${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out;
}

/** An attribute description (RFC 4512 §2.5): a name or OID, with options; never escaped, so checked. */
export const ATTRIBUTE_PATTERN = /^(?:[A-Za-z][A-Za-z0-9-]*|[0-9]+(?:\.[0-9]+)*)(?:;[A-Za-z0-9-]+)*$/;

function attribute(name: string): string {
  if (!ATTRIBUTE_PATTERN.test(name)) throw new Error(`not an attribute description: ${JSON.stringify(name)}`);
  return name;
}

/** `(attr=value)`, the value escaped. */
export const equals = (name: string, value: string) => `(${attribute(name)}=${escapeFilterValue(value)})`;

/** `(attr>=value)`, the value escaped. */
export const atLeast = (name: string, value: string) => `(${attribute(name)}>=${escapeFilterValue(value)})`;

/** `(attr:rule:=value)`: an extensible match (Active Directory's in-chain rule), the value escaped. */
export const extensible = (name: string, rule: string, value: string) => `(${attribute(name)}:${attribute(rule)}:=${escapeFilterValue(value)})`;

/** `(&a b …)` of whole filters (each already a parenthesised filter). */
export const and = (...filters: string[]) => (filters.length === 1 ? filters[0]! : `(&${filters.join('')})`);

/** `(|a b …)` of whole filters. */
export const or = (...filters: string[]) => (filters.length === 1 ? filters[0]! : `(|${filters.join('')})`);

/** Longest filter an administrator may save. */
export const MAX_FILTER_LENGTH = 2000;

/**
 * Why an administrator's filter is not usable, or undefined when it is: it must parse as one whole
 * RFC 4515 filter in parentheses (a bare `objectClass=person` is refused, not silently wrapped).
 */
export function checkFilter(filter: string): string | undefined {
  const text = filter.trim();
  if (!text.startsWith('(') || !text.endsWith(')')) return 'must be an LDAP filter in parentheses, such as (objectClass=person)';
  if (text.length > MAX_FILTER_LENGTH) return `must be at most ${MAX_FILTER_LENGTH} characters`;
  // Parentheses balance outside escapes (the parser lets an unclosed `(&(a=b)` through).
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i += 2;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0 && i !== text.length - 1) return 'must be one filter: wrap several in (&…) or (|…)';
  }
  if (depth !== 0) return 'has unbalanced parentheses';
  try {
    FilterParser.parseString(text);
  } catch (error) {
    return `is not a valid LDAP filter (${(error as Error).message.replace(/:.*$/s, '')})`;
  }
  return undefined;
}
