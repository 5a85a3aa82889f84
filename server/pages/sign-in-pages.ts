/**
 * View models of the hosted sign-in and sign-up pages: which application is asking, which of its
 * allowed providers are configured, whether sign-up is open, and where to go afterwards.
 * `return_to` may only resume an authorization request on this server; anything else goes to
 * the account page, so the pages can never be used as an open redirect.
 */
import { eq } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { Config } from '../config.js';
import { linkedAccounts, type Application } from '../db/schema.js';
import { badRequest } from '../http/problem.js';
import { PROVIDERS, isConfigured, providerName } from '../applications/providers.js';
import { many } from '../db/store.js';
import { isReturnToText } from './return-to.js';
import { findApplication } from '../applications/lookup.js';

/**
 * What a sign-in may resume: an authorization request, the device page (RFC 8628) with its code,
 * or a plugin's browser flow (plugin-api/registries.ts `browserFlows`: forward auth's hand-over to
 * a protected site, server/forward-auth/start-route.ts).
 */
export const RESUME_PREFIXES = ['/api/auth/oauth2/authorize?', '/device?'];

/** What the pages need of the app context: the plugins' browser flows. */
type Flows = Pick<AppContext, 'registries'>;
export const DEFAULT_RETURN_TO = '/account';

/**
 * `raw` when it resumes an authorization request or the device page here, else the account page.
 * Only text a `Location` header carries as it is passes (return-to.ts, the rule the panel's own
 * sign-in shares); the authorize endpoint itself only ever sends it percent-encoded.
 */
export function safeReturnTo(ctx: Flows, raw: string | undefined): string {
  if (!isReturnToText(raw)) return DEFAULT_RETURN_TO;
  if (RESUME_PREFIXES.some((p) => raw.startsWith(p)) || ctx.registries.browserFlows.all.some((flow) => raw.startsWith(flow.resumePrefix))) return raw;
  return DEFAULT_RETURN_TO;
}

/** The application named by `client_id`, or undefined when none was given; 400 when unknown. */
export async function pageApplication(ctx: AppContext, clientId: string | undefined): Promise<Application | undefined> {
  if (!clientId) return undefined;
  const app = await findApplication(ctx.db, clientId);
  if (!app) throw badRequest('unknown_application', 'The application that sent you here is not known to this server.');
  return app;
}

/** Query string carrying the flow to a sibling page. */
export function flowQuery(app: Application | undefined, returnTo: string, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  if (app) params.set('client_id', app.id);
  params.set('return_to', returnTo);
  for (const [k, v] of Object.entries(extra)) params.set(k, v);
  return params.toString();
}

export const emailAllowed = (app: Application | undefined) => !app || app.authPolicy.allowed_providers.includes('email');
export const signUpOpen = (app: Application | undefined) =>
  Boolean(app && app.authPolicy.signup_policy === 'open' && emailAllowed(app));

/** External providers the application allows and this server has credentials for. */
export function providerLinks(ctx: AppContext, app: Application | undefined, returnTo: string) {
  if (!app) return [];
  return app.authPolicy.allowed_providers.flatMap((id) => {
    const provider = PROVIDERS.find((p) => p.id === id);
    if (!provider || id === 'email' || !isConfigured(provider, ctx.config.env)) return [];
    return [{ id, name: providerName(id, ctx.config.env), href: `/api/auth/sign-in/${id}?${flowQuery(app, returnTo)}` }];
  });
}

/** Sign-in links for the providers linked to `personId` that are configured here (no application: back to the account page). */
export async function linkedProviderLinks(ctx: AppContext, personId: string) {
  return (await many(ctx.db
    .select({ provider: linkedAccounts.provider })
    .from(linkedAccounts)
    .where(eq(linkedAccounts.personId, personId))))
    .flatMap(({ provider }) => {
      const known = PROVIDERS.find((p) => p.id === provider);
      if (!known || !isConfigured(known, ctx.config.env)) return [];
      return [{ id: provider, name: providerName(provider, ctx.config.env), href: `/api/auth/sign-in/${provider}` }];
    });
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost']);

/**
 * CSP source expressions for the application's redirect URIs: their origins (any port for a
 * native app's loopback URIs, RFC 8252 §7.3), or the bare scheme of a custom-scheme URI.
 * IPv6 literals cannot be written as CSP sources and are left out. An application that protects
 * sites adds their hosts' origins: the hand-over ends with a redirect to `/.gatehouse/callback` there.
 */
export function redirectSources(ctx: Flows, app: Application | undefined): string[] {
  if (!app) return [];
  const sources = new Set<string>(ctx.registries.browserFlows.all.flatMap((flow) => flow.formActionSources?.(app) ?? []));
  for (const uri of app.redirectUris) {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      if (/^[a-z][a-z0-9+.-]*:$/i.test(url.protocol)) sources.add(url.protocol);
      continue;
    }
    if (url.hostname.startsWith('[')) continue;
    if (app.clientType === 'native' && LOOPBACK.has(url.hostname)) sources.add(`${url.protocol}//${url.hostname}:*`);
    else sources.add(url.origin);
  }
  return [...sources];
}

/**
 * The authorization request a sign-in page was showing for an application, remembered for the
 * invitation pages (issue 25, item 13): someone sent to the sign-in of an invite-only application
 * who then opens their invitation in the same browser is brought back to that request once they
 * have joined. Only `/invite/` sees the cookie; it lives an hour.
 */
const RESUME_COOKIE = 'gatehouse_resume';
const resumeCookieName = (config: Config) => (config.issuer.startsWith('https:') ? `__Secure-${RESUME_COOKIE}` : RESUME_COOKIE);

export function rememberResume(config: Config, reply: FastifyReply, app: Application | undefined, returnTo: string): void {
  if (!app || app.authPolicy.signup_policy !== 'invite_only' || !returnTo.startsWith(RESUME_PREFIXES[0]!)) return;
  reply.setCookie(resumeCookieName(config), returnTo, {
    path: '/invite/', httpOnly: true, sameSite: 'lax', secure: config.issuer.startsWith('https:'), maxAge: 3600,
  });
}

/**
 * Where to go once someone joined `app` from an invitation: an authorization request of that very
 * application (given with the form, or remembered by the sign-in page), or undefined.
 */
export function resumeAfterJoining(ctx: Pick<AppContext, 'config' | 'registries'>, request: FastifyRequest, app: Application, given: string | undefined): string | undefined {
  for (const raw of [given, request.cookies[resumeCookieName(ctx.config)]]) {
    const target = safeReturnTo(ctx, raw);
    if (!target.startsWith(RESUME_PREFIXES[0]!)) continue;
    if (new URLSearchParams(target.slice(target.indexOf('?') + 1)).get('client_id') === app.id) return target;
  }
  return undefined;
}
