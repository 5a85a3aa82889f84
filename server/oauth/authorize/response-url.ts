/** An authorization response's address: the redirect URI with its parameters (RFC 6749 §4.1.2, RFC 9207 `iss`). */
export function responseUrl(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}
