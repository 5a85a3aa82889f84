/**
 * Forward auth for reverse proxies (spec forward-auth.md; docs/protect-apps-without-oidc.md) as
 * one feature plugin: the two check endpoints, the hand-over's start on the issuer, the callback
 * and sign-out paths every protected host routes here, and the set-up snippets in the admin API.
 * The protected-host map and the check's decision cache live as long as the app.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { FeatureOptions } from '../context.js';
import { adminFeature } from '../http/admin-feature.js';
import { KeyRing } from '../oauth/keys.js';
import { ForwardCheck } from './check.js';
import { checkRoutes } from './check-routes.js';
import { callbackRoutes } from './callback-routes.js';
import { ProtectedHosts } from './protected-hosts.js';
import { startRoute } from './start-route.js';
import { snippetRoutes } from './snippet-routes.js';

export const forwardAuthPlugin: FastifyPluginAsync<FeatureOptions> = async (app, options) => {
  const hosts = new ProtectedHosts(app.ctx);
  // Bearer tokens are verified against the published keys, read through a ring of its own.
  const check = new ForwardCheck(app.ctx, hosts, new KeyRing(app.ctx));
  await app.register(checkRoutes, { check });
  await app.register(startRoute, { hosts });
  await app.register(callbackRoutes, { hosts });
  await app.register(adminFeature(snippetRoutes), options);
};
