/**
 * `POST /api/auth/oauth2/token` (RFC 6749 §3.2): form-encoded, client authenticated first
 * (`invalid_client`), then dispatched by `grant_type` (`unsupported_grant_type` otherwise).
 * Every answer carries `Cache-Control: no-store`.
 */
import type { FastifyPluginAsync } from 'fastify';
import { authenticateClient } from '../client-auth.js';
import { invalidRequest, OAuthError } from '../errors.js';
import type { KeyRing } from '../keys.js';
import type { FailureLimiter } from '../failure-limit.js';
import { requiredParam, type RawParams } from '../params.js';
import { authorizationCodeGrant } from './authorization-code.js';
import { refreshTokenGrant } from './refresh-token.js';
import { sendTokens } from './response.js';

export const TOKEN_PATH = '/api/auth/oauth2/token';

/** The form body, or `invalid_request` when the request was not form-encoded. */
export function formBody(request: { headers: Record<string, unknown>; body: unknown }): RawParams {
  const type = String(request.headers['content-type'] ?? '');
  if (!/^application\/x-www-form-urlencoded\b/i.test(type) || typeof request.body !== 'object' || request.body === null) {
    throw invalidRequest('The request body must be application/x-www-form-urlencoded.');
  }
  return request.body as RawParams;
}

export const tokenRoutes: FastifyPluginAsync<{ keys: KeyRing; limiter: FailureLimiter }> = async (app, { keys, limiter }) => {
  const { ctx } = app;
  app.post(TOKEN_PATH, { schema: { hide: true } }, async (request, reply) =>
    limiter.guard(request, async () => {
      const body = formBody(request);
      const grantType = requiredParam(body, 'grant_type');
      const client = authenticateClient(ctx, request, body);
      switch (grantType) {
        case 'authorization_code':
          return sendTokens(reply, await authorizationCodeGrant(ctx, keys, client, body));
        case 'refresh_token':
          return sendTokens(reply, await refreshTokenGrant(ctx, keys, client, body));
        default:
          throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
      }
    }),
  );
};
