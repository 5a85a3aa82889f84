/**
 * Form rules checked as the administrator types, with messages in words. Each mirrors the
 * server's rule, which stays the judge (its answer is shown under the field too); where the
 * server's rule is a pure function it is imported from the server's own module, so it lives in
 * one place (redirect URIs: server/applications/redirect-uris.ts).
 */
// With extensions, unlike the rest of the panel: test/unit/panel-validation.test.ts imports this module,
// which tsconfig.test.json checks under the server's NodeNext resolution (Vite and Bundler take both).
// ClientType is the server rule's own (the same three values as the wire's Application['clientType']).
import { checkRedirectUris, isPrivateHost } from '../../server/applications/redirect-uris.js';
import type { ClientType } from '../../server/db/schema/types.js';
import { plural } from './strings.js';

const t = {
  required: (what: string) => `${what} is required.`,
  tooLong: (what: string, max: number) => `${what} can be at most ${max} characters.`,
  clientId: 'Use 2 to 63 characters: lower-case letters, digits, - and _, starting with a letter or digit.',
  audienceSpaces: 'The audience cannot contain spaces.',
  noRedirect: 'Add at least one redirect URI, one per line.',
  tooManyRedirects: (n: number) => `At most 20 redirect URIs; there are ${n}.`,
  line: (n: number, message: string) => `Line ${n}: ${message}`,
  duplicateLine: (n: number, first: number) => `Line ${n}: the same as line ${first}.`,
  sentence: (s: string) => s.charAt(0).toUpperCase() + s.slice(1) + (/[.!?]$/.test(s) ? '' : '.'),
  webhookUrl: 'Enter an absolute http:// or https:// address, such as https://notes.example.com/hooks/gatehouse.',
  webhookCredentials: 'The address cannot contain a user name or password.',
  logoutUrl: 'Enter an absolute https:// address (or http:// on this network), such as https://notes.example.com/auth/backchannel-logout.',
  logoutHttp: 'Plain http:// only reaches this network (localhost, a private address, *.lan, *.local); use https:// elsewhere.',
  logoutFragment: 'The address cannot contain a # fragment.',
  secretLength: 'A signing secret has 16 to 200 characters; leave it empty to have one generated.',
  email: (line: number, text: string) => `Line ${line}: “${text}” is not an e-mail address.`,
  tooManyEmails: (n: number) => `At most 1,000 addresses at once; there are ${n}.`,
};

/** The non-empty lines of a text box, with their line numbers (1-based). */
export function lines(text: string): { n: number; value: string }[] {
  return text
    .split(/\r?\n/)
    .map((value, i) => ({ n: i + 1, value: value.trim() }))
    .filter((l) => l.value !== '');
}

export function requiredText(value: string, what: string, max = 200): string[] {
  const v = value.trim();
  if (!v) return [t.required(what)];
  if (v.length > max) return [t.tooLong(what, max)];
  return [];
}

export function clientIdErrors(id: string): string[] {
  if (!id) return [t.required('The client ID')];
  return /^[a-z0-9][a-z0-9_-]{1,62}$/.test(id) ? [] : [t.clientId];
}

export function audienceErrors(audience: string): string[] {
  const v = audience.trim();
  if (!v) return [t.required('The audience')];
  if (/\s/.test(v)) return [t.audienceSpaces];
  return v.length > 500 ? [t.tooLong('The audience', 500)] : [];
}

/** Redirect URIs are one per line (never split on spaces: a space inside a line is an error). */
export function redirectUriList(text: string): string[] {
  return lines(text).map((l) => l.value);
}

/** Every problem of the redirect URI box, line by line, in words. */
export function redirectUriErrors(text: string, clientType: ClientType): string[] {
  const list = lines(text);
  if (!list.length) return [t.noRedirect];
  const out: string[] = [];
  if (list.length > 20) out.push(t.tooManyRedirects(list.length));
  const seen = new Map<string, number>();
  for (const { n, value } of list) {
    const [problem] = checkRedirectUris([value], clientType, 'line');
    if (problem) out.push(t.line(n, t.sentence(problem.message)));
    else if (/\s/.test(value)) out.push(t.line(n, t.sentence('must not contain spaces')));
    const first = seen.get(value);
    if (first !== undefined) out.push(t.duplicateLine(n, first));
    else seen.set(value, n);
  }
  return out;
}

