/**
 * Where a sign-in may go back to, for the hosted pages (sign-in-pages.ts, `safeReturnTo`) and for
 * the control panel's own sign-in (renderer/src/session.ts), one rule for both: never an open
 * redirect (DESIGN §5), and only text a `Location` header or the address bar can carry as it is.
 * No imports: the panel bundles this file.
 */

/** The longest `return_to` kept (an authorization request with its parameters fits). */
export const RETURN_TO_MAX_LENGTH = 4000;

/**
 * Printable ASCII without a backslash, at most RETURN_TO_MAX_LENGTH characters. The value becomes
 * a `Location` header, which Node refuses to write with control characters or anything above
 * U+00FF (a 500 after the sign-in had succeeded); a backslash is a slash to a browser's URL
 * parser (`/\evil.example`).
 */
export function isReturnToText(raw: string | null | undefined): raw is string {
  return typeof raw === 'string' && raw.length > 0 && raw.length <= RETURN_TO_MAX_LENGTH && /^[\x21-\x5b\x5d-\x7e]+$/.test(raw);
}

/** The control panel's base path: where its own sign-in ends when nothing better is known. */
export const PANEL_HOME = '/admin/';
/** Panel paths that are steps of a sign-in, never a place to end one on (it would start again). */
const PANEL_SIGN_IN_STEPS = ['/admin/signed-in', '/admin/callback'];

/**
 * The panel page `raw` names — a path on this origin inside /admin/, as the address bar would
 * resolve it (so `/admin/../account` and `//evil.example/admin/` are not) — or PANEL_HOME. The
 * panel's sign-in keeps it while the hosted pages run (a deep link survives the sign-in) and
 * goes there afterwards; it is read back from storage the hosted pages share, so checked again.
 */
export function panelReturnTo(raw: string | null | undefined): string {
  if (!isReturnToText(raw) || !raw.startsWith('/') || raw.startsWith('//')) return PANEL_HOME;
  const base = 'http://panel.invalid';
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    return PANEL_HOME;
  }
  if (url.origin !== base || !url.pathname.startsWith(PANEL_HOME)) return PANEL_HOME;
  if (PANEL_SIGN_IN_STEPS.some((step) => url.pathname === step || url.pathname.startsWith(`${step}/`))) return PANEL_HOME;
  return `${url.pathname}${url.search}${url.hash}`;
}
