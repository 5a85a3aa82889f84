/**
 * RFC 4511 §4.5.1.7: search filters, decoded from BER and evaluated against an entry with the
 * three-valued logic of §4.5.1.7 (TRUE, FALSE, Undefined; only TRUE returns the entry).
 *
 * Every filter item of the RFC: and, or (RFC 4526's empty and/or: absolute true/false), not,
 * equalityMatch, substrings, greaterOrEqual, lessOrEqual, present, approxMatch (evaluated as
 * equality, which §4.5.1.7.6 allows) and extensibleMatch (decoded; Undefined, as for a matching
 * rule the server does not support). Attribute names and values match as the schema says
 * (schema.ts): an unknown attribute is Undefined (present: FALSE), as is an assertion its rule
 * cannot read (a non-number for uidNumber).
 *
 * Decoding is bounded: at most MAX_DEPTH levels and MAX_ITEMS items, each string at most
 * LIMIT_BYTES; past that the search is refused (protocolError) rather than worked through.
 */
import { BerError, BerReader, Tag } from './ber.js';
import { normalDn, normalValue } from './dn.js';
import { attributeType, type AttributeType } from './schema.js';

export const MAX_DEPTH = 32;
export const MAX_ITEMS = 512;
const LIMIT_BYTES = 4096;
const MAX_SUBSTRINGS = 16;

export type Filter =
  | { type: 'and' | 'or'; filters: Filter[] }
  | { type: 'not'; filter: Filter }
  | { type: 'equality' | 'ge' | 'le' | 'approx'; attribute: string; value: string }
  | { type: 'substrings'; attribute: string; initial: string | undefined; any: string[]; final: string | undefined }
  | { type: 'present'; attribute: string }
  | { type: 'extensible' };

const ASSERTIONS: Record<number, 'equality' | 'ge' | 'le' | 'approx'> = { 0xa3: 'equality', 0xa5: 'ge', 0xa6: 'le', 0xa8: 'approx' };

/** Decodes the next element of `reader` as a filter; `refuse(why)` makes the error for a too-large one. */
export function decodeFilter(reader: BerReader, refuse: (why: string) => Error): Filter {
  let items = 0;
  const text = (r: BerReader, tag: number = Tag.octetString) => {
    const bytes = r.bytes(tag);
    if (bytes.length > LIMIT_BYTES) throw refuse(`a filter value longer than ${LIMIT_BYTES} bytes`);
    return bytes.toString('utf8');
  };
  const read = (r: BerReader, depth: number): Filter => {
    if (depth > MAX_DEPTH) throw refuse(`the filter nests deeper than ${MAX_DEPTH} levels`);
    if (++items > MAX_ITEMS) throw refuse(`the filter has more than ${MAX_ITEMS} items`);
    const tag = r.peek();
    if (tag === 0xa0 || tag === 0xa1) {
      const set = r.sequence(tag);
      const filters: Filter[] = [];
      while (!set.done) filters.push(read(set, depth + 1));
      return { type: tag === 0xa0 ? 'and' : 'or', filters };
    }
    if (tag === 0xa2) {
      const inner = r.sequence(0xa2);
      const filter = read(inner, depth + 1);
      if (!inner.done) throw new BerError('bytes after a negated filter');
      return { type: 'not', filter };
    }
    if (tag !== undefined && ASSERTIONS[tag]) {
      const ava = r.sequence(tag);
      const attribute = text(ava);
      const value = text(ava);
      if (!ava.done) throw new BerError('bytes after an assertion');
      return { type: ASSERTIONS[tag]!, attribute, value };
    }
    if (tag === 0xa4) {
      const s = r.sequence(0xa4);
      const attribute = text(s);
      const parts = s.sequence(Tag.sequence);
      if (!s.done) throw new BerError('bytes after substrings');
      let initial: string | undefined;
      let final: string | undefined;
      const any: string[] = [];
      let count = 0;
      while (!parts.done) {
        if (++count > MAX_SUBSTRINGS) throw refuse(`a substrings filter has more than ${MAX_SUBSTRINGS} parts`);
        const partTag = parts.peek();
        const value = text(parts, partTag);
        if (final !== undefined) throw new BerError('a substring after the final one');
        if (partTag === 0x80 && count === 1) initial = value;
        else if (partTag === 0x81) any.push(value);
        else if (partTag === 0x82) final = value;
        else throw new BerError('a malformed substrings filter');
      }
      if (count === 0) throw new BerError('a substrings filter without substrings');
      return { type: 'substrings', attribute, initial, any, final };
    }
    if (tag === 0x87) return { type: 'present', attribute: text(r, 0x87) };
    if (tag === 0xa9) {
      const m = r.sequence(0xa9);
      if (m.peek() === 0x81) text(m, 0x81);
      if (m.peek() === 0x82) text(m, 0x82);
      text(m, 0x83);
      if (m.peek() === 0x84) m.boolean(0x84);
      if (!m.done) throw new BerError('a malformed extensible match');
      return { type: 'extensible' };
    }
    throw new BerError('an unknown filter item');
  };
  return read(reader, 1);
}

// --- Evaluation ------------------------------------------------------------------------------

/** TRUE, FALSE or Undefined (RFC 4511 §4.5.1.7). */
export type Truth = boolean | undefined;