export function webhookUrlErrors(url: string): string[] {
  const v = url.trim();
  if (!v) return [];
  try {
    const parsed = new URL(v);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return [t.webhookUrl];
    if (parsed.username || parsed.password) return [t.webhookCredentials];
    return [];
  } catch {
    return [t.webhookUrl];
  }
}

/** The back-channel logout URL: a webhook address, https or http on this network, no fragment (the server's rule). */
export function backchannelLogoutUriErrors(url: string): string[] {
  const v = url.trim();
  if (!v) return [];
  const webhook = webhookUrlErrors(v);
  if (webhook.length) return webhook[0] === t.webhookUrl ? [t.logoutUrl] : webhook;
  if (v.includes('#')) return [t.logoutFragment];
  return new URL(v).protocol === 'http:' && !isPrivateHost(new URL(v).hostname) ? [t.logoutHttp] : [];
}

export function webhookSecretErrors(secret: string): string[] {
  const v = secret.trim();
  return v && (v.length < 16 || v.length > 200) ? [t.secretLength] : [];
}

/** One line of a pasted list of addresses, as the administrator typed it. */
export interface EmailLine {
  line: number;
  text: string;
  /** The address, lower-cased, when the text is one (`Ann <ann@example.com>` too). */
  email?: string;
  /** Set on a repeat of an address earlier in the box. */
  duplicateOf?: number;
}

// Deliberately plain: one @, something on each side, a dot in the domain, no spaces. The server
// has the last word (it answers `invalid_email` entries for anything it refuses).
const EMAIL = /^[^\s@<>(),;:"[\]]+@[^\s@<>(),;:"[\]]+\.[^\s@<>(),;:"[\]]+$/;

/**
 * Splits pasted text into entries: one per line, and commas or semicolons also separate entries
 * ("a@x, b@y"). `Name <address>` reads as the address. Every entry keeps its line number, so a
 * bad one can be shown where it was typed.
 */
export function parseEmailLines(text: string): EmailLine[] {
  const out: EmailLine[] = [];
  const seen = new Map<string, number>();
  text.split(/\r?\n/).forEach((raw, i) => {
    for (const part of raw.split(/[,;]/)) {
      const entry = part.trim();
      if (!entry) continue;
      const angled = /<([^<>]*)>\s*$/.exec(entry);
      const candidate = (angled ? angled[1]! : entry).trim().toLowerCase();
      const item: EmailLine = { line: i + 1, text: entry };
      if (EMAIL.test(candidate)) {
        item.email = candidate;
        const first = seen.get(candidate);
        if (first !== undefined) item.duplicateOf = first;
        else seen.set(candidate, i + 1);
      }
      out.push(item);
    }
  });
  return out;
}

/** The distinct valid addresses of a pasted list. */
export const validEmails = (entries: EmailLine[]): string[] => entries.filter((e) => e.email && e.duplicateOf === undefined).map((e) => e.email!);

/** Messages for the entries that are not addresses, in words, line by line. */
export function emailListErrors(entries: EmailLine[]): string[] {
  const out = entries.filter((e) => !e.email).map((e) => t.email(e.line, e.text));
  const valid = validEmails(entries).length;
  if (valid > 1000) out.unshift(t.tooManyEmails(valid));
  return out;
}

/** The hint under every redirect URI box. */
export const redirectUriHint = (native: boolean) =>
  `One per line. https, or http for localhost and private-network hosts${native ? '; custom schemes are allowed for desktop and mobile apps' : ''}.`;

export const addressesFound = (n: number) => `${plural(n, 'address', 'addresses')} found`;
