/**
 * RFC 4514: distinguished names as strings. `parseDn` reads one (escapes `\,` and `\2c` included,
 * spaces around separators tolerated as older clients send them) into its RDNs, each in a normal
 * form: the attribute type's canonical name lower-cased (aliases and OIDs resolved, schema.ts) and
 * the value unescaped, lower-cased, with insignificant spaces removed (RFC 4518's caseIgnore
 * preparation: every naming attribute here is case-insensitive). Two DNs name the same entry when
 * their normal forms are equal (distinguishedNameMatch).
 */
import { attributeType } from './schema.js';

export interface Ava {
  type: string;
  value: string;
}

/** RDNs from the entry itself up to the root; multi-valued RDNs keep their AVAs sorted. */
export type Dn = Ava[][];

const MAX_DN_LENGTH = 4096;
const MAX_RDNS = 32;

/** Parses a DN string; undefined when it is not one. The empty string is the root DSE's DN. */
export function parseDn(text: string): Dn | undefined {
  if (text.length > MAX_DN_LENGTH) return undefined;
  const dn: Dn = [];
  let i = 0;
  const skipSpaces = () => {
    while (text[i] === ' ') i++;
  };
  skipSpaces();
  if (i === text.length) return [];
  for (;;) {
    const rdn: Ava[] = [];
    for (;;) {
      skipSpaces();
      const typeStart = i;
      while (i < text.length && /[A-Za-z0-9.-]/.test(text[i]!)) i++;
      const rawType = text.slice(typeStart, i);
      if (!/^([A-Za-z][A-Za-z0-9-]*|\d+(\.\d+)*)$/.test(rawType)) return undefined;
      skipSpaces();
      if (text[i] !== '=') return undefined;
      i++;
      skipSpaces();
      const value = readValue();
      if (value === undefined) return undefined;
      rdn.push({ type: normalType(rawType), value: normalValue(value) });
      skipSpaces();
      if (text[i] === '+') {
        i++;
        continue;
      }
      break;
    }
    rdn.sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
    dn.push(rdn);
    if (dn.length > MAX_RDNS) return undefined;
    if (i === text.length) return dn;
    if (text[i] !== ',' && text[i] !== ';') return undefined;
    i++;
  }

  /** An attribute value up to the next unescaped separator; undefined when malformed. */
  function readValue(): string | undefined {
    if (text[i] === '#') return undefined; // a BER-encoded value: no naming attribute here has one
    const bytes: number[] = [];
    let trailingEscaped = 0; // bytes at the end that an escape kept (a trailing "\ " is significant)
    let quoted = false;
    if (text[i] === '"') {
      quoted = true;
      i++;
    }
    while (i < text.length) {
      const c = text[i]!;
      if (quoted && c === '"') {
        i++;
        return Buffer.from(bytes).toString('utf8');
      }
      if (!quoted && (c === ',' || c === ';' || c === '+')) break;
      if (c === '\\') {
        const next = text[i + 1];
        if (next === undefined) return undefined;
        if (/[0-9A-Fa-f]/.test(next) && /[0-9A-Fa-f]/.test(text[i + 2] ?? '')) {
          bytes.push(Number.parseInt(text.slice(i + 1, i + 3), 16));
          i += 3;
        } else if (' "#+,;<=>\\'.includes(next)) {
          bytes.push(next.charCodeAt(0));
          i += 2;
        } else return undefined;
        trailingEscaped = bytes.length;
        continue;
      }
      if (!quoted && (c === '"' || c === '<' || c === '>' || c === '=')) return undefined;
      const char = String.fromCodePoint(text.codePointAt(i)!);
      for (const b of Buffer.from(char, 'utf8')) bytes.push(b);
      i += char.length;
    }
    if (quoted) return undefined;
    // Unescaped trailing spaces are not part of the value (they precede a separator or the end).
    let end = bytes.length;
    while (end > trailingEscaped && bytes[end - 1] === 0x20) end--;
    return Buffer.from(bytes.slice(0, end)).toString('utf8');
  }
}

function normalType(raw: string): string {
  return (attributeType(raw)?.name ?? raw).toLowerCase();
}

/** RFC 4518 caseIgnore preparation, simplified: trimmed, inner runs of spaces as one, lower case. */
export function normalValue(value: string): string {
  return value.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
}

/** A DN's normal form as one string (`uid=ada,ou=people,dc=example`): equal strings, equal DNs. */
export function dnKey(dn: Dn): string {
  return dn.map((rdn) => rdn.map((ava) => `${ava.type}=${escapeKey(ava.value)}`).join('+')).join(',');
}

const escapeKey = (value: string) => value.replace(/[\\,+=]/g, (c) => `\\${c}`);

/** The normal form of a DN string, or undefined when it is not a DN. */
export function normalDn(text: string): string | undefined {
  const dn = parseDn(text);
  return dn === undefined ? undefined : dnKey(dn);
}

/** Whether `dn` is `ancestor` or below it. */
export function isWithin(dn: Dn, ancestor: Dn): boolean {
  if (dn.length < ancestor.length) return false;
  const offset = dn.length - ancestor.length;
  return ancestor.every((rdn, i) => sameRdn(rdn, dn[offset + i]!));
}

export function sameRdn(a: Ava[], b: Ava[]): boolean {
  return a.length === b.length && a.every((ava, i) => ava.type === b[i]!.type && ava.value === b[i]!.value);
}

/** The single AVA of an RDN, when it has exactly one. */
export function singleAva(rdn: Ava[] | undefined): Ava | undefined {
  return rdn?.length === 1 ? rdn[0] : undefined;
}
