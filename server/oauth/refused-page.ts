/**
 * "Access refused" (issue 25, item 2): a signed-in person the application does not admit (their
 * membership is suspended, its sign-up policy does not let them join, or its group rule keeps
 * them out) is told so on our own page, naming the application and the rule that refused, instead of being bounced to the application with a
 * bare `error=access_denied`. The page offers "Use another account" and a link back to the
 * application that carries the OAuth error to its registered redirect URI (with `state` and `iss`),
 * so the application still learns the outcome when the person goes back. With
 * `response_mode=form_post` that way back is a form posting those parameters (response-mode.ts),
 * and the page's CSP lets it reach the redirect URI's origin.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { Application, Person } from '../db/schema.js';
import { REFUSAL_MESSAGE_KEY, type RefusalReason } from '../accounts/membership.js';
import { pageText } from '../i18n/index.js';
import { renderPage } from '../pages/render.js';
import { pageBrand } from '../pages/brand.js';
import { responseFields, type AuthorizationResponse } from './authorize/response-mode.js';
import { responseUrl } from './authorize/response-url.js';

export function refusedPage(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  app: Application,
  refusal: { reason: RefusalReason; person: Person },
  back: AuthorizationResponse,
  switchHref: string,
): FastifyReply {
  const { t } = pageText(ctx.config, request);
  const post = back.mode === 'form_post';
  return renderPage(reply.status(403), 'refused', {
    title: t('refused.title', { app: app.name }),
    appName: app.name,
    reason: refusal.reason,
    message: t(REFUSAL_MESSAGE_KEY[refusal.reason], { app: app.name }),
    email: refusal.person.email,
    backHref: post ? undefined : responseUrl(back.redirectUri, back.params),
    backForm: post ? { action: back.redirectUri, fields: responseFields(back.params) } : undefined,
    switchHref,
  }, { brand: pageBrand(app), here: switchHref, formActionSources: post ? [new URL(back.redirectUri).origin] : [] });
}
