/**
 * App presets (spec presets-and-operations.md, "App presets") as a protocol plugin (plugin-api/):
 * another shape of `POST /api/admin/applications` (a preset and its inputs, apply.ts), the
 * catalogue, set-up text and upgrade routes in the admin API (routes.ts), and the preset's own
 * requirements among Test sign-in's checks (requirements.ts). The set-up text takes the parts
 * other plugins add (`registries.setupSections`).
 */
import type { GatehousePlugin } from '../context.js';
import { needs } from '../http/admin-policy.js';
import { presetRoutes } from './routes.js';
import { PresetCreateSchema, type PresetCreateBody } from './schemas.js';
import { applicationFromPreset } from './apply.js';
import { presetChecks } from './requirements.js';

const { administrator, app } = needs;

export const presetsPlugin: GatehousePlugin = {
  name: 'presets',
  setup(ctx) {
    const { registries } = ctx;
    registries.applicationTemplates.add({
      name: 'preset',
      discriminator: 'preset',
      schema: PresetCreateSchema,
      toCreate: async (body) => applicationFromPreset(ctx, body as unknown as PresetCreateBody) as never,
    });
    registries.testSignInChecks.add({ name: 'preset', checks: (application, tokens) => presetChecks(application.preset, tokens) });
    registries.adminRoutes.add({
      name: 'presets',
      routes: presetRoutes,
      policy: {
        'GET /presets': administrator,
        'GET /presets/:id': administrator,
        // What an application came from and how to configure the app (secrets as placeholders).
        'GET /applications/:id/setup': app('application', { people: true }),
        'GET /applications/:id/preset': app('application'),
        'POST /applications/:id/preset/upgrade': app('application'),
        // What the preset's requirements make of a member's tokens (Test sign-in "as a member"): read like the member's record.
        'GET /applications/:id/users/:uid/preset-checks': app('users', { people: true }),
      },
    });
  },
};
