/**
 * A single-page app with oidc-client-ts (a public client: code flow with PKCE, no secret). Facts
 * from oidc-client-ts 3.5's documentation (UserManagerSettings: authority, client_id,
 * redirect_uri, post_logout_redirect_uri, response_type, scope). Tested here in Chromium:
 * test/interop/presets-spa.test.ts.
 */
import { TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const scopes = ['openid', 'profile', 'email'];

export const oidcClientTs: Preset = {
  id: 'oidc-client-ts',
  name: 'Single-page app (oidc-client-ts)',
  category: 'library',
  protocol: 'oidc',
  version: 1,
  summary: 'A browser app signs people in itself with oidc-client-ts: a public client with PKCE and no secret.',
  inputs: [baseUrlInput('App address', 'https://spa.lan.example')],
  testedWith: { status: 'tested', product: 'oidc-client-ts in Chromium', version: '3.5.0', test: 'test/interop/presets-spa.test.ts' },
  sources: [{ title: 'oidc-client-ts documentation: UserManagerSettings', section: 'authority, client_id, redirect_uri, post_logout_redirect_uri, response_type, scope', url: 'https://authts.github.io/oidc-client-ts/interfaces/UserManagerSettings.html', version: '3.5.0' }],
  caveats: ['Gatehouse answers the token endpoint with CORS for public clients; the page must be served from the origin of its redirect URI.'],
  client: { tokenEndpointAuthMethod: 'none', pkce: true, scopes },
  application: (inputs) =>
    oidcApplication({ clientType: 'spa', redirectUris: [`${baseOf(inputs)}/callback`], postLogoutRedirectUris: [`${baseOf(inputs)}/`] }),
  requirements: () => [{ kind: 'claim', claim: 'preferred_username', text: 'preferred_username is in the ID token (user.profile.preferred_username)' }],
  setup: (c) => ({
    settings: oidcSettings(c, { secret: false, redirect: c.app.redirectUris[0] }),
    files: [{
      name: 'oidc-settings.json',
      content: `${JSON.stringify({
        authority: c.issuer,
        client_id: c.app.id,
        redirect_uri: c.app.redirectUris[0],
        post_logout_redirect_uri: `${baseOf(c.inputs)}/`,
        response_type: 'code',
        scope: scopes.join(' '),
      }, null, 2)}\n`,
    }],
    notes: ['Give these to new UserManager(settings); call signinRedirect() to sign in and signinRedirectCallback() on the callback page.', TEST_SIGN_IN_NOTE],
  }),
};
