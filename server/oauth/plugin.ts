/**
 * The OAuth 2.1 / OpenID Connect authorization server as one Fastify plugin (DESIGN §4.10).
 * Makes sure a signing key exists (at first start), then registers the protocol endpoints in an
 * encapsulated scope with the RFC 6749 error handler, form-body parsing and the failure rate
 * limit of the token and revocation endpoints, 405 answers for methods an endpoint does not take,
 * and the key
 * administration under `/api/admin`, which keeps the problem+json handler.
 */
import type { FastifyPluginAsync } from 'fastify';
import formbody from '@fastify/formbody';
import { registerCors } from './cors.js';
import type { FeatureOptions } from '../context.js';
import { adminKeyRoutes } from './admin-key-routes.js';
import { authorizeRoutes } from './authorize/route.js';
import { discoveryRoutes } from './discovery.js';
import { endSessionRoutes } from './end-session.js';
import { oauthErrorHandler } from './errors.js';
import { KeyRing } from './keys.js';
import { answerWrongMethods } from './method-not-allowed.js';
import { FailureLimiter } from './failure-limit.js';
import { revokeRoutes } from './revoke.js';
import { tokenRoutes } from './token/route.js';
import { userinfoRoutes } from './userinfo.js';

export const oauthPlugin: FastifyPluginAsync<FeatureOptions> = async (app) => {
  const { ctx } = app;
  const keys = new KeyRing(ctx);
  // The first key is created at start-up (other modules, e.g. the rotation schedule and the
  // overview, expect one to exist from then on).
  await keys.ensure();
  const limiter = new FailureLimiter(ctx);

  await app.register(async (scope) => {
    await scope.register(formbody, { bodyLimit: 16 * 1024 });
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
    addWrongMethodAnswers();
  });
  await app.register(adminKeyRoutes, { prefix: '/api/admin', keys });
};
