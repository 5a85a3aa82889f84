/**
 * Paperless-ngx through django-allauth's OpenID Connect provider. Facts from Paperless-ngx's
 * documentation v3.0.5: advanced_usage.md ("OpenID Connect and social authentication"),
 * configuration.md (PAPERLESS_SOCIALACCOUNT_PROVIDERS, PAPERLESS_SOCIAL_ACCOUNT_SYNC_GROUPS,
 * PAPERLESS_DISABLE_REGULAR_LOGIN) and migration-v3.md (`token_auth_method`); the callback path
 * from django-allauth's OpenID Connect provider documentation.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, envBlock, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const DOCS = 'https://docs.paperless-ngx.com';
const scopes = ['openid', 'profile', 'email', 'groups'];

export const paperlessNgx: Preset = {
  id: 'paperless-ngx',
  name: 'Paperless-ngx',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Paperless-ngx signs people in through django-allauth\'s OpenID Connect provider, and can take their groups.',
  inputs: [
    baseUrlInput('Paperless-ngx address (PAPERLESS_URL)', 'https://paperless.lan.example'),
    {
      key: 'providerId', label: 'Provider id in Paperless-ngx', example: 'gatehouse', kind: 'text', required: false, default: 'gatehouse',
      pattern: { source: '^[a-z0-9_-]{1,64}$', message: 'lower-case letters, digits, - and _ only (at most 64)' },
      hint: 'django-allauth\'s provider_id; it is part of the callback address.',
    },
  ],
  runtime: 'python',
  testedWith: { status: 'documentation', product: 'Paperless-ngx', version: '3.0.5', test: null },
  sources: [
    { title: 'Paperless-ngx: Advanced Topics', section: 'OpenID Connect and social authentication', url: `${DOCS}/advanced_usage/#oidc-and-social-authentication`, version: '3.0.5' },
    { title: 'Paperless-ngx: Configuration', section: 'PAPERLESS_SOCIALACCOUNT_PROVIDERS, PAPERLESS_SOCIAL_ACCOUNT_SYNC_GROUPS, PAPERLESS_DISABLE_REGULAR_LOGIN', url: `${DOCS}/configuration/`, version: '3.0.5' },
    { title: 'Paperless-ngx: Migrating to v3', section: 'OpenID Connect Token Endpoint Authentication (token_auth_method)', url: `${DOCS}/migration-v3/`, version: '3.0.5' },
    { title: 'django-allauth: OpenID Connect provider', section: 'callback /accounts/oidc/<provider_id>/login/callback/, OAUTH_PKCE_ENABLED, token_auth_method', url: 'https://docs.allauth.org/en/latest/socialaccount/providers/openid_connect.html', version: 'latest (2026)' },
  ],
  caveats: [
    'The Paperless-ngx configuration page says to add a top-level "SCOPES" setting for groups, but its own example (and django-allauth) uses "SCOPE"; the preset uses SCOPE.',
    'Since v3, Paperless-ngx may fail at the callback with invalid_client unless token_auth_method is given; the preset sets client_secret_basic, which Gatehouse accepts.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: true, scopes },
  application: (inputs) =>
    oidcApplication({ redirectUris: [`${baseOf(inputs)}/accounts/oidc/${inputs.providerId ?? 'gatehouse'}/login/callback/`] }),
  requirements: () => [
    { kind: 'claim', claim: 'preferred_username', text: 'preferred_username is in the ID token (the new account\'s username)' },
    { kind: 'claimList', claim: 'groups', text: 'the groups claim is a list (PAPERLESS_SOCIAL_ACCOUNT_SYNC_GROUPS)' },
  ],
  setup: (c) => {
    const providers = {
      openid_connect: {
        SCOPE: scopes,
        OAUTH_PKCE_ENABLED: true,
        APPS: [{
          provider_id: c.inputs.providerId ?? 'gatehouse',
          name: 'Gatehouse',
          client_id: c.app.id,
          secret: PLACEHOLDERS.clientSecret,
          settings: { server_url: c.discoveryUrl, token_auth_method: 'client_secret_basic' },
        }],
      },
    };
    return {
      settings: oidcSettings(c, { redirect: c.app.redirectUris[0] }),
      files: [{
        name: 'paperless.conf',
        content: envBlock([
          ['PAPERLESS_URL', baseOf(c.inputs)],
          ['PAPERLESS_APPS', 'allauth.socialaccount.providers.openid_connect'],
          ['PAPERLESS_SOCIALACCOUNT_PROVIDERS', `'${JSON.stringify(providers)}'`],
          ['PAPERLESS_SOCIAL_ACCOUNT_SYNC_GROUPS', 'true'],
        ]),
      }],
      notes: [
        'Groups are synced only to Paperless-ngx groups that already exist with the same name as the Gatehouse group id.',
        'Once signing in works, PAPERLESS_DISABLE_REGULAR_LOGIN=true hides the password form.',
        PLACEHOLDER_NOTE,
        ...caTrust.runtime(c),
        TEST_SIGN_IN_NOTE,
      ],
    };
  },
};
