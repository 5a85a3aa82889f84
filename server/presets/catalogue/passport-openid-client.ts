/**
 * Node with Passport and openid-client's strategy (openid-client 6, `openid-client/passport`).
 * Facts from openid-client's README and its Passport example (discovery, then
 * `new Strategy({ config, scope, callbackURL }, verify)`). Tested here: test/interop/presets-node.test.ts.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, envBlock, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const scopes = ['openid', 'profile', 'email'];

export const passportOpenidClient: Preset = {
  id: 'passport-openid-client',
  name: 'Node: Passport (openid-client)',
  category: 'library',
  protocol: 'oidc',
  version: 1,
  summary: 'A Passport-based Node app signs people in with openid-client\'s strategy.',
  inputs: [baseUrlInput('App address', 'https://app.lan.example')],
  runtime: 'node',
  testedWith: { status: 'tested', product: 'openid-client/passport with passport', version: '6.8 with 0.7.0', test: 'test/interop/presets-node.test.ts' },
  sources: [
    { title: 'openid-client README', section: 'Authorization Code Flow; Passport strategy (openid-client/passport)', url: 'https://github.com/panva/openid-client/blob/v6.8.1/README.md', version: '6.8' },
    { title: 'openid-client Passport example', section: 'examples/passport.ts', url: 'https://github.com/panva/openid-client/blob/v6.8.1/examples/passport.ts', version: '6.8' },
  ],
  caveats: [
    'openid-client 6 refuses an http:// issuer (Gatehouse on a LAN without TLS) unless discovery is given execute: [allowInsecureRequests]; with LAN TLS on, trust the CA instead (the notes say how).',
    'The strategy is named after the issuer\'s host unless given a name; the tests name it gatehouse and pass that name to passport.authenticate.',
  ],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: true, scopes },
  application: (inputs) => oidcApplication({ redirectUris: [`${baseOf(inputs)}/auth/callback`] }),
  requirements: () => [{ kind: 'claim', claim: 'preferred_username', text: 'preferred_username is in the ID token (claims() in the verify callback)' }],
  setup: (c) => ({
    settings: oidcSettings(c, { redirect: c.app.redirectUris[0] }),
    files: [{
      name: '.env',
      content: envBlock([
        ['OIDC_ISSUER', c.issuer],
        ['OIDC_CLIENT_ID', c.app.id],
        ['OIDC_CLIENT_SECRET', PLACEHOLDERS.clientSecret],
        ['OIDC_CALLBACK_URL', c.app.redirectUris[0]!],
        ['OIDC_SCOPE', `"${scopes.join(' ')}"`],
      ]),
    }],
    notes: ['Discover the issuer (client.discovery(new URL(OIDC_ISSUER), OIDC_CLIENT_ID, OIDC_CLIENT_SECRET)) and give the configuration, scope and callback URL to the Strategy.', PLACEHOLDER_NOTE, ...caTrust.runtime(c), TEST_SIGN_IN_NOTE],
  }),
};
