/**
 * `POST /api/auth/oauth2/token` (RFC 6749 §3.2): form-encoded, client authenticated first
 * (`invalid_client`), then dispatched by `grant_type` (`unsupported_grant_type` for one we do
 * not know, `unauthorized_client` for one the application's `grantTypes` lack, §5.2).
 * Every answer carries `Cache-Control: no-store`. Form posts of the exact path are answered
 * before Fastify (http/early-answers.ts) by the same function as the route (`tokenEndpoint`).
 */
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';
import type { JsonAnswer } from '../../http/early-answers.js';
import { JSON_SECURITY_HEADERS } from '../../http/security-headers.js';
import { authenticateClient, type OAuthClient } from '../client-auth.js';
import { CORS_HEADERS } from '../cors.js';
import { invalidRequest, OAuthError, oauthErrorAnswer, oauthFailure, sendJsonAnswer } from '../errors.js';
import type { KeyRing } from '../keys.js';
import type { FailureLimiter } from '../failure-limit.js';
import { FORM_BODY_LIMIT, requiredParam, type OAuthCall, type RawParams } from '../params.js';
import { authorizationCodeGrant } from './authorization-code.js';
import { refreshTokenGrant } from './refresh-token.js';
import type { TokenResponse } from './response.js';
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
export function formBody(request: Pick<OAuthCall, 'headers' | 'body'>): RawParams {
  const type = String(request.headers['content-type'] ?? '');
  if (!/^application\/x-www-form-urlencoded\b/i.test(type) || typeof request.body !== 'object' || request.body === null) {
    throw invalidRequest('The request body must be application/x-www-form-urlencoded.');
  }
  return request.body as RawParams;
}

/** Every token answer (RFC 6749 §5.1, §5.2): never cached. */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/**
 * The token endpoint as a function of the call, for both transports: the Fastify route and the
 * answer before Fastify (http/early-answers.ts), which form posts of the exact path take.
 */
export function tokenEndpoint(ctx: AppContext, keys: KeyRing, limiter: FailureLimiter, log: FastifyBaseLogger) {
  return async (call: OAuthCall): Promise<JsonAnswer> => {
    try {
      const tokens = await limiter.guard(call, async () => {
        const body = formBody(call);
        const grantType = requiredParam(body, 'grant_type');
        const authenticated = authenticateClient(ctx, call, body);
        // SQLite answers at once (no await on the hot path); PostgreSQL with a promise.
        const client = authenticated instanceof Promise ? await authenticated : authenticated;
        const grant = GRANTS[grantType as GrantType] as Grant | undefined;
        if (!grant) throw new OAuthError('unsupported_grant_type', `grant_type must be one of ${Object.keys(GRANTS).join(', ')}.`);
        if (!client.grantTypes.includes(grantType as GrantType)) {
          throw new OAuthError('unauthorized_client', `This application may not use the ${grantType} grant.`);
        }
        const tokens = await grant(ctx, keys, client, body);
        ctx.metrics.tokenIssued(grantType);
        return tokens;
      });
      return { status: 200, headers: NO_STORE, body: JSON.stringify(tokens) };
    } catch (error) {
      const failure = oauthFailure(error, log);
      ctx.metrics.tokenError(failure.error);
      return oauthErrorAnswer(failure);
    }
  };
}

export const tokenRoutes: FastifyPluginAsync<{ keys: KeyRing; limiter: FailureLimiter }> = async (app, { keys, limiter }) => {
  const answer = tokenEndpoint(app.ctx, keys, limiter, app.log);
  app.earlyAnswers.addFormPost(TOKEN_PATH, { ...JSON_SECURITY_HEADERS, ...CORS_HEADERS }, FORM_BODY_LIMIT, answer);
  app.post(TOKEN_PATH, { schema: { hide: true } }, async (request, reply) => sendJsonAnswer(reply, await answer(request)));
};
