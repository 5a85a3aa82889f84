/**
 * Configuration as code (spec presets-and-operations.md, "Configuration as code"; decisions
 * 0240–0242) as a protocol plugin (plugin-api/): `GET /api/admin/config` and
 * `POST /api/admin/config/apply`, the owner's. A file's entries are the admin API's own create
 * schemas, the plugins' application fields included (sections.ts), and every change goes through
 * the feature's own service.
 */
import type { GatehousePlugin } from '../context.js';
import { needs } from '../http/admin-policy.js';
import { configRoutes } from './routes.js';

export const configAsCodePlugin: GatehousePlugin = {
  name: 'config-as-code',
  setup(ctx) {
    ctx.registries.adminRoutes.add({
      name: 'config-as-code',
      routes: configRoutes,
      // The whole configuration, administrators included, is the owner's.
      policy: { 'GET /config': needs.owner, 'POST /config/apply': needs.owner },
    });
  },
};
