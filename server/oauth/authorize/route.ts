/**
 * `GET|POST /api/auth/oauth2/authorize` (RFC 6749 §4.1, OIDC Core §3.1.2, RFC 9207, DESIGN §4.8/4.10).
 *
 * 1. Unknown client or a `redirect_uri` that is missing or not registered → HTML error page,
 *    never a redirect.
 * 2. Every other error → 302 to the redirect URI with `error`, `error_description`, `state`, `iss`
 *    (or, with `response_mode=form_post`, the form-post page carrying them: response-mode.ts).
 * 3. Silent only when the session has authenticated the application's realm (its SSO group or
 *    itself) recently enough for `max_age` and `prompt` is not `login`; otherwise `prompt=none`
 *    answers `login_required` and anything else goes to the hosted sign-in page, which comes
 *    back here (without `prompt`/`max_age`, so the fresh sign-in is not asked for again).
 * 4. An application that requires MFA, or `acr_values=urn:gatehouse:acr:mfa`, needs a multi-factor
 *    session: a password-only one goes through the second step (step-up, or enrolment when the
 *    person has no second factor) and comes back; `prompt=none` answers `interaction_required`.
 * 5. Membership is settled by the application's sign-up policy. A person it refuses (suspended,
 *    not invited) sees our own page naming the application and the reason, with "Use another
 *    account" and a link back that carries `access_denied` to the redirect URI (issue 25);
 *    `prompt=none` gets that redirect at once.
 * 6. An application with explicit consent sends the person to the consent page first when the
 *    scopes are not all approved (or `prompt=consent`); `prompt=none` answers `consent_required`.
 * Then a code is issued. Steps 3 to 5 are `admit` (admission.ts), shared with the device page.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { matchesRedirectUri } from '../../applications/redirect-uris.js';
import { admit } from './admission.js';
import { findClient } from '../client-auth.js';
import { OAuthError } from '../errors.js';
import { errorPageHandler, sendErrorPage } from '../error-page.js';
import { param, type RawParams } from '../params.js';
import { parseAuthorizeRequest } from './request.js';
import { ReauthDemands } from './reauth.js';
import { redirectToStepUp } from '../../accounts/second-factor/flow.js';
import { pageText } from '../../i18n/index.js';
import { CONSENT_PAGE, consentNeeded } from '../consent.js';
import { responseModeOf, sendAuthorizationResponse, type ResponseMode } from './response-mode.js';
import { refusedPage } from '../refused-page.js';
import { flowQuery } from '../../pages/sign-in-pages.js';
import type { Application } from '../../db/schema.js';
import { promptValues } from './request.js';
import { codeStoreOf, type NewCode } from './code.js';
import { issueStoredCode } from './code-table.js';
import { engineOf } from '../../db/store.js';

export const AUTHORIZE_PATH = '/api/auth/oauth2/authorize';

/**
 * This request again, minus what a hosted page satisfies: the sign-in page takes away `max_age` and
 * the `prompt` values it answers (`login`, `select_account`; `consent` stays for the consent page),
 * the consent page takes away `consent`. It comes back as a GET, also when the request was a POST:
 * the same parameters either way.
 */
function resumeUrl(params: RawParams, drop: string[] = [], satisfiedPrompts: string[] = []): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (drop.includes(name)) continue;
    for (const one of Array.isArray(value) ? value : [value]) {
      if (typeof one !== 'string') continue;
      if (name === 'prompt') {
        const left = [...promptValues(one)].filter((p) => !satisfiedPrompts.includes(p));
        if (left.length) query.append(name, left.join(' '));
      } else query.append(name, one);
    }
  }
  return `${AUTHORIZE_PATH}?${query.toString()}`;
}

/** The hosted sign-in page for this request (`extra`: e.g. `switch` to sign in as someone else). */
function signInUrl(client: Application, params: RawParams, extra: Record<string, string> = {}): string {
  return `/sign-in?${flowQuery(client, resumeUrl(params, ['max_age'], ['login', 'select_account', 'none']), extra)}`;
}

function toSignIn(reply: FastifyReply, client: Application, params: RawParams) {
  return reply.header('cache-control', 'no-store').redirect(signInUrl(client, params), 302);
}

function single(query: RawParams, name: string): string | undefined {
  try {
    return param(query, name);
  } catch {
    return undefined;
  }
}

