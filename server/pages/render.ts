/**
 * Hosted HTML pages: Eta templates with auto-escaping, one shared layout, and the headers every
 * page gets — a strict CSP (no scripts, but our own one on pages with passkey controls; forms may
 * post only to this origin; never framed)
 * and `Cache-Control: no-store`, since pages carry CSRF tokens and personal details.
 *
 * Templates live in `server/pages/templates/`, found through the install root (util/install-paths.ts).
 */
import { existsSync } from 'node:fs';
import type { FastifyReply } from 'fastify';
import { Eta } from 'eta';
import { installPath } from '../util/install-paths.js';

export const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Where a folder of `server/pages/` lives (read from server/ by every build). */
export function pagesFolder(name: 'templates' | 'assets'): string {
  const folder = installPath('server', 'pages', name);
  if (!existsSync(folder)) throw new Error(`page ${name} not found in ${folder}`);
  return folder;
}

let eta: Eta | undefined;
function engine(): Eta {
  eta ??= new Eta({ views: pagesFolder('templates'), autoEscape: true, cache: true });
  return eta;
}

/** Where the pages' one script is served (passkeys; server/pages/client/webauthn.ts). */
export const PAGE_SCRIPT_PATH = '/assets/webauthn.js';

/**
 * The page CSP, with extra `form-action` sources when a form's answer redirects onward: Chromium
 * applies `form-action` to every redirect after a submission, so a sign-in form that resumes an
 * authorization request must also allow the origins the application's redirect URIs live on.
 * Pages with passkey controls (`scripts`) may run our own script and let it call our own API:
 * `script-src 'self'; connect-src 'self'`, nothing inline and nothing from elsewhere.
 */
export function pageCsp(formActionSources: string[] = [], scripts = false): string {
  let csp = PAGE_CSP;
  if (formActionSources.length) csp = csp.replace("form-action 'self'", ["form-action 'self'", ...formActionSources].join(' '));
  if (scripts) csp = csp.replace("default-src 'none';", "default-src 'none'; script-src 'self'; connect-src 'self';");
  return csp;
}

/** Renders `templates/<templateName>.eta` inside the layout and sends it as the reply. */
export function renderPage(
  reply: FastifyReply,
  templateName: string,
  data: Record<string, unknown> & { title: string },
  options: { formActionSources?: string[]; scripts?: boolean } = {},
): FastifyReply {
  const html = engine().render(templateName, { ...data, script: options.scripts ? PAGE_SCRIPT_PATH : undefined });
  return reply
    .header('content-security-policy', pageCsp(options.formActionSources, options.scripts))
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(html);
}

/** An error page with `status`; the message is shown as text, never as HTML. */
export function renderError(reply: FastifyReply, status: number, title: string, message: string): FastifyReply {
  return renderPage(reply.status(status), 'error', { title, message });
}
