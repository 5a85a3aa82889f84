/**
 * The SAML 2.0 identity provider (spec saml.md; docs/saml.md) as a protocol plugin (plugin-api/):
 * - the application field `saml` (application-field.ts) and, in the admin API, the metadata import
 *   and the signing keys (admin-routes.ts);
 * - its endpoints: the metadata, SSO (both bindings, the continuation after the hosted pages,
 *   IdP-initiated) and SLO (routes.ts);
 * - a browser flow the hosted pages take part in: the sign-in, second-factor and consent pages come
 *   back to `/saml/sso/continue?r=…`, and the consent page asks what the attributes tell;
 * - a logout flow: signing out on the account page or at the OIDC end-session tells the SAML SPs
 *   of the session through the browser (logout.ts);
 * - the launcher on the account page for SPs that allow IdP-initiated sign-on (account-section.ts);
 * - `gatehouse_saml_responses_total{result}`.
 * The core never imports it; server/features.ts lists it.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { FeatureOptions, GatehousePlugin } from '../context.js';
import { needs } from '../http/admin-policy.js';
import { samlField } from './application-field.js';
import { samlAdminRoutes } from './admin-routes.js';
import { samlAccountSection } from './account-section.js';
import { SamlKeyRing } from './keys.js';
import { CONTINUE_PATH, SAML_SCOPE } from './paths.js';
import { findApplication, liveSamlSessions, pendingRequest } from './queries.js';
import { browserRoutes, metadataRoute } from './routes.js';
import type { SamlResult, SamlService } from './sso.js';

export const SAML_RESPONSES = {
  name: 'gatehouse_saml_responses_total',
  help: 'SAML Responses and refusals of the identity provider, by result: success, no_passive, denied (the application refused the person), refused (a message refused on our page)',
  labelNames: ['result'] as const,
};

const RESUME_PREFIX = `${CONTINUE_PATH}?`;

export const samlPlugin: GatehousePlugin = {
  name: 'saml',
  setup(ctx) {
    const { registries } = ctx;
    const keys = new SamlKeyRing(ctx.db, () => ctx.config.issuer, () => ctx.clock.now());
    const counter = ctx.metrics.counter(SAML_RESPONSES);
    const svc: SamlService = { ctx, keys, count: (result: SamlResult) => counter.inc({ result }) };

    registries.applicationFields.add(samlField(ctx.db));
    registries.adminRoutes.add({
      name: 'saml',
      routes: samlAdminRoutes(ctx, keys),
      policy: {
        // The application's managers connect it; the IdP's keys are the owner's (as the JWKS keys).
        'POST /applications/:id/saml/metadata': needs.app(),
      },
    });
    registries.browserFlows.add({
      name: 'saml',
      resumePrefix: RESUME_PREFIX,
      async consentRequest(returnTo) {
        if (!returnTo.startsWith(RESUME_PREFIX)) return undefined;
        const handle = new URLSearchParams(returnTo.slice(RESUME_PREFIX.length)).get('r');
        const pending = handle ? await pendingRequest(ctx.db, handle, ctx.clock.now()) : undefined;
        const client = pending && (await findApplication(ctx.db, pending.applicationId));
        return client?.saml ? { client, scope: SAML_SCOPE } : undefined;
      },
    });
    registries.logoutFlows.add({
      name: 'saml',
      // SAML's protocol code (protocol.ts) is loaded only when a session that ended has an SP to tell.
      afterSignOut: async (request, reply, ended) =>
        (await liveSamlSessions(ctx.db, ended.sessionIds)).some(({ app }) => app.saml?.slo)
          ? (await import('./protocol.js')).startBrowserLogout(svc, request, reply, ended)
          : undefined,
    });
    registries.accountSections.add(samlAccountSection());

    const routes: FastifyPluginAsync<FeatureOptions> = async (app) => {
      await app.register(metadataRoute, { svc });
      await app.register(browserRoutes, { svc });
    };
    return routes;
  },
};
