/**
 * CORS for the endpoints a browser application calls with `fetch` (a `spa` client exchanging its
 * code, refreshing, reading userinfo, revoking; any backend reading discovery and the JWKS).
 * None of them reads cookies, so any origin may call them without credentials
 * (`Access-Control-Allow-Origin: *`); authorize and end-session are navigations and get none.
 */
import type { FastifyInstance } from 'fastify';

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

/** Adds the CORS header and preflight routes to the caller's scope (not a child plugin, so the hook covers its routes). */
export function registerCors(app: FastifyInstance): void {
  // A callback hook (no promise per response): it runs on every OAuth request, JWKS included.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (CORS_PATHS.includes(request.routeOptions.url ?? '')) reply.headers(CORS_HEADERS);
    done(null, payload);
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
