/**
 * Forward auth on the hosted consent page (oauth/consent-page.ts): an application with explicit
 * consent asks the person once what its protected sites learn through the identity headers
 * (FORWARD_AUTH_SCOPE), as an OIDC application asks for its scopes. The page's `return_to` is then
 * the hand-over's start (start-route.ts), re-read here: the application is the one protecting
 * `rd`'s host, and nothing else is.
 */
import type { AppContext } from '../context.js';
import type { Application } from '../db/schema.js';
import { START_PATH } from './check.js';
import { findProtectingApplication } from './protected-hosts.js';

/** What a site learns through the identity headers, in scope words: username and name, e-mail, groups. */
export const FORWARD_AUTH_SCOPE = 'openid profile email groups';

const PREFIX = `${START_PATH}?`;

/** The application and scope behind a hand-over's start path, or undefined when `returnTo` is not one. */
export async function forwardConsentRequest(ctx: AppContext, returnTo: string): Promise<{ client: Application; scope: string } | undefined> {
  if (!returnTo.startsWith(PREFIX)) return undefined;
  const rd = new URLSearchParams(returnTo.slice(PREFIX.length)).get('rd');
  let url: URL;
  try {
    url = new URL(rd ?? '');
  } catch {
    return undefined;
  }
  const client = await findProtectingApplication(ctx.db, url.host);
  return client ? { client, scope: FORWARD_AUTH_SCOPE } : undefined;
}
