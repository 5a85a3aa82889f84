/**
 * Portainer's custom OAuth provider. Facts from Portainer's documentation, "Authenticate via
 * OAuth" (portainer-docs, admin/settings/authentication/oauth.md): the fields Client ID, Client
 * secret, Authorization URL, Access token URL, Resource URL, Redirect URL (the Portainer URL),
 * Logout URL, User identifier, Scopes.
 */
import { PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const DOC = 'https://docs.portainer.io/admin/settings/authentication/oauth';
const scopes = ['openid', 'profile', 'email'];

export const portainer: Preset = {
  id: 'portainer',
  name: 'Portainer',
  category: 'web-app',
  protocol: 'oidc',
  version: 1,
  summary: 'Portainer signs people in with its custom OAuth provider and names accounts by their username.',
  inputs: [baseUrlInput('Portainer address', 'https://portainer.lan.example:9443')],
  testedWith: { status: 'documentation', product: 'Portainer CE', version: '2.9 and later', test: null },
  sources: [{ title: 'Portainer documentation: Authenticate via OAuth', section: 'Configuring OAuth authentication in Portainer (the OAuth Configuration table)', url: DOC, version: '2.9+' }],
  caveats: ['Portainer\'s documentation says to set the Redirect URL to the Portainer instance URL; the preset registers it with and without a trailing slash.'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: false, scopes },
  application: (inputs) => oidcApplication({ redirectUris: [baseOf(inputs), `${baseOf(inputs)}/`], postLogoutRedirectUris: [baseOf(inputs), `${baseOf(inputs)}/`] }),
  requirements: () => [{ kind: 'claim', claim: 'preferred_username', text: 'preferred_username is given (Portainer\'s User identifier, read from userinfo)' }],
  setup: (c) => ({
    settings: [
      ...oidcSettings(c).filter((s) => s.label.startsWith('Client')),
      { label: 'Authorization URL', value: c.endpoints.authorization },
      { label: 'Access token URL', value: c.endpoints.token },
      { label: 'Resource URL', value: c.endpoints.userinfo },
      { label: 'Redirect URL', value: baseOf(c.inputs) },
      { label: 'Logout URL', value: `${c.endpoints.endSession}?client_id=${encodeURIComponent(c.app.id)}&post_logout_redirect_uri=${encodeURIComponent(baseOf(c.inputs))}` },
      { label: 'User identifier', value: 'preferred_username' },
      { label: 'Scopes', value: scopes.join(' ') },
    ],
    files: [],
    notes: ['Type these under Settings → Authentication → OAuth → Custom.', PLACEHOLDER_NOTE, ...caTrust.runtime(c), TEST_SIGN_IN_NOTE],
  }),
};
