/**
 * The identity provider's hosted pages (spec saml.md): the auto-submitting HTTP-POST form that
 * carries a Response (or a logout message) to the SP, and the error page of a refusal.
 *
 * The form keeps the hosted pages' CSP: no inline script. The pages' own module (served from our
 * origin, `script-src 'self'`) submits a `form[data-auto-submit]` at once; without script, a line
 * and the Continue button do it. `form-action` allows this origin and the form's target origin only.
 * A refusal is the hosted error page in the reader's language (`saml.refused.<reason>`, with the
 * reason as its code), status 400, never a redirect or a POST to where the message said.
 */
import type { FastifyReply } from 'fastify';
import type { Application } from '../db/schema.js';
import { pageText } from '../i18n/index.js';
import { renderPage } from '../pages/render.js';
import { pageBrand } from '../pages/brand.js';
import { sendErrorPage } from '../oauth/error-page.js';
import type { SamlRefusal } from './refusal.js';

/** The auto-submitting form posting `params` (those with a value) to `action`. */
export function sendPostForm(
  reply: FastifyReply,
  app: Application | undefined,
  action: string,
  params: Record<string, string | undefined>,
  text?: { title: string; manual: string },
): FastifyReply {
  const { t } = pageText(reply.server.ctx.config, reply.request);
  const fields = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return renderPage(reply.status(200).header('pragma', 'no-cache'), 'saml-post', {
    title: text?.title ?? t('formPost.title'),
    manual: text?.manual ?? t('formPost.manual'),
    action,
    fields,
  }, { brand: pageBrand(app), pageModule: true, formActionSources: [new URL(action).origin], here: '/account' });
}

/** The hosted error page for a refusal: 400, the reason as its code, the sentence in the reader's words. */
export function sendRefusal(reply: FastifyReply, refusal: SamlRefusal, app?: Application): FastifyReply {
  const { t } = pageText(reply.server.ctx.config, reply.request);
  return sendErrorPage(reply, 400, refusal.reason, t(`saml.refused.${refusal.reason}`), app);
}