/** What a filter is evaluated against: the values of an attribute type, by its canonical name. */
export interface Matchable {
  values(type: AttributeType): readonly string[] | undefined;
}

/** Evaluates `filter` for `entry`; the entry is returned by a search only when this is `true`. */
export function evaluate(filter: Filter, entry: Matchable): Truth {
  switch (filter.type) {
    case 'and': {
      let result: Truth = true;
      for (const f of filter.filters) {
        const r = evaluate(f, entry);
        if (r === false) return false;
        if (r === undefined) result = undefined;
      }
      return result;
    }
    case 'or': {
      let result: Truth = false;
      for (const f of filter.filters) {
        const r = evaluate(f, entry);
        if (r === true) return true;
        if (r === undefined) result = undefined;
      }
      return result;
    }
    case 'not': {
      const r = evaluate(filter.filter, entry);
      return r === undefined ? undefined : !r;
    }
    case 'present': {
      const type = attributeType(filter.attribute);
      return type !== undefined && (entry.values(type)?.length ?? 0) > 0;
    }
    case 'equality':
    case 'approx':
      return assertion(filter.attribute, filter.value, entry, (type, v, a) => equal(type, v, a));
    case 'ge':
      return assertion(filter.attribute, filter.value, entry, (type, v, a) => order(type, v, a, (c) => c >= 0));
    case 'le':
      return assertion(filter.attribute, filter.value, entry, (type, v, a) => order(type, v, a, (c) => c <= 0));
    case 'substrings': {
      const type = attributeType(filter.attribute);
      if (!type || (type.matching !== 'caseIgnore' && type.matching !== 'caseExact')) return undefined;
      const values = entry.values(type);
      if (!values) return false;
      const prep = type.matching === 'caseIgnore' ? normalValue : (s: string) => s;
      const initial = filter.initial === undefined ? undefined : prep(filter.initial);
      const any = filter.any.map(prep);
      const final = filter.final === undefined ? undefined : prep(filter.final);
      return values.some((value) => substringsMatch(prep(value), initial, any, final));
    }
    case 'extensible':
      return undefined;
  }
}

/** Applies `test` to each value of the attribute; Undefined for an unknown type or unreadable assertion. */
function assertion(attribute: string, asserted: string, entry: Matchable, test: (type: AttributeType, value: string, asserted: string) => Truth): Truth {
  const type = attributeType(attribute);
  if (!type) return undefined;
  const values = entry.values(type);
  if (!values?.length) return false;
  let result: Truth = false;
  for (const value of values) {
    const r = test(type, value, asserted);
    if (r === true) return true;
    if (r === undefined) result = undefined;
  }
  return result;
}

function equal(type: AttributeType, value: string, asserted: string): Truth {
  switch (type.matching) {
    case 'caseIgnore':
    case 'oid':
      return normalValue(value) === normalValue(asserted);
    case 'caseExact':
      return value === asserted;
    case 'integer': {
      const a = integerOf(asserted);
      return a === undefined ? undefined : integerOf(value) === a;
    }
    case 'dn': {
      const a = normalDn(asserted);
      return a === undefined ? undefined : normalDn(value) === a;
    }
    case 'generalizedTime': {
      const a = timeOf(asserted);
      return a === undefined ? undefined : timeOf(value) === a;
    }
  }
}

function order(type: AttributeType, value: string, asserted: string, holds: (comparison: number) => boolean): Truth {
  switch (type.matching) {
    case 'integer': {
      const a = integerOf(asserted);
      const v = integerOf(value);
      return a === undefined || v === undefined ? undefined : holds(v - a);
    }
    case 'generalizedTime': {
      const a = timeOf(asserted);
      const v = timeOf(value);
      return a === undefined || v === undefined ? undefined : holds(v - a);
    }
    case 'caseIgnore':
      return holds(compare(normalValue(value), normalValue(asserted)));
    case 'caseExact':
      return holds(compare(value, asserted));
    default:
      return undefined; // no ordering rule for DNs and object classes
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** An INTEGER's string form (RFC 4517 §3.3.16), within JavaScript's safe range. */
export function integerOf(text: string): number | undefined {
  if (!/^-?(0|[1-9]\d{0,15})$/.test(text.trim())) return undefined;
  const n = Number(text.trim());
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A GeneralizedTime (RFC 4517 §3.3.13) in UTC (`Z`), to milliseconds. */
function timeOf(text: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})?(\d{2})?(?:[.,](\d{1,3}))?Z$/.exec(text.trim());
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5] ?? 0), Number(m[6] ?? 0), Number((m[7] ?? '0').padEnd(3, '0')));
  return Number.isNaN(ms) ? undefined : ms;
}

function substringsMatch(value: string, initial: string | undefined, any: string[], final: string | undefined): boolean {
  let pos = 0;
  let end = value.length;
  if (initial !== undefined) {
    if (!value.startsWith(initial)) return false;
    pos = initial.length;
  }
  if (final !== undefined) {
    if (!value.endsWith(final) || value.length - final.length < pos) return false;
    end = value.length - final.length;
  }
  for (const part of any) {
    const at = value.indexOf(part, pos);
    if (at < 0 || at + part.length > end) return false;
    pos = at + part.length;
  }
  return true;
}
