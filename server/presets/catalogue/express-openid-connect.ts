/**
 * Node (Express) with express-openid-connect. Facts from the package's README 3.4.0 ("Configuring
 * the SDK": ISSUER_BASE_URL, BASE_URL, CLIENT_ID, SECRET; CLIENT_SECRET for the code flow) and its
 * ConfigParams reference (routes.callback `/callback`, authorizationParams.response_type).
 * Tested here: test/interop/presets-node.test.ts.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, envBlock, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

const scopes = ['openid', 'profile', 'email'];

export const expressOpenidConnect: Preset = {
  id: 'express-openid-connect',
  name: 'Node: express-openid-connect',
  category: 'library',
  protocol: 'oidc',
  version: 1,
  summary: 'An Express app signs people in with Auth0\'s express-openid-connect middleware (code flow).',
  inputs: [baseUrlInput('App address (BASE_URL)', 'https://app.lan.example')],
  runtime: 'node',
  testedWith: { status: 'tested', product: 'express-openid-connect', version: '3.4.0', test: 'test/interop/presets-node.test.ts' },
  sources: [
    { title: 'express-openid-connect README', section: 'Configuring the SDK', url: 'https://github.com/auth0/express-openid-connect/blob/v3.4.0/README.md', version: '3.4.0' },
    { title: 'express-openid-connect API: ConfigParams', section: 'authorizationParams, clientSecret, routes.callback, idpLogout', url: 'https://auth0.github.io/express-openid-connect/interfaces/ConfigParams.html', version: '3.4.0' },
  ],
  caveats: ['The middleware defaults to response_type id_token (form post); Gatehouse supports the code flow only, so the preset sets response_type code and gives the client secret.'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: true, scopes },
  application: (inputs) => oidcApplication({ redirectUris: [`${baseOf(inputs)}/callback`], postLogoutRedirectUris: [baseOf(inputs), `${baseOf(inputs)}/`] }),
  requirements: () => [{ kind: 'claim', claim: 'email', text: 'email is in the ID token (req.oidc.user.email)' }],
  setup: (c) => ({
    settings: oidcSettings(c, { redirect: c.app.redirectUris[0] }),
    files: [
      {
        name: '.env',
        content: envBlock([
          ['ISSUER_BASE_URL', c.issuer],
          ['BASE_URL', baseOf(c.inputs)],
          ['CLIENT_ID', c.app.id],
          ['CLIENT_SECRET', PLACEHOLDERS.clientSecret],
          ['SECRET', PLACEHOLDERS.appSecret],
        ]),
      },
      {
        name: 'auth-config.json',
        content: `${JSON.stringify({ authRequired: true, idpLogout: true, authorizationParams: { response_type: 'code', scope: scopes.join(' ') } }, null, 2)}\n`,
      },
    ],
    notes: [
      'Pass the JSON as the options of auth() (the environment gives the rest): app.use(auth({ ...config })).',
      `Replace ${PLACEHOLDERS.appSecret} with a long random string (it encrypts the session cookie).`,
      PLACEHOLDER_NOTE,
      ...caTrust.runtime(c),
      TEST_SIGN_IN_NOTE,
    ],
  }),
};
