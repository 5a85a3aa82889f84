/**
 * Wraps admin routes as a feature plugin: mounted under `/api/admin` behind `requireAdmin`
 * (admin token, or an API key limited by its scopes), like the core admin API in `app.ts`.
 */
import type { FastifyPluginAsync } from 'fastify';
import { requireAdmin } from './admin-auth.js';

export function adminFeature(routes: FastifyPluginAsync): FastifyPluginAsync {
  return async (app) => {
    await app.register(
      async (admin) => {
        admin.addHook('onRequest', requireAdmin);
        await admin.register(routes);
      },
      { prefix: '/api/admin' },
    );
  };
}

/**
 * The admin routes plugins added (plugin-api/registries.ts `adminRoutes`), under `/api/admin`
 * behind the admin guard; their rules join the route table (admin-auth.ts).
 */
export function adminPluginRoutes(entries: readonly { routes: FastifyPluginAsync }[]): FastifyPluginAsync {
  return async (app) => {
    await app.register(
      async (admin) => {
        admin.addHook('onRequest', requireAdmin);
        for (const entry of entries) await admin.register(entry.routes);
      },
      { prefix: '/api/admin' },
    );
  };
}
