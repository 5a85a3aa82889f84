/**
 * RADIUS (spec radius.md; docs/radius.md) as a protocol plugin (plugin-api/): the application
 * field `radius` (application-field.ts) and the route that makes a client's secret again, the
 * network certificates of the account page and the admin API (certificates.ts), the listener in
 * the control panel's overview (its line in `gatehouse status` is status.ts), and the metrics.
 * The listeners themselves (server.ts) are loaded and started by the composition beside HTTP
 * (main.ts) only when RADIUS is on (running.ts is what the plugin knows of them), with
 * the appliance CA's certificate for EAP; an application's change makes them read the clients again.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { GatehousePlugin } from '../context.js';
import { afterCommit } from '../db/store.js';
import { actorName, requireActorScope } from '../http/admin-auth.js';
import { needs } from '../http/admin-policy.js';
import { adminErrors, adminSecurity as security, NoQuery } from '../http/schemas.js';
import { radiusField, RadiusSecretSchema, rotateSecret } from './application-field.js';
import { RADIUS_DROPPED, RADIUS_DUPLICATES, RADIUS_REQUESTS } from './metrics.js';
import { runningRadius } from './running.js';
import { adminCertificateRoutes, registerMeRoutes } from './routes.js';
import { networkCertificatesSection } from './account-section.js';

const ClientParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 128 }), name: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);

const secretRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/applications/:id/radius/clients/:name/secret',
    {
      schema: {
        tags: ['applications'], security, summary: 'New shared secret for one of the application\'s RADIUS clients (shown once; the old one stops working)',
        params: ClientParams, querystring: NoQuery,
        response: { 200: RadiusSecretSchema, ...adminErrors },
      },
    },
    async (request) => {
      // A client's secret admits network gear: admin only (applications/key-limits.ts).
      requireActorScope(request.actor, undefined, 'make a new RADIUS client secret');
      const secret = await rotateSecret(app.ctx, request.params.id, request.params.name, actorName(request.actor));
      await runningRadius(app.ctx)?.reloadClients();
      return secret;
    },
  );
};

const OverviewSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'whether this server runs RADIUS (GATEHOUSE_RADIUS=on)' }),
    auth: Type.Union([Type.String(), Type.Null()], { description: 'host:port of authentication (UDP), when running' }),
    accounting: Type.Union([Type.String(), Type.Null()], { description: 'host:port of accounting (UDP), when running' }),
    conversations: Type.Integer({ description: 'EAP conversations in progress' }),
  },
  { additionalProperties: false },
);

export const radiusPlugin: GatehousePlugin = {
  name: 'radius',
  setup(ctx) {
    const { registries, hooks } = ctx;
    registries.applicationFields.add(radiusField(ctx.db));
    registries.adminRoutes.add({ name: 'radius', routes: secretRoutes, policy: { 'POST /applications/:id/radius/clients/:name/secret': needs.app() } });
    registries.adminRoutes.add({
      name: 'radius-certificates',
      routes: adminCertificateRoutes,
      policy: {
        'GET /people/:id/network-certificates': needs.people,
        'GET /people/:id/radius-sessions': needs.people,
        'POST /people/:id/network-certificates': needs.people,
        'DELETE /people/:id/network-certificates/:certificateId': needs.people,
      },
    });
    registries.meRoutes.add({ name: 'network-certificates', routes: registerMeRoutes });
    registries.accountSections.add(networkCertificatesSection(ctx));
    registries.overviewSections.add({
      name: 'radius',
      schema: OverviewSchema,
      value() {
        const running = runningRadius(ctx)?.state();
        if (!running) return { enabled: false, auth: null, accounting: null, conversations: 0 };
        return { enabled: true, auth: running.auth, accounting: running.accounting, conversations: running.conversations };
      },
    });
    hooks.on('applicationChanged', ({ tx }) => afterCommit(tx, () => void runningRadius(ctx)?.reloadClients().catch(() => {})));
    ctx.metrics.counter(RADIUS_REQUESTS);
    ctx.metrics.counter(RADIUS_DROPPED);
    ctx.metrics.counter(RADIUS_DUPLICATES);
  },
};
