/**
 * Directory sources as a plugin (docs/architecture.md): the core never imports this folder. What
 * it adds:
 * - the admin API (routes.ts) under `/api/admin`, behind the admin guard (owner or admin token);
 * - a sign-in source (sign-in.ts): password sign-in defers to the source for its people, and finds
 *   people new to it;
 * - the scheduler of sync runs (scheduler.ts), when workers run.
 *
 * The wiring into the core lives here alone: the sign-in source goes into the plugin API's
 * registry (`ctx.registries.signInSources`, plugin-api/registries.ts) in `setup`.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { FeatureOptions, GatehousePlugin } from '../context.js';
import { adminFeature } from '../http/admin-feature.js';
import { directorySourceRoutes } from './routes.js';
import { directorySignInSource } from './sign-in.js';
import { SyncScheduler } from './scheduler.js';
import { allSources } from './queries.js';
import { runFinished } from './runs.js';
import { registerMetrics } from './metrics.js';

const adminRoutes = adminFeature(directorySourceRoutes);

const routes: FastifyPluginAsync<FeatureOptions> = async (app, options) => {
  await app.register(adminRoutes, options);
  if (options.startWorkers) {
    const scheduler = new SyncScheduler(app.ctx, app.log);
    app.addHook('onReady', async () => scheduler.start());
    app.addHook('onClose', async () => scheduler.stop());
  } else {
    // Runs started by requests finish before the store closes.
    app.addHook('onClose', async () => {
      for (const source of await allSources(app.ctx.db).catch(() => [])) await runFinished(source.id);
    });
  }
};

export const directorySourcesPlugin: GatehousePlugin = {
  name: 'directory-sources',
  setup(ctx) {
    ctx.registries.signInSources.add(directorySignInSource(ctx));
    registerMetrics(ctx);
    return routes;
  },
};
