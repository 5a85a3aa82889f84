/**
 * Outline (spec: "Outline: a refresh token was issued"). Facts from Outline's `.env.sample`
 * ("Generic OIDC provider", docs.getoutline.com/s/hosting/doc/oidc-8CPBm6uC0I) and its OIDC
 * plugin's settings (plugins/oidc/server/env.ts): OIDC_* variables, the callback
 * `${URL}/auth/oidc.callback`, OIDC_USERNAME_CLAIM defaulting to preferred_username.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, envBlock, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const scopes = ['openid', 'offline_access', 'profile', 'email'];

export const outline: Preset = {
  id: 'outline',
  name: 'Outline',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Outline signs people in with its generic OIDC provider and keeps the session with a refresh token.',
  inputs: [baseUrlInput('Outline address (URL)', 'https://wiki.lan.example')],
  runtime: 'node',
  testedWith: { status: 'configuration', product: 'Outline', version: '1.9.1', test: 'test/integration/presets.test.ts' },
  sources: [
    { title: 'Outline .env.sample', section: 'Generic OIDC provider (OIDC_CLIENT_ID … OIDC_SCOPES)', url: 'https://github.com/outline/outline/blob/main/.env.sample', version: '1.9.1' },
    { title: 'Outline hosting documentation: OIDC', section: 'Configuration', url: 'https://docs.getoutline.com/s/hosting/doc/oidc-8CPBm6uC0I', version: '2026' },
  ],
  caveats: [
    'Outline\'s default OIDC_SCOPES ("openid profile email") get no refresh token from Gatehouse, which issues one only for offline_access; the preset adds offline_access so sessions outlive the access token.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_post', pkce: false, scopes },
  application: (inputs) =>
    oidcApplication({
      redirectUris: [`${baseOf(inputs)}/auth/oidc.callback`],
      postLogoutRedirectUris: [`${baseOf(inputs)}/`],
      grantTypes: ['authorization_code', 'refresh_token'],
    }),
  requirements: () => [
    { kind: 'refreshToken', text: 'a refresh token was issued (Outline keeps the session with it)' },
    { kind: 'claim', claim: 'preferred_username', text: 'preferred_username is in the ID token (OIDC_USERNAME_CLAIM)' },
  ],
  setup: (c) => ({
    settings: oidcSettings(c, { redirect: c.app.redirectUris[0] }),
    files: [{
      name: '.env',
      content: envBlock([
        ['URL', baseOf(c.inputs)],
        ['OIDC_CLIENT_ID', c.app.id],
        ['OIDC_CLIENT_SECRET', PLACEHOLDERS.clientSecret],
        ['OIDC_AUTH_URI', c.endpoints.authorization],
        ['OIDC_TOKEN_URI', c.endpoints.token],
        ['OIDC_USERINFO_URI', c.endpoints.userinfo],
        ['OIDC_LOGOUT_URI', c.endpoints.endSession],
        ['OIDC_USERNAME_CLAIM', 'preferred_username'],
        ['OIDC_DISPLAY_NAME', 'Gatehouse'],
        ['OIDC_SCOPES', `"${scopes.join(' ')}"`],
      ]),
    }],
    notes: [PLACEHOLDER_NOTE, ...caTrust.runtime(c), TEST_SIGN_IN_NOTE],
  }),
};
