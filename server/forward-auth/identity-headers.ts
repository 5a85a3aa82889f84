/**
 * The identity headers a check answers with (spec forward-auth.md, "The check"): `Remote-User`
 * (username), `Remote-Email`, `Remote-Name`, `Remote-Groups` (comma-separated group ids, filtered
 * like the `groups` claim) and `Remote-Role` (the member's role in the application). Always all
 * five, empty when there is nothing to say, so a proxy that copies them sets every one and a value
 * the client sent under the same name cannot survive (the snippets also strip them).
 *
 * Values are ASCII-safe by percent-encoding (RFC 3986 §2.1): printable ASCII other than `%` is
 * sent as it is; every other character is sent as the `%XX` escapes of its UTF-8 bytes, so
 * `Zoë Ørsted` arrives as `Zo%C3%AB %C3%98rsted` and decodes with any URL decoder
 * (`decodeURIComponent`, PHP `rawurldecode`, Python `urllib.parse.unquote`). Chosen over RFC 8187,
 * which is a syntax for header *parameters* (`title*=UTF-8''…`) that apps reading a plain value
 * would show raw; usernames and group ids are ASCII by their own rules and never change.
 */

export const IDENTITY_HEADERS = ['Remote-User', 'Remote-Email', 'Remote-Name', 'Remote-Groups', 'Remote-Role'] as const;

const SAFE = /^[\x20-\x24\x26-\x7e]*$/;

/** `text` as a header value: unchanged when printable ASCII without `%`, else percent-encoded UTF-8. */
export function headerValue(text: string): string {
  if (SAFE.test(text)) return text;
  let out = '';
  for (const char of text) {
    if (SAFE.test(char)) out += char;
    else for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export interface Identity {
  username: string;
  email: string;
  name: string | null;
  groups: string[];
  role: string;
}

/** The five headers, lower-case names as Node writes them. */
export function identityHeaders(who: Identity): Record<string, string> {
  return {
    'remote-user': headerValue(who.username),
    'remote-email': headerValue(who.email),
    'remote-name': headerValue(who.name ?? ''),
    'remote-groups': headerValue(who.groups.join(',')),
    'remote-role': headerValue(who.role),
  };
}
