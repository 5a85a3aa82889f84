/**
 * Hosted HTML pages: Eta templates with auto-escaping, one shared layout, and the headers every
 * page gets — a strict CSP (no scripts at all; forms may post only to this origin; never framed)
 * and `Cache-Control: no-store`, since pages carry CSRF tokens and personal details.
 *
 * Templates live in `server/pages/templates/` and are found from source and from `dist/`.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import { Eta } from 'eta';

export const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Where a folder of `server/pages/` lives, from source (`server/pages`) or build (`dist/server/pages`). */
export function pagesFolder(name: 'templates' | 'assets'): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, name), join(here, '..', '..', '..', 'server', 'pages', name)];
  const found = candidates.find((dir) => existsSync(dir));
  if (!found) throw new Error(`page ${name} not found (looked in ${candidates.join(', ')})`);
  return found;
}

let eta: Eta | undefined;
function engine(): Eta {
  eta ??= new Eta({ views: pagesFolder('templates'), autoEscape: true, cache: true });
  return eta;
}

/**
 * The page CSP, with extra `form-action` sources when a form's answer redirects onward: Chromium
 * applies `form-action` to every redirect after a submission, so a sign-in form that resumes an
 * authorization request must also allow the origins the application's redirect URIs live on.
 */
export function pageCsp(formActionSources: string[] = []): string {
  if (!formActionSources.length) return PAGE_CSP;
  return PAGE_CSP.replace("form-action 'self'", ["form-action 'self'", ...formActionSources].join(' '));
}

/** Renders `templates/<templateName>.eta` inside the layout and sends it as the reply. */
export function renderPage(
  reply: FastifyReply,
  templateName: string,
  data: Record<string, unknown> & { title: string },
  options: { formActionSources?: string[] } = {},
): FastifyReply {
  const html = engine().render(templateName, data);
  return reply
    .header('content-security-policy', pageCsp(options.formActionSources))
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(html);
}

/** An error page with `status`; the message is shown as text, never as HTML. */
export function renderError(reply: FastifyReply, status: number, title: string, message: string): FastifyReply {
  return renderPage(reply.status(status), 'error', { title, message });
}