export const authorizeRoutes: FastifyPluginAsync = async (app) => {
  const { ctx } = app;
  const demands = new ReauthDemands();

  // GET, and POST with a form body, which OIDC Core §3.1.2.1 requires as well.
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const query = ((request.method === 'POST' ? request.body : request.query) ?? {}) as RawParams;

    const clientId = single(query, 'client_id');
    const client = clientId === undefined ? undefined : await findClient(ctx, clientId);
    const { t } = pageText(ctx.config, request);
    if (!client) return sendErrorPage(reply, 400, 'invalid_client', t('oauthError.unknownClient'));
    const redirectUri = single(query, 'redirect_uri');
    if (redirectUri === undefined || !matchesRedirectUri(client.redirectUris, redirectUri, client.clientType)) {
      return sendErrorPage(reply, 400, 'invalid_redirect_uri', t('oauthError.badRedirect', { app: client.name }), client);
    }

    // A repeated `state` cannot be echoed (which one?), so the error answer goes without it.
    const state = single(query, 'state');
    let mode: ResponseMode = 'query';
    const answer = (params: Record<string, string | undefined>) =>
      sendAuthorizationResponse(reply, mode, redirectUri, { ...params, state, iss: ctx.config.issuer });

    try {
      // First: the errors after it go back in the mode asked for (a bad mode itself, in the query).
      mode = responseModeOf(query, redirectUri);
      param(query, 'state'); // invalid_request when repeated
      const req = parseAuthorizeRequest(client, query);
      const now = ctx.clock.now();
      const tooOld = (authTime: Date) => req.maxAgeSeconds !== undefined && now.getTime() - authTime.getTime() > req.maxAgeSeconds * 1000;
      // A fresh sign-in this request (or its earlier round) demanded, and the realm has not had yet.
      const pending = { clientId: client.id, redirectUri, state, nonce: req.nonce ?? undefined, codeChallenge: req.codeChallenge ?? undefined };
      const stale = (authTime: Date) => !demands.satisfied(pending, authTime.getTime(), now.getTime());
      const admission = await admit(ctx, request, client, (authTime) => !tooOld(authTime) && req.prompt !== 'login' && !stale(authTime), req.mfaRequested);
      if (admission.kind === 'sign_in') {
        if (req.prompt === 'none') throw new OAuthError('login_required', 'The person must sign in to this application.');
        const { found, authTime } = admission;
        if (found && ((authTime !== undefined && tooOld(authTime)) || req.prompt === 'login')) demands.demand(pending, now.getTime());
        return toSignIn(reply, client, query);
      }
      if (admission.kind === 'second_factor') {
        // Step-up (spec second-factor.md, "Tokens"): the second factor (or enrolling one), no password again.
        if (req.prompt === 'none') throw new OAuthError('interaction_required', 'The person must confirm a second factor for this application.');
        return redirectToStepUp(ctx, request, reply, admission, client, resumeUrl(query));
      }
      if (admission.kind === 'denied') {
        if (req.prompt === 'none') throw new OAuthError('access_denied', admission.description);
        const back = { mode, redirectUri, params: { error: 'access_denied', error_description: admission.description, state, iss: ctx.config.issuer } };
        return refusedPage(ctx, request, reply, client, admission, back, signInUrl(client, query, { switch: '1' }));
      }
      const { person, session, authTime, membership } = admission;
      if (await consentNeeded(ctx, client, membership, req.scope, req.consentDemanded)) {
        if (req.prompt === 'none') throw new OAuthError('consent_required', 'The person must approve what this application asks for.');
        const target = `${CONSENT_PAGE}?${new URLSearchParams({ return_to: resumeUrl(query, ['max_age'], ['login', 'select_account', 'consent']) }).toString()}`;
        return reply.header('cache-control', 'no-store').redirect(target, 302);
      }

      const issued: NewCode = {
        applicationId: client.id,
        personId: person.id,
        membershipId: membership.id,
        sessionId: session.id,
        redirectUri,
        scope: req.scope,
        resource: req.resource,
        codeChallenge: req.codeChallenge,
        nonce: req.nonce,
        authTime,
      };
      // PostgreSQL: the exchange may reach another instance, so codes live in the database (code-table.ts).
      const code = engineOf(ctx.db) === 'postgres' ? await issueStoredCode(ctx.db, issued, now) : codeStoreOf(ctx).issue(issued, now);
      demands.settle(pending);
      return answer({ code });
    } catch (error) {
      if (error instanceof OAuthError) return answer({ error: error.error, error_description: error.description });
      throw error;
    }
  };
  app.get(AUTHORIZE_PATH, { schema: { hide: true }, errorHandler: errorPageHandler }, handler);
  app.post(AUTHORIZE_PATH, { schema: { hide: true }, errorHandler: errorPageHandler }, handler);
};
