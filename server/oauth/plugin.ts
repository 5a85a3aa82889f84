/**
 * The OAuth 2.1 / OpenID Connect authorization server as one Fastify plugin (DESIGN §4.10,
 * spec grants-and-logout.md). Makes sure a signing key exists (at first start), then registers
 * the protocol endpoints (token, device authorization, introspection, …) in an encapsulated scope
 * with the RFC 6749 error handler, form-body parsing, the failure rate limit and 405 answers for
 * methods an endpoint does not take; the hosted /device page in a page scope; the key
 * administration and the back-channel logout log under `/api/admin`, which keep the problem+json
 * handler. With workers on, it runs the back-channel logout worker and the pruning of its growing
 * tables.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import formbody from '@fastify/formbody';
import { registerCors } from './cors.js';
import type { FeatureOptions } from '../context.js';
import { adminKeyRoutes } from './admin-key-routes.js';
import { testSignInRoutes } from './test-sign-in.js';
import { authorizeRoutes } from './authorize/route.js';
import { discoveryRoutes } from './discovery.js';
import { endSessionRoutes } from './end-session.js';
import { oauthErrorHandler } from './errors.js';
import { KeyRing } from './keys.js';
import { readAccessToken } from './access-tokens.js';
import { answerWrongMethods } from './method-not-allowed.js';
import { FailureLimiter } from './failure-limit.js';
import { FORM_BODY_LIMIT } from './params.js';
import { revokeRoutes } from './revoke.js';
import { tokenRoutes } from './token/route.js';
import { userinfoRoutes } from './userinfo.js';
import { backchannelLogRoutes } from './backchannel/routes.js';
import { deviceAuthorizationRoutes } from './device/authorization-route.js';
import { devicePageRoutes } from './device/page.js';
import { consentPageRoutes } from './consent-page.js';
import { introspectionRoutes } from './introspect.js';
import { webfingerRoutes } from './webfinger.js';
import { claimsPreviewRoutes } from './claims/preview-routes.js';
import { requireAdmin } from '../http/admin-auth.js';
import { logoutChannel } from './backchannel/channel.js';
import { onLogoutsQueued } from './backchannel/outbox.js';
import { DeliveryWorker } from '../webhooks/worker.js';
import { settingsFromEnv } from '../webhooks/settings.js';

export const oauthPlugin: FastifyPluginAsync<FeatureOptions> = async (app, options) => {
  const { ctx } = app;
  const keys = new KeyRing(ctx);
  // The first key is created at start-up (other modules, e.g. the rotation schedule and the
  // overview, expect one to exist from then on).
  await keys.ensure();
  const limiter = new FailureLimiter(ctx);
  // The admin API accepts panel access tokens: verified here, with the same keys (context.ts).
  ctx.readAccessToken = async (token) => (await readAccessToken(ctx, keys, token)) as Readonly<Record<string, unknown>> | undefined;

  await app.register(async (scope) => {
    await scope.register(formbody, { bodyLimit: FORM_BODY_LIMIT });
    scope.setErrorHandler(oauthErrorHandler);
    // Before any route (the CORS preflights too), so every endpoint's methods are seen.
    const addWrongMethodAnswers = answerWrongMethods(scope);
    registerCors(scope);
    await scope.register(discoveryRoutes, { keys });
    await scope.register(authorizeRoutes);
    await scope.register(tokenRoutes, { keys, limiter });
    await scope.register(userinfoRoutes, { keys });
    await scope.register(revokeRoutes, { limiter, keys });
    await scope.register(endSessionRoutes, { keys });
    await scope.register(deviceAuthorizationRoutes, { limiter });
    await scope.register(introspectionRoutes, { keys, limiter });
    addWrongMethodAnswers();
  });
  // A hosted page: its own scope (form bodies, HTML errors, rate limiter).
  await app.register(devicePageRoutes);
  await app.register(consentPageRoutes);
  // Not an OAuth endpoint: its bad requests are problem+json (RFC 7033 names no error body).
  await app.register(webfingerRoutes);
  await app.register(adminKeyRoutes, { prefix: '/api/admin', keys });
  await app.register(testSignInRoutes, { prefix: '/api/admin', keys });
  await app.register(backchannelLogRoutes, { prefix: '/api/admin' });
  // Behind requireAdmin like the other admin routes (an application's API key with users:read may call it).
  await app.register(async (admin) => {
    admin.addHook('onRequest', requireAdmin);
    await admin.register(claimsPreviewRoutes);
  }, { prefix: '/api/admin' });
  if (options.startWorkers) {
    startLogoutWorker(app, keys);
  }
};

/**
 * Logout deliveries in flight at once. Each signs a token (on libuv's pool) first, so a
 * sign-out that tells 50 applications would otherwise start 50 signatures and 50 requests in one
 * burst; a few at a time spread that work between the requests the server is answering.
 */
const LOGOUT_CONCURRENCY = 8;

/**
 * The back-channel logout worker: the webhook worker's machinery over the logout outbox, with
 * the webhook settings (`GATEHOUSE_WEBHOOK_*`: timeout, retry schedule, concurrency). Woken
 * whenever a transaction queued logouts (backchannel/outbox.ts), stopped on close.
 */
function startLogoutWorker(app: FastifyInstance, keys: KeyRing): void {
  const settings = settingsFromEnv(app.ctx.config.env);
  const worker = new DeliveryWorker(app.ctx, { ...settings, concurrency: Math.min(settings.concurrency, LOGOUT_CONCURRENCY) }, logoutChannel(app.ctx, keys), app.log);
  let unsubscribe: (() => void) | undefined;
  app.addHook('onReady', async () => {
    unsubscribe = onLogoutsQueued(() => worker.wake());
    worker.start();
  });
  app.addHook('onClose', async () => {
    unsubscribe?.();
    await worker.stop();
  });
}
