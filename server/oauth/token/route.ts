/**
 * `POST /api/auth/oauth2/token` (RFC 6749 §3.2): form-encoded, client authenticated first
 * (`invalid_client`), then dispatched by `grant_type` (`unsupported_grant_type` for one we do
 * not know, `unauthorized_client` for one the application's `grantTypes` lack, §5.2).
 * Every answer carries `Cache-Control: no-store`.
 */
import type { FastifyPluginAsync } from 'fastify';
import { authenticateClient, type OAuthClient } from '../client-auth.js';
import { invalidRequest, OAuthError } from '../errors.js';
import type { KeyRing } from '../keys.js';
import type { FailureLimiter } from '../failure-limit.js';
import { requiredParam, type RawParams } from '../params.js';
import { authorizationCodeGrant } from './authorization-code.js';
import { refreshTokenGrant } from './refresh-token.js';
import { sendTokens, type TokenResponse } from './response.js';
import { clientCredentialsGrant } from './client-credentials.js';
import { DEVICE_CODE_GRANT, deviceCodeGrant } from './device-code.js';
import type { AppContext } from '../../context.js';
import type { GrantType } from '../../db/schema.js';

export const TOKEN_PATH = '/api/auth/oauth2/token';

type Grant = (ctx: AppContext, keys: KeyRing, client: OAuthClient, body: RawParams) => Promise<TokenResponse>;

/** One handler per grant type (one file each). */
const GRANTS: Record<GrantType, Grant> = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
  client_credentials: clientCredentialsGrant,
  [DEVICE_CODE_GRANT]: deviceCodeGrant,
};

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
      const grant = GRANTS[grantType as GrantType] as Grant | undefined;
      if (!grant) throw new OAuthError('unsupported_grant_type', `grant_type must be one of ${Object.keys(GRANTS).join(', ')}.`);
      if (!client.grantTypes.includes(grantType as GrantType)) {
        throw new OAuthError('unauthorized_client', `This application may not use the ${grantType} grant.`);
      }
      return sendTokens(reply, await grant(ctx, keys, client, body));
    }),
  );
};
