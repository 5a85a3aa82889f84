/**
 * CORS for the endpoints a browser application calls with `fetch` (a `spa` client exchanging its
 * code, refreshing, reading userinfo, revoking; any backend reading discovery and the JWKS).
 * None of them reads cookies, so any origin may call them without credentials
 * (`Access-Control-Allow-Origin: *`); authorize and end-session are navigations and get none.
 */
import type { FastifyInstance, onSendHookHandler } from 'fastify';

export const CORS_PATHS = [
  '/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
  '/api/auth/jwks',
  '/api/auth/oauth2/token',
  '/api/auth/oauth2/userinfo',
  '/api/auth/oauth2/revoke',
];

/** The one header a CORS answer carries (preflights add theirs). */
export const CORS_HEADERS = { 'access-control-allow-origin': '*' };

/** Sets the CORS header on a reply: a callback hook (no promise per response). */
const corsOnSend: onSendHookHandler = (_request, reply, payload, done) => {
  reply.headers(CORS_HEADERS);
  done(null, payload);
};

/**
 * Adds the CORS header and preflight routes to the caller's scope (not a child plugin, so the
 * hook sees its routes). The header goes in as a route-level `onSend` hook of each CORS route as
 * it is registered, so no request of the scope has to look its route up (`request.routeOptions`
 * builds an object per call); error answers of those routes pass through it too.
 */
export function registerCors(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (CORS_PATHS.includes(route.url)) route.onSend = [...[route.onSend ?? []].flat(), corsOnSend];
  });
  for (const path of CORS_PATHS) {
    app.options(path, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .status(204)
        .header('access-control-allow-methods', 'GET, POST')
        .header('access-control-allow-headers', 'authorization, content-type, dpop')
        .header('access-control-max-age', '600')
        .send(),
    );
  }
}
