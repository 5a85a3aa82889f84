/**
 * Forward auth for reverse proxies (spec forward-auth.md; docs/protect-apps-without-oidc.md) as
 * one protocol plugin (plugin-api/): the application field `forwardAuth` (settings.ts), the two
 * check endpoints, the hand-over's start on the issuer (a browser flow the hosted pages and the
 * consent page take part in), the callback and sign-out paths every protected host routes here,
 * and the set-up snippets in the admin API. It hears of application changes and ended sessions
 * through the core's hooks. The protected-host map and the check's decision cache live as long as
 * the app.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { FeatureOptions, GatehousePlugin } from '../context.js';
import { afterCommit } from '../db/store.js';
import { needs } from '../http/admin-policy.js';
import { KeyRing } from '../oauth/keys.js';
import { FORWARD_AUTH_CHECKS, ForwardCheck, START_PATH, type ForwardAuthResult } from './check.js';
import { checkRoutes } from './check-routes.js';
import { callbackRoutes } from './callback-routes.js';
import { forwardAuthChanged, ProtectedHosts } from './protected-hosts.js';
import { startRoute } from './start-route.js';
import { snippetRoutes } from './snippet-routes.js';
import { forwardAuthField } from './settings.js';
import { endSiteSessionsOf } from './site-sessions.js';
import { forwardConsentRequest } from './consent-request.js';
import { patternSources } from './hosts.js';

export const forwardAuthPlugin: GatehousePlugin = {
  name: 'forward-auth',
  setup(ctx) {
    const { hooks, registries } = ctx;
    registries.applicationFields.add(forwardAuthField(ctx.db));
    // Name, policy and forward-auth settings decide the checks of its protected hosts: read again after the commit.
    hooks.on('applicationChanged', ({ tx }) => afterCommit(tx, forwardAuthChanged));
    // Site sessions handed over from an ended session end with it (their hosts stop at the next check).
    hooks.on('sessionsEnded', ({ tx, sessionIds }) => endSiteSessionsOf(tx, sessionIds));
    registries.browserFlows.add({
      name: 'forward-auth',
      resumePrefix: `${START_PATH}?`,
      consentRequest: (returnTo) => forwardConsentRequest(ctx, returnTo),
      formActionSources: (app) => app.forwardAuth?.hosts.flatMap(patternSources) ?? [],
    });
    registries.adminRoutes.add({
      name: 'forward-auth',
      routes: snippetRoutes,
      // The proxy configuration (spec forward-auth.md, "Set-up help"): the application's managers set
      // its hosts, so they print its snippets; not API keys (set-up, like the secrets).
      policy: { 'GET /applications/:id/forward-auth/snippet': needs.app() },
    });
    const counted = ctx.metrics.counter(FORWARD_AUTH_CHECKS);
    const routes: FastifyPluginAsync<FeatureOptions> = async (app) => {
      const hosts = new ProtectedHosts(app.ctx);
      // Bearer tokens are verified against the published keys, read through a ring of its own.
      const check = new ForwardCheck(app.ctx, hosts, new KeyRing(app.ctx));
      await app.register(checkRoutes, { check, count: (result: ForwardAuthResult) => counted.inc({ result }) });
      await app.register(startRoute, { hosts });
      await app.register(callbackRoutes, { hosts });
    };
    return routes;
  },
};
