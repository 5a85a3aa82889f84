/**
 * `POST /api/auth/oauth2/device_authorization` (RFC 8628 §3.1–3.2, spec grants-and-logout.md):
 * a device that cannot show a browser asks to sign a person in.
 * - Form-encoded; the client authenticates as at the token endpoint (a public client names
 *   itself with `client_id`, a confidential one adds its secret); `unauthorized_client` unless the
 *   device grant is among the application's `grantTypes`.
 * - `scope` as at authorize (required, from the supported set, unknown names refused or dropped
 *   by the application's `unknownScopes`); `resource` absent or the
 *   application's audience (`invalid_target`).
 * - Answer: `device_code`, `user_code` (`XXXX-XXXX`), `verification_uri` (`<issuer>/device`),
 *   `verification_uri_complete`, `expires_in` 600, `interval` 5, with `Cache-Control: no-store`.
 * - Each address may start `GATEHOUSE_DEVICE_AUTHORIZATION_RATE_LIMIT` (default 30) requests a
 *   minute (429 `slow_down`, `Retry-After`): every request writes a row. Failed client
 *   authentication counts toward the token endpoint's failure limit as well.
 */
import type { FastifyPluginAsync } from 'fastify';
import { positiveIntegerEnv } from '../../config.js';
import { WindowCounter } from '../../util/window-counter.js';
import { authenticateClient } from '../client-auth.js';
import { invalidTarget, OAuthError } from '../errors.js';
import type { FailureLimiter } from '../failure-limit.js';
import { param } from '../params.js';
import { parseScope } from '../scopes.js';
import { formBody } from '../token/route.js';
import { DEVICE_CODE_GRANT } from '../token/device-code.js';
import { displayUserCode } from './codes.js';
import { createDeviceAuthorization, DEVICE_CODE_TTL_SECONDS, POLL_INTERVAL_SECONDS } from './store.js';

export const DEVICE_AUTHORIZATION_PATH = '/api/auth/oauth2/device_authorization';
export const DEVICE_PAGE_PATH = '/device';

export const deviceAuthorizationRoutes: FastifyPluginAsync<{ limiter: FailureLimiter }> = async (app, { limiter }) => {
  const { ctx } = app;
  const perAddress = new WindowCounter(positiveIntegerEnv(ctx.config.env, 'GATEHOUSE_DEVICE_AUTHORIZATION_RATE_LIMIT', 30), 60_000);

  app.post(DEVICE_AUTHORIZATION_PATH, { schema: { hide: true } }, async (request, reply) =>
    limiter.guard(request, async () => {
      const nowMs = ctx.clock.now().getTime();
      const wait = perAddress.blocked(request.ip, nowMs);
      if (wait !== undefined) {
        throw new OAuthError('slow_down', 'Too many device sign-ins started from this address; try again later.', 429, { 'retry-after': String(wait) });
      }
      perAddress.hit(request.ip, nowMs);
      const body = formBody(request);
      const client = await authenticateClient(ctx, request, body);
      if (!client.grantTypes.includes(DEVICE_CODE_GRANT)) {
        throw new OAuthError('unauthorized_client', 'This application may not use device sign-in.');
      }
      const scope = parseScope(param(body, 'scope'), client.unknownScopes).join(' ');
      if (Array.isArray(body.resource)) throw invalidTarget('Only one resource may be requested.');
      const resource = param(body, 'resource') ?? client.audience;
      if (resource !== client.audience) throw invalidTarget("The requested resource is not this application's audience.");

      const ua = request.headers['user-agent'];
      const { deviceCode, userCode } = await createDeviceAuthorization(ctx.db, ctx.clock.now(), {
        applicationId: client.id, scope, resource, userAgent: typeof ua === 'string' ? ua : undefined, ip: request.ip,
      });
      const verificationUri = `${ctx.config.issuer}${DEVICE_PAGE_PATH}`;
      const shown = displayUserCode(userCode);
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send({
        device_code: deviceCode,
        user_code: shown,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${shown}`,
        expires_in: DEVICE_CODE_TTL_SECONDS,
        interval: POLL_INTERVAL_SECONDS,
      });
    }),
  );
};
