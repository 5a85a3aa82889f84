/**
 * What ties a hand-over to the browser that started it (issue 49, H6; decision 0303). Without it
 * a one-time code was a bearer of the sign-in: one seen in transit (a log, a Referer, a shared
 * screen) could be spent by anyone, and an attacker could send a victim to the callback with a
 * code of the attacker's own account (login CSRF), as OAuth's `state` and PKCE guard against.
 *
 * The binding works like PKCE, with the verifier in a cookie of the protected host:
 * 1. The issuer's start endpoint issues no code without a `challenge`: it first sends the browser
 *    to `<scheme>://<host>/.gatehouse/start?rd=…` on the protected host (the prefix every proxy
 *    configuration already routes here).
 * 2. That sets a host-only cookie holding a random verifier (`__Host-gatehouse_state` over https,
 *    so a sibling host under the same parent domain cannot plant one; `gatehouse_state` over plain
 *    http), HttpOnly, SameSite=Lax, ten minutes, kept when already there (tabs signing in at once
 *    share it), and comes back to the start with `challenge` = base64url(SHA-256(verifier)).
 * 3. The code is stored under SHA-256 of the code and the challenge together (codes.ts), so
 *    `/.gatehouse/callback` finds it only with the verifier from this browser's cookie: another
 *    browser has none (400 `invalid_grant`, "started in another browser") or its own (400, as an
 *    unknown code). The challenge in the issuer's URL gives nothing away: the verifier never
 *    leaves the protected host's cookie.
 */
import { createHash } from 'node:crypto';

export const HOST_START_PATH = '/.gatehouse/start';
/** How long the verifier cookie lives: a sign-in on the hosted pages, with time to spare. */
export const STATE_MAX_AGE_S = 600;

/** The verifier cookie's name: `__Host-` over https, which a sibling host cannot set. */
export const stateCookieName = (https: boolean) => (https ? '__Host-gatehouse_state' : 'gatehouse_state');

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** A challenge as the start endpoint accepts it (43 base64url characters), else undefined. */
export const validChallenge = (value: string | undefined) => (value && TOKEN.test(value) ? value : undefined);

/** base64url(SHA-256(verifier)): what the issuer sees of the verifier. */
export const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/**
 * The verifier this browser holds for the protected host: its cookie's one value when well formed.
 * None, or more than one (a cookie planted for a parent domain beside ours), is undefined.
 */
export function stateVerifier(header: string | string[] | undefined, https: boolean): string | undefined {
  const text = Array.isArray(header) ? header.join('; ') : header;
  if (!text) return undefined;
  const name = stateCookieName(https);
  const values = text.split(';').map((part) => part.trim()).filter((part) => part.startsWith(`${name}=`)).map((part) => part.slice(name.length + 1));
  return values.length === 1 && TOKEN.test(values[0]!) ? values[0] : undefined;
}
