/**
 * Signing in with an external provider (DESIGN §4.9), as hosted pages (errors are HTML pages):
 *
 * - `GET /api/auth/sign-in/:provider?client_id=&return_to=` — the provider must be configured
 *   and allowed by the application; stores the login (state, PKCE verifier, nonce; 10 minutes),
 *   binds it to this browser with a cookie, and redirects to the provider.
 * - `GET /api/auth/callback/:provider` — takes the login (single use, same browser), exchanges
 *   the code, then signs in, creates the person, or asks for proof before linking (service.ts).
 * - `POST /account/link/:provider` — a signed-in person starts linking a provider; without a
 *   sign-in in the last 10 minutes they are sent through one first (pages/page-scope.ts).
 * - `GET|POST /link-account` — "prove this account is yours": its password, or another provider
 *   already linked to it; success links the identity and carries on where the login was going.
 */
import { pageText } from '../../i18n/index.js';
import { problemText } from '../../pages/text.js';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext, FeatureOptions } from '../../context.js';
import { findPersonRow } from '../../people/queries.js';
import { Problem, notFound, unauthorized } from '../../http/problem.js';
import { PROVIDERS, isConfigured, providerName } from '../../applications/providers.js';
import { preparePageScope } from '../../pages/page-scope.js';
import { renderPage } from '../../pages/render.js';
import { linkedProviderLinks, pageApplication, redirectSources, safeReturnTo } from '../../pages/sign-in-pages.js';
import { checkFormToken, formToken } from '../csrf.js';
import { authRateLimits } from '../rate-limits.js';
import { clientInfo, sendSessionCookie } from '../routes.js';
import { readSession, requireRecentSignIn } from '../session.js';
import { needsSecondFactor, secondStepFor, signInWithEmail, type SignInOutcome } from '../sign-in.js';
import { redirectToSecondStep } from '../second-factor/pending.js';
import { callbackUri, providerClient } from './clients.js';
import { loginExpired } from './errors.js';
import {
  beginLogin,
  clearLoginCookie,
  loginCookie,
  loginSecrets,
  pendingLink,
  setLoginCookie,
  takeLogin,
  type NewLogin,
} from './logins.js';
import { completeLogin, loginApplication } from './service.js';
import { finishLinkIfPending } from './link-on-sign-in.js';

const short = (max: number) => Type.Optional(Type.String({ maxLength: max }));
const ProviderParams = Type.Object({ provider: Type.String({ maxLength: 64 }) });
const StartQuery = Type.Object({ client_id: short(200), return_to: short(4000) }, { additionalProperties: false });
const CsrfForm = Type.Object({ csrf_token: short(200) }, { additionalProperties: false });
const ProofForm = Type.Object({ csrf_token: short(200), password: short(256) }, { additionalProperties: false });

/** An external provider that is configured on this server, with its display name. */
export function configuredProvider(ctx: AppContext, id: string): { id: string; name: string } {
  const provider = PROVIDERS.find((p) => p.id === id && p.id !== 'email');
  if (!provider) throw notFound('provider_not_found', 'There is no such sign-in provider.');
  const name = providerName(id, ctx.config.env);
  if (!isConfigured(provider, ctx.config.env)) {
    throw notFound('provider_not_configured', `Signing in with ${name} is not set up on this server.`);
  }
  return { id, name };
}

/** One value of a callback parameter; providers may add parameters of their own, which are ignored. */
function queryValue(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown>)[name];
  return typeof value === 'string' && value !== '' && value.length <= 4000 ? value : undefined;
}

/** The provider's own `error` answer (RFC 6749 §4.1.2.1) as a page; its free text is never echoed. */
function upstreamError(providerName: string, error: string): Problem {
  if (error === 'access_denied') return new Problem(403, 'provider_denied', `${providerName} did not let you sign in (access was denied or cancelled).`);
  const code = /^[a-z_]{1,64}$/.test(error) ? ` (${error})` : '';
  return new Problem(400, 'provider_error', `${providerName} refused the sign-in${code}. Please start again.`);
}

