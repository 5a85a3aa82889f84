/**
 * The hosted consent page `/consent` (issue 25, item 17) for applications whose consent policy is
 * `explicit` (consent.ts). The authorize endpoint sends the person here with the request to resume
 * (`return_to`); the page names the application and what it asks for in words, and the person
 * allows (the approval is recorded, and the request resumes, now passing) or denies (the browser
 * goes to the registered redirect URI with `access_denied`, `state` and `iss`, in the request's
 * response mode: a redirect, or the form-post page).
 *
 * The request is re-read from `return_to` and checked as authorize checks it (known client, a
 * registered redirect URI, supported scopes), so the page can only ever send the browser where
 * authorize itself would. Who approves is decided by `admit`: without a signed-in, admitted
 * person the request simply resumes and authorize sends them through sign-in first.
 *
 * A plugin's browser flow asks here too (plugin-api/registries.ts `browserFlows`: forward auth's
 * hand-over, forward-auth/consent-request.ts): `return_to` is then its
 * start, the application the one protecting the site, and a denial ends on the error page (there
 * is no redirect URI to tell).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import type { Application } from '../db/schema.js';
import { checkFormToken, formToken } from '../accounts/csrf.js';
import { matchesRedirectUri } from '../applications/redirect-uris.js';
import { recordAudit } from '../audit/record.js';
import { pageText } from '../i18n/index.js';
import { preparePageScope } from '../pages/page-scope.js';
import { renderPage } from '../pages/render.js';
import { pageBrand } from '../pages/brand.js';
import { scopeWords } from '../pages/scope-words.js';
import { flowQuery, redirectSources, safeReturnTo } from '../pages/sign-in-pages.js';
import { admit } from './authorize/admission.js';
import { findClient } from './client-auth.js';
import { CONSENT_PAGE, grantConsent } from './consent.js';
import { responseModeOf, sendAuthorizationResponse, type ResponseMode } from './authorize/response-mode.js';
import { sendErrorPage } from './error-page.js';
import { parseScope } from './scopes.js';

const AUTHORIZE_PREFIX = '/api/auth/oauth2/authorize?';

const short = (max: number) => Type.Optional(Type.String({ maxLength: max }));
const Query = Type.Object({ return_to: short(4000) }, { additionalProperties: false });
const Form = Type.Object(
  { csrf_token: short(200), return_to: short(4000), decision: Type.Optional(Type.Union([Type.Literal('approve'), Type.Literal('deny')])) },
  { additionalProperties: false },
);

interface Asked {
  client: Application;
  redirectUri: string;
  scope: string;
  state: string | undefined;
  mode: ResponseMode;
  returnTo: string;
  /** A plugin's browser flow (forward auth's hand-over), not an authorization request. */
  forward?: boolean;
}

/** The authorization request behind `return_to`, checked as authorize checks it; undefined when it is not one. */
async function askedBy(ctx: AppContext, raw: string | undefined): Promise<Asked | undefined> {
  const returnTo = safeReturnTo(ctx, raw);
  for (const flow of ctx.registries.browserFlows.all) {
    const asked = returnTo.startsWith(flow.resumePrefix) ? await flow.consentRequest?.(returnTo) : undefined;
    if (asked) return { ...asked, redirectUri: '', state: undefined, mode: 'query', returnTo, forward: true };
  }
  if (!returnTo.startsWith(AUTHORIZE_PREFIX)) return undefined;
  const params = new URLSearchParams(returnTo.slice(AUTHORIZE_PREFIX.length));
  const client = await findClient(ctx, params.get('client_id') ?? '');
  const redirectUri = params.get('redirect_uri');
  if (!client || !redirectUri || !matchesRedirectUri(client.redirectUris, redirectUri, client.clientType)) return undefined;
  let scope: string;
  let mode: ResponseMode;
  try {
    scope = parseScope(params.get('scope') ?? undefined, client.unknownScopes).join(' ');
    mode = responseModeOf(Object.fromEntries(params), redirectUri);
  } catch {
    return undefined;
  }
  return { client, redirectUri, scope, state: params.get('state') ?? undefined, mode, returnTo };
}

export const consentPageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  await preparePageScope(app);

  const notARequest = (request: FastifyRequest, reply: FastifyReply) =>
    sendErrorPage(reply, 400, 'invalid_request', pageText(ctx.config, request).t('oauthError.invalidRequest'));
  const resume = (reply: FastifyReply, asked: Asked) => reply.header('cache-control', 'no-store').redirect(asked.returnTo, 303);

  app.get(CONSENT_PAGE, { schema: { hide: true, querystring: Query } }, async (request, reply) => {
    const asked = await askedBy(ctx, request.query.return_to);
    if (!asked) return notARequest(request, reply);
    const admission = await admit(ctx, request, asked.client);
    if (admission.kind !== 'admitted') return resume(reply, asked);
    const { t } = pageText(ctx.config, request);
    const { client } = asked;
    return renderPage(reply, 'consent', {
      title: t('consent.title', { app: client.name }),
      appName: client.name,
      who: admission.person.name ?? admission.person.email,
      email: admission.person.email,
      asks: scopeWords(t, asked.scope),
      returnTo: asked.returnTo,
      csrfToken: formToken(ctx.config, request, reply),
      switchHref: `/sign-in?${flowQuery(client, asked.returnTo, { switch: '1' })}`,
    }, { formActionSources: redirectSources(ctx, client), brand: pageBrand(client), here: `${CONSENT_PAGE}?${new URLSearchParams({ return_to: asked.returnTo }).toString()}` });
  });

  app.post(CONSENT_PAGE, { schema: { hide: true, body: Form } }, async (request, reply) => {
    checkFormToken(ctx.config, request, request.body.csrf_token);
    const asked = await askedBy(ctx, request.body.return_to);
    if (!asked) return notARequest(request, reply);
    const admission = await admit(ctx, request, asked.client);
    if (admission.kind !== 'admitted') return resume(reply, asked);
    if (request.body.decision === 'approve') {
      await grantConsent(ctx, asked.client, admission.membership, asked.scope);
      return resume(reply, asked);
    }
    const now = ctx.clock.now();
    await recordAudit(ctx.db, now, {
      actor: `person:${admission.person.id}`, action: 'consent.denied', applicationId: asked.client.id, target: admission.membership.id, details: { scope: asked.scope },
    });
    if (asked.forward) return sendErrorPage(reply, 403, 'access_denied', pageText(ctx.config, request).t('consent.denied'), asked.client);
    const denied = { error: 'access_denied', error_description: 'The person did not allow access.', state: asked.state, iss: ctx.config.issuer };
    return sendAuthorizationResponse(reply, asked.mode, asked.redirectUri, denied, 303);
  });
};
