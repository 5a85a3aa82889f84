/** PKCE helpers and JWT decoding for the test sign-in (no verification: display only). */

function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function randomString(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

export async function pkceChallenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

export function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [h, p] = token.split('.');
  const decode = (part: string | undefined) => {
    const b64 = (part ?? '').replace(/-/g, '+').replace(/_/g, '/');
    const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)))) as Record<string, unknown>;
  };
  return { header: decode(h), payload: decode(p) };
}

export const CALLBACK_CHANNEL = 'gatehouse-test-sign-in';

export interface CallbackResult {
  state: string | null;
  code: string | null;
  iss: string | null;
  error: string | null;
  error_description: string | null;
}

export function callbackUri(): string {
  return `${location.origin}/admin/callback`;
}