/** Starts a login and sends the browser to the provider (or hands back the URL for a page). */
async function startLogin(ctx: AppContext, reply: FastifyReply, provider: { id: string; name: string }, login: Omit<NewLogin, 'provider'>) {
  const secrets = loginSecrets();
  const url = await providerClient(ctx.config, provider.id, provider.name).authorizationUrl(secrets);
  await beginLogin(ctx, { ...login, provider: provider.id }, secrets);
  setLoginCookie(reply, ctx.config, 'gatehouse_provider_login', secrets.state);
  reply.header('cache-control', 'no-store');
  return url.href;
}

/** Logs why a provider step failed (the page only says that it did). */
async function logged<T>(request: FastifyRequest, provider: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof Problem && error.code === 'provider_failed') {
      request.log.warn({ provider, reason: String(error.cause) }, 'external sign-in failed');
    }
    throw error;
  }
}

type Pending = NonNullable<Awaited<ReturnType<typeof pendingLink>>>;

async function showProofPage(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, pending: Pending, error?: string) {
  const person = await findPersonRow(ctx.db, pending.linkPersonId);
  if (!person) throw loginExpired();
  const name = providerName(pending.provider, ctx.config.env);
  const app = pending.applicationId ? await pageApplication(ctx, pending.applicationId) : undefined;
  return renderPage(reply, 'link-account', {
    title: pageText(ctx.config, request).t('link.title', { provider: name }),
    providerName: name,
    email: person.email,
    hasPassword: Boolean(person.passwordHash),
    // Ways to prove it other than the password: the person's other configured providers.
    providers: (await linkedProviderLinks(ctx, person.id)).filter((p) => p.id !== pending.provider),
    csrfToken: formToken(ctx.config, request, reply),
    error,
  }, { formActionSources: redirectSources(ctx, app) });
}

const providerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;
  const limits = authRateLimits(ctx.config);
  await preparePageScope(app);

  app.get(
    '/api/auth/sign-in/:provider',
    { config: { rateLimit: limits.providerSignIn }, schema: { hide: true, params: ProviderParams, querystring: StartQuery } },
    async (request, reply) => {
      const provider = configuredProvider(ctx, request.params.provider);
      const target = await pageApplication(ctx, request.query.client_id);
      if (target) await loginApplication(ctx, target.id, provider.id, provider.name);
      const url = await logged(request, provider.id, () =>
        startLogin(ctx, reply, provider, { applicationId: target?.id ?? null, returnTo: safeReturnTo(ctx, request.query.return_to), linkPersonId: null }),
      );
      return reply.redirect(url, 302);
    },
  );

  app.get(
    '/api/auth/callback/:provider',
    { config: { rateLimit: limits.providerSignIn }, schema: { hide: true, params: ProviderParams } },
    async (request, reply) => {
      const provider = configuredProvider(ctx, request.params.provider);
      const state = queryValue(request.query, 'state');
      if (!state) throw loginExpired();
      const login = await takeLogin(ctx, provider.id, state, loginCookie(ctx.config, request, 'gatehouse_provider_login'));
      clearLoginCookie(reply, ctx.config, 'gatehouse_provider_login');
      const error = queryValue(request.query, 'error');
      if (error) throw upstreamError(provider.name, error);

      const query = request.url.slice(request.url.indexOf('?'));
      const callbackUrl = new URL(`${callbackUri(ctx.config, provider.id)}${query}`);
      const secrets = { state, codeVerifier: login.codeVerifier, nonce: login.nonce ?? '' };
      const identity = await logged(request, provider.id, async () =>
        providerClient(ctx.config, provider.id, provider.name).identity(callbackUrl, secrets),
      );

      const current = await readSession(ctx, request);
      const outcome = await completeLogin(ctx, login, identity, provider.name, { ...clientInfo(ctx, request), personId: current?.person.id });
      reply.header('cache-control', 'no-store');
      switch (outcome.kind) {
        case 'linked':
          return reply.redirect('/account?notice=account_linked', 303);
        case 'needs_proof':
          setLoginCookie(reply, ctx.config, 'gatehouse_link_pending', outcome.secret);
          return reply.redirect('/link-account', 303);
        case 'second_factor': {
          const returnTo = outcome.returnTo;
          const needed = (await secondStepFor(ctx, request, outcome.person, outcome.app, ['fed'], {
            next: returnTo,
            // Signing in with another linked provider proves a pending link, once the second step is done too.
            finishLink: true,
          }))!;
          return redirectToSecondStep(reply, ctx.config, needed);
        }
        case 'signed_in': {
          await sendSessionCookie(ctx, reply, outcome.signedIn);
          // Signing in with another linked provider is one way to prove a pending link.
          return reply.redirect(await finishLinkIfPending(ctx, request, reply, outcome.signedIn, outcome.returnTo), 303);
        }
      }
    },
  );

  app.post(
    '/account/link/:provider',
    { schema: { hide: true, params: ProviderParams, body: CsrfForm } },
    async (request, reply) => {
      checkFormToken(ctx.config, request, request.body.csrf_token);
      const me = await readSession(ctx, request);
      if (!me) throw unauthorized('Sign in first, then link a provider from your account page.', 'unauthorized', 'Cookie');
      // Checked once here: the login it starts is bound to this browser and lives 10 minutes.
      await requireRecentSignIn(ctx, me.session.id);
      const provider = configuredProvider(ctx, request.params.provider);
      const url = await logged(request, provider.id, () =>
        startLogin(ctx, reply, provider, { applicationId: null, returnTo: '/account', linkPersonId: me.person.id }),
      );
      // A page that moves on by itself rather than a redirect: browsers apply the account page's
      // CSP `form-action 'self'` to every redirect after a form post, which would block the provider.
      return renderPage(reply, 'continue', { title: pageText(ctx.config, request).t('continue.title', { provider: provider.name }), providerName: provider.name, href: url, refresh: url });
    },
  );

  app.get('/link-account', { schema: { hide: true } }, async (request, reply) => {
    const pending = await pendingLink(ctx, loginCookie(ctx.config, request, 'gatehouse_link_pending'));
    if (!pending) throw loginExpired();
    return showProofPage(ctx, request, reply, pending);
  });

  app.post(
    '/link-account',
    { config: { rateLimit: limits.signIn }, schema: { hide: true, body: ProofForm } },
    async (request, reply) => {
      checkFormToken(ctx.config, request, request.body.csrf_token);
      const pending = await pendingLink(ctx, loginCookie(ctx.config, request, 'gatehouse_link_pending'));
      if (!pending) throw loginExpired();
      const person = await findPersonRow(ctx.db, pending.linkPersonId);
      if (!person) throw loginExpired();
      let signedIn: SignInOutcome;
      try {
        signedIn = await signInWithEmail(ctx, { email: person.email, password: request.body.password ?? '' }, clientInfo(ctx, request), request, {
          next: '/account',
          // A person with a second factor proves the account with both steps; the link follows the second.
          finishLink: true,
        });
      } catch (error) {
        if (!(error instanceof Problem)) throw error;
        for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
        const { locale, t } = pageText(ctx.config, request);
        return showProofPage(ctx, request, reply.status(error.status), pending, problemText(t, locale, error));
      }
      if (needsSecondFactor(signedIn)) return redirectToSecondStep(reply, ctx.config, signedIn);
      await sendSessionCookie(ctx, reply, signedIn);
      return reply.redirect(await finishLinkIfPending(ctx, request, reply, signedIn, '/account'), 303);
    },
  );
};

/** The feature plugin: external sign-in routes in their own hosted-page scope. */
export const providersFeature: FastifyPluginAsync<FeatureOptions> = async (app) => {
  await app.register(providerRoutes);
};
