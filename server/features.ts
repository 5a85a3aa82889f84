/**
 * What `buildApp` registers after the core admin API: the core features, each owning its routes
 * (and any scope hooks such as `requireAdmin` or the OAuth error handler) inside its own Fastify
 * plugin, and the protocol plugins (plugin-api/), which `buildApp` sets up first so they can fill
 * the registries the core features read. Adding either is one line here.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { FeatureOptions, GatehousePlugin } from './context.js';
import { accountsFeature } from './accounts/routes.js';
import { pagesFeature } from './pages/routes.js';
import { opsPlugin } from './ops/plugin.js';
import { webhooksFeature } from './webhooks/plugin.js';
import { adminPanelPlugin } from './admin-panel/plugin.js';
import { membersPlugin } from './members/routes.js';
import { invitationsPlugin } from './invitations/routes.js';
import { apiKeysPlugin } from './api-keys/routes.js';
import { auditPlugin } from './audit/routes.js';
import { oauthPlugin } from './oauth/plugin.js';
import { providersFeature } from './accounts/providers/routes.js';
import { emailLinksFeature } from './accounts/email-link-routes.js';
import { passwordPagesFeature } from './pages/password-pages.js';
import { selfServicePlugin } from './self-service/routes.js';
import { secondFactorFeature } from './accounts/second-factor/routes.js';
import { peoplePlugin } from './people/routes.js';
import { groupsPlugin } from './groups/routes.js';
import { activityPlugin } from './activity/routes.js';
import { forwardAuthPlugin } from './forward-auth/plugin.js';
import { radiusPlugin } from './radius/plugin.js';
import { ldapPlugin } from './ldap/plugin.js';
import { appPasswordsPlugin } from './app-passwords/plugin.js';
import { administratorsPlugin } from './administrators/plugin.js';
import { metricsPlugin } from './metrics/route.js';
import { presetsPlugin } from './presets/plugin.js';
import { configAsCodePlugin } from './config-as-code/plugin.js';
import { samlPlugin } from './saml/plugin.js';
import { trustPlugin } from './trust/plugin.js';
import { directorySourcesPlugin } from './directory-sources/plugin.js';

export const featurePlugins: FastifyPluginAsync<FeatureOptions>[] = [
  opsPlugin,
  webhooksFeature,
  adminPanelPlugin,
  membersPlugin,
  invitationsPlugin,
  apiKeysPlugin,
  auditPlugin,
  accountsFeature,
  secondFactorFeature,
  pagesFeature,
  providersFeature,
  emailLinksFeature,
  passwordPagesFeature,
  oauthPlugin,
  selfServicePlugin,
  peoplePlugin,
  groupsPlugin,
  activityPlugin,
];

/** The protocol plugins, set up in this order (their hooks run in it too). */
export const protocolPlugins: GatehousePlugin[] = [
  forwardAuthPlugin,
  ldapPlugin,
  radiusPlugin,
  appPasswordsPlugin,
  administratorsPlugin,
  metricsPlugin,
  presetsPlugin,
  configAsCodePlugin,
  // LAN trust fills ctx.lanTrust itself when its routes register (server/trust/plugin.ts).
  { name: 'trust', setup: () => trustPlugin },
  directorySourcesPlugin,
  samlPlugin,
];
