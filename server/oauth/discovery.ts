/**
 * `GET /.well-known/openid-configuration` (OIDC Discovery 1.0 §3, RFC 8414, DESIGN §4.10) and
 * `GET /api/auth/jwks` (RFC 7517). Built from the issuer at request time, since the issuer is
 * only known after listening when the port is picked by the system.
 */
import type { FastifyPluginAsync } from 'fastify';
import { publishedJwks, SIGNING_ALG, type KeyRing } from './keys.js';
import { SUPPORTED_SCOPES } from './scopes.js';

const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'];

export function discoveryDocument(issuer: string) {
  const at = (path: string) => `${issuer}${path}`;
  return {
    issuer,
    authorization_endpoint: at('/api/auth/oauth2/authorize'),
    token_endpoint: at('/api/auth/oauth2/token'),
    userinfo_endpoint: at('/api/auth/oauth2/userinfo'),
    jwks_uri: at('/api/auth/jwks'),
    revocation_endpoint: at('/api/auth/oauth2/revoke'),
    end_session_endpoint: at('/api/auth/oauth2/end-session'),
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [SIGNING_ALG],
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: AUTH_METHODS,
    code_challenge_methods_supported: ['S256'],
    prompt_values_supported: ['none', 'login'],
    claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'sid', 'name', 'email', 'email_verified'],
    authorization_response_iss_parameter_supported: true,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
  };
}

export const discoveryRoutes: FastifyPluginAsync<{ keys: KeyRing }> = async (app, { keys }) => {
  const { ctx } = app;
  app.get('/.well-known/openid-configuration', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').send(discoveryDocument(ctx.config.issuer)),
  );
  // Short cache: after a rotation the new key signs at once, and verifiers refetch on an unknown kid.
  app.get('/api/auth/jwks', { schema: { hide: true } }, async (_request, reply) => {
    await keys.ensure();
    return reply
      .header('cache-control', 'public, max-age=60')
      .type('application/jwk-set+json')
      .send(publishedJwks(ctx.db, ctx.clock.now()));
  });
};
