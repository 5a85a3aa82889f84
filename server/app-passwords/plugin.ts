/**
 * App passwords (spec ldap.md, "App passwords"; decision 0161) as a protocol plugin
 * (plugin-api/): `/api/me/app-passwords` (routes.ts) and the section of the account page
 * (account-section.ts). The one check LDAP binds and forward auth's HTTP Basic use is verify.ts,
 * which those plugins import.
 */
import type { GatehousePlugin } from '../context.js';
import { appPasswordsSection } from './account-section.js';
import { registerAppPasswordRoutes } from './routes.js';

export const appPasswordsPlugin: GatehousePlugin = {
  name: 'app-passwords',
  setup(ctx) {
    ctx.registries.meRoutes.add({ name: 'app-passwords', routes: registerAppPasswordRoutes });
    ctx.registries.accountSections.add(appPasswordsSection(ctx));
  },
};
