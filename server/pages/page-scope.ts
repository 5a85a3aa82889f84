/**
 * What every hosted-page plugin needs: HTML form bodies, the sign-in rate limiter, and an error
 * handler that answers with the error page instead of problem+json (a person, not a program,
 * reads these responses).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import { toProblem } from '../http/problem.js';
import { registerRateLimit } from '../accounts/rate-limits.js';
import { renderError } from './render.js';
import { pageText } from '../i18n/index.js';
import { errorTitle, problemText } from './text.js';

/** The sign-in page asking a signed-in person to sign in again (accounts/session.ts, requireRecentSignIn). */
export const REAUTH_URL = '/sign-in?reauth=1';

/** Renders any thrown error as the error page (its status and headers kept); unknown ones as a 500 page. */
export function pageErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const problem = toProblem(error);
  const { locale, t } = pageText(reply.server.ctx.config, request);
  if (!problem) {
    request.log.error({ err: error }, 'unhandled error on a hosted page');
    return renderError(reply, 500, errorTitle(t, 500), t('errors.serverError'));
  }
  // A page action that needs a recent sign-in sends the person through one; they land on the
  // account page and retry (the action checks again, so nothing can skip the sign-in).
  if (problem.code === 'reauthentication_required') return reply.header('cache-control', 'no-store').redirect(REAUTH_URL, 303);
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
  return renderError(reply, problem.status, errorTitle(t, problem.status), problemText(t, locale, problem));
}

/**
 * Where a person's browser navigates: the hosted pages and the front-channel OAuth endpoints
 * (authorize, end-session, provider callbacks). A new hosted area adds its prefix here.
 */
const PAGE_PREFIXES = [
  '/sign-in', '/sign-up', '/invite/', '/account', '/forgot-password', '/reset-password', '/verify-email', '/link-account', '/device',
  '/consent', '/language/',
  '/api/auth/oauth2/authorize', '/api/auth/oauth2/end-session', '/api/auth/callback/',
  // Forward auth's hand-over (server/forward-auth/): the start on the issuer, the callback and sign-out on protected hosts.
  '/api/auth/forward/start', '/.gatehouse/',
];

/** Browsers also navigate (GET) to the provider start `/api/auth/sign-in/:provider`; POSTs there are JSON. */
const PAGE_GET_PREFIXES = ['/api/auth/sign-in/'];

/**
 * Whether errors raised before routing (a malformed URL, an unknown path) should be answered with
 * the error page rather than problem+json.
 */
export function isPageRequest(request: { method: string; url: string }): boolean {
  const path = request.url.split('?')[0]!;
  const under = (prefix: string) => path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);
  if (PAGE_PREFIXES.some(under)) return true;
  return (request.method === 'GET' || request.method === 'HEAD') && PAGE_GET_PREFIXES.some(under);
}

/**
 * Whether an unknown address was opened by a person's browser (a navigation that accepts HTML),
 * outside the APIs: it gets the HTML "page not found" page instead of problem+json (issue 25).
 */
export function isBrowserNavigation(request: { method: string; url: string; headers: Record<string, unknown> }): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (request.url.startsWith('/api/') || request.url === '/api') return false;
  const accept = request.headers.accept;
  return typeof accept === 'string' && accept.includes('text/html');
}

export async function preparePageScope(app: FastifyInstance): Promise<void> {
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  await registerRateLimit(app);
  app.setErrorHandler(pageErrorHandler);
}
