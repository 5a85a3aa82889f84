/**
 * Feature plugins registered by `buildApp` after the core admin API. Each feature owns its
 * routes (and any scope hooks such as `requireAdmin` or the OAuth error handler) inside its own
 * plugin, so adding a feature is one line here.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { FeatureOptions } from './context.js';
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
import { administratorsPlugin } from './administrators/routes.js';
import { metricsFeature } from './metrics/route.js';
import { presetsFeature } from './presets/plugin.js';
import { configPlugin } from './config-as-code/routes.js';
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
  forwardAuthPlugin,
  administratorsPlugin,
  metricsFeature,
  presetsFeature,
  configPlugin,
  trustPlugin,
  directorySourcesPlugin,
];
