/**
 * `GET|POST /api/auth/oauth2/end-session` (OIDC RP-Initiated Logout 1.0).
 * - `post_logout_redirect_uri` is honoured only when registered for the client (one of its
 *   `postLogoutRedirectUris`, or of its redirect URIs while that list is not set), the client being
 *   named by `client_id` or by the `id_token_hint`'s audience; otherwise an error page, never a redirect.
 * - `id_token_hint` must be an ID token we signed (expired is fine: it is only a hint).
 * - The session ends at once only when the hint was issued in this very session (its `sid`), or
 *   when the person confirms on our page (a form with the CSRF token). Without that, any site
 *   could sign a person out with a link (§2: the OP should ask); the page asks instead. With no
 *   live session there is nothing to end and the request completes at once.
 * - Ending it revokes the refresh tokens issued under it and clears the cookie; then 302 to the
 *   redirect URI with `state`, or a "signed out" page.
 */
import { compactVerify } from 'jose';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { clearSessionCookie, endSession, frontChannelLogout, readSession } from '../accounts/session.js';
import { checkFormToken, formToken } from '../accounts/csrf.js';
import { renderPage } from '../pages/render.js';
import { redirectSources } from '../pages/sign-in-pages.js';
import { errorPageHandler, sendErrorPage } from './error-page.js';
import { pageText } from '../i18n/index.js';
import { pageBrand } from '../pages/brand.js';
import type { Application } from '../db/schema.js';
import { findClient } from './client-auth.js';
import { matchesRedirectUri } from '../applications/redirect-uris.js';
import type { KeyRing } from './keys.js';
import { ID_TOKEN_TYP } from './jwt.js';
import { SIGNING_ALGS } from './signing-algorithms.js';
import { param, type RawParams } from './params.js';
import { transaction } from '../db/store.js';

interface Hint {
  clientId: string | undefined;
  sessionId: string | undefined;
}

async function readHint(keys: KeyRing, issuer: string, hint: string): Promise<Hint | undefined> {
  try {
    const { payload, protectedHeader } = await compactVerify(hint, keys.verificationKey, { algorithms: [...SIGNING_ALGS] });
    // Only an ID token is a hint: an access token also carries `sid`, and anyone it was sent to
    // (an API) could otherwise build a link that signs its holder out without asking.
    if (protectedHeader.typ !== ID_TOKEN_TYP) return undefined;
    const claims = JSON.parse(new TextDecoder().decode(payload)) as { iss?: string; aud?: unknown; sid?: unknown };
    if (claims.iss !== issuer) return undefined;
    const clientId = typeof claims.aud === 'string' ? claims.aud : Array.isArray(claims.aud) ? String(claims.aud[0]) : undefined;
    if (!clientId) return undefined;
    return { clientId, sessionId: typeof claims.sid === 'string' ? claims.sid : undefined };
  } catch {
    return undefined;
  }
}

function signedOutPage(reply: FastifyReply, app: Application | undefined) {
  const { t } = pageText(reply.server.ctx.config, reply.request);
  return renderPage(reply.status(200), 'signed-out', { title: t('signedOut.title'), appName: app?.name }, { brand: pageBrand(app), here: '/account' });
}

export const endSessionRoutes: FastifyPluginAsync<{ keys: KeyRing }> = async (app, { keys }) => {
  const { ctx } = app;

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const { t } = pageText(ctx.config, request);
    const params = (request.method === 'POST' ? request.body : request.query) as RawParams | undefined;
    let clientId: string | undefined;
    let redirect: string | undefined;
    let state: string | undefined;
    let hint: string | undefined;
    try {
      clientId = param(params, 'client_id');
      redirect = param(params, 'post_logout_redirect_uri');
      state = param(params, 'state');
      hint = param(params, 'id_token_hint');
    } catch {
      return sendErrorPage(reply, 400, 'invalid_request', t('oauthError.repeated'));
    }
    let hinted: Hint | undefined;
    if (hint !== undefined) {
      hinted = await readHint(keys, ctx.config.issuer, hint);
      if (!hinted) return sendErrorPage(reply, 400, 'invalid_request', t('oauthError.badHint'));
      if (clientId !== undefined && clientId !== hinted.clientId) {
        return sendErrorPage(reply, 400, 'invalid_request', t('oauthError.hintMismatch'));
      }
      clientId = hinted.clientId;
    }
    const client = clientId === undefined ? undefined : await findClient(ctx, clientId);
    if (clientId !== undefined && !client) return sendErrorPage(reply, 400, 'invalid_client', t('oauthError.unknownApp'));
    // Matched like the authorize redirect_uri: exactly, or a native client's loopback on any port.
    if (redirect !== undefined && (!client || !matchesRedirectUri(client.postLogoutRedirectUris ?? client.redirectUris, redirect, client.clientType))) {
      return sendErrorPage(reply, 400, 'invalid_request', t('oauthError.badLogoutRedirect'), client);
    }

    const found = await readSession(ctx, request);
    if (found && hinted?.sessionId !== found.session.id) {
      const submitted = request.method === 'POST' ? param(params, 'csrf_token') : undefined;
      if (submitted === undefined) {
        return renderPage(reply, 'sign-out', {
          title: t('signOut.title'), appName: client?.name, clientId: client?.id, redirect, state,
          csrfToken: formToken(ctx.config, request, reply),
        }, { formActionSources: redirect ? redirectSources(ctx, client) : [], brand: pageBrand(client), here: '/account' });
      }
      checkFormToken(ctx.config, request, submitted);
    }
    if (found) {
      const now = ctx.clock.now();
      await transaction(ctx.db, async (tx) => endSession(ctx, tx, now, found.session.id, 'end_session'));
    }
    clearSessionCookie(reply, ctx.config);

    let next: string | undefined;
    if (redirect !== undefined) {
      const url = new URL(redirect);
      if (state !== undefined) url.searchParams.set('state', state);
      next = url.toString();
    }
    // The sign-in's other sessions that end through the browser (SAML single logout) come first.
    const handed = found ? await frontChannelLogout(ctx, request, reply, { sessionIds: [found.session.id], next, application: client }) : undefined;
    if (handed) return handed;
    if (next === undefined) return signedOutPage(reply, client);
    return reply.header('cache-control', 'no-store').redirect(next, 302);
  };

  app.get('/api/auth/oauth2/end-session', { schema: { hide: true }, errorHandler: errorPageHandler }, handler);
  app.post('/api/auth/oauth2/end-session', { schema: { hide: true }, errorHandler: errorPageHandler }, handler);
};
