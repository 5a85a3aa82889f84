/**
 * The webhooks feature: admin routes, and (when workers run) the delivery worker, which
 * `ctx.wakeWebhooks` nudges after a transaction wrote events and `onClose` stops.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { FeatureOptions } from '../context.js';
import { requireAdmin } from '../http/admin-auth.js';
import { webhookRoutes } from './routes.js';
import { settingsFromEnv } from './settings.js';
import { DeliveryWorker } from './worker.js';
import { webhookChannel } from './channel.js';
import { webhookTargetPolicy } from './target-address.js';

export const webhooksFeature: FastifyPluginAsync<FeatureOptions> = async (app, options) => {
  await app.register(
    async (admin) => {
      admin.addHook('onRequest', requireAdmin);
      await admin.register(webhookRoutes);
    },
    { prefix: '/api/admin' },
  );

  if (!options.startWorkers) return;
  const worker = new DeliveryWorker(app.ctx, settingsFromEnv(app.ctx.config.env), webhookChannel(webhookTargetPolicy(app.ctx), app.ctx.db), app.log);
  app.ctx.wakeWebhooks = () => worker.wake();
  app.addHook('onReady', async () => worker.start());
  app.addHook('onClose', async () => {
    app.ctx.wakeWebhooks = () => {};
    await worker.stop();
  });
};
