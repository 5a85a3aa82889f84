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

/** The sign-in page asking a signed-in person to sign in again (accounts/session.ts, requireRecentSignIn). */
export const REAUTH_URL = '/sign-in?reauth=1';

const TITLES: Record<number, string> = {
  400: 'Something is wrong with this request',
  403: 'Not allowed',
  401: 'Please sign in',
  404: 'Page not found',
  409: 'Already in use',
  410: 'This link no longer works',
  429: 'Too many attempts',
  502: 'The sign-in provider did not answer',
  503: 'Not available',
};

/** Renders any thrown error as the error page (its status and headers kept); unknown ones as a 500 page. */
export function pageErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const problem = toProblem(error);
  if (!problem) {
    request.log.error({ err: error }, 'unhandled error on a hosted page');
    return renderError(reply, 500, 'Something went wrong', 'Something went wrong on our side. Please try again.');
  }
  // A page action that needs a recent sign-in sends the person through one; they land on the
  // account page and retry (the action checks again, so nothing can skip the sign-in).
  if (problem.code === 'reauthentication_required') return reply.header('cache-control', 'no-store').redirect(REAUTH_URL, 303);
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
  return renderError(reply, problem.status, TITLES[problem.status] ?? 'Something went wrong', problem.detail);
}

/**
 * Where a person's browser navigates: the hosted pages and the front-channel OAuth endpoints
 * (authorize, end-session, provider callbacks). A new hosted area adds its prefix here.
 */
const PAGE_PREFIXES = [
  '/sign-in', '/sign-up', '/invite/', '/account', '/forgot-password', '/reset-password', '/verify-email', '/link-account', '/device',
  '/api/auth/oauth2/authorize', '/api/auth/oauth2/end-session', '/api/auth/callback/',
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

export async function preparePageScope(app: FastifyInstance): Promise<void> {
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  await registerRateLimit(app);
  app.setErrorHandler(pageErrorHandler);
}
