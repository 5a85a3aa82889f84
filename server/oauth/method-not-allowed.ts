/**
 * RFC 9110 §15.5.6: a method an OAuth endpoint does not take is 405 Method Not Allowed with an
 * `Allow` header naming the ones it does, not a 404 that says the endpoint does not exist (relying
 * parties probing with the wrong method were told there was no token endpoint).
 *
 * The allowed methods are read from the routes the OAuth scope registers, so the rule has no list
 * of its own to keep in step. Front-channel endpoints (authorize, end-session: their routes use the
 * error-page handler) answer with the HTML error page; the others with an RFC 6749 error body.
 */
import type { FastifyInstance, HTTPMethods, RouteOptions } from 'fastify';
import { errorPageHandler, sendErrorPage } from './error-page.js';
import { OAuthError, sendOAuthError } from './errors.js';
import { escapeHtml } from '../util/html.js';

/** The methods Fastify routes by default (RFC 9110 plus PATCH). */
const METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

interface Endpoint {
  methods: Set<string>;
  page: boolean;
}

/**
 * Watches the routes registered on `scope` from now on; the returned function (called once they
 * are all registered) adds the 405 answers for every other method on their paths.
 */
export function answerWrongMethods(scope: FastifyInstance): () => void {
  const endpoints = new Map<string, Endpoint>();
  let closed = false;
  scope.addHook('onRoute', (route: RouteOptions) => {
    if (closed) return;
    const endpoint = endpoints.get(route.url) ?? { methods: new Set<string>(), page: false };
    for (const method of [route.method].flat()) endpoint.methods.add(method);
    // Fastify answers HEAD for every GET route.
    if (endpoint.methods.has('GET')) endpoint.methods.add('HEAD');
    endpoint.page ||= route.errorHandler === errorPageHandler;
    endpoints.set(route.url, endpoint);
  });
  return () => {
    closed = true;
    for (const [url, endpoint] of endpoints) {
      const others = METHODS.filter((m) => !endpoint.methods.has(m));
      if (!others.length) continue;
      const allow = METHODS.filter((m) => endpoint.methods.has(m)).join(', ');
      const description = `This endpoint takes ${allow}.`;
      scope.route({
        method: others,
        url,
        schema: { hide: true },
        // A body Fastify refuses before the handler runs is answered in the endpoint's shape too.
        ...(endpoint.page ? { errorHandler: errorPageHandler } : {}),
        handler: async (_request, reply) => {
          reply.header('allow', allow);
          if (endpoint.page) return sendErrorPage(reply, 405, 'invalid_request', escapeHtml(description));
          return sendOAuthError(reply, new OAuthError('invalid_request', description, 405));
        },
      });
    }
  };
}
