/**
 * Node with Auth.js (@auth/express, on @auth/core). Facts from Auth.js's documentation: the
 * "Express" installation (ExpressAuth mounted at /auth/*, AUTH_SECRET), "Configuring OAuth
 * providers" (a custom provider `{ id, name, type: "oidc", issuer, clientId, clientSecret }`) and
 * the callback `<basePath>/callback/<provider id>`. Tested here: test/interop/presets-node.test.ts.
 */
import { PLACEHOLDERS, PLACEHOLDER_NOTE, TEST_SIGN_IN_NOTE, baseOf, baseUrlInput, caTrust, envBlock, oidcApplication, oidcSettings } from '../build.js';
import type { Preset } from '../types.js';

export const authjs: Preset = {
  id: 'authjs',
  name: 'Node: Auth.js',
  category: 'library',
  protocol: 'oidc',
  version: 1,
  summary: 'An app built on Auth.js (Express, SvelteKit, Next.js) signs people in with Gatehouse as a custom OIDC provider.',
  inputs: [baseUrlInput('App address (AUTH_URL)', 'https://app.lan.example')],
  runtime: 'node',
  testedWith: { status: 'tested', product: '@auth/express (@auth/core)', version: '0.12.3 (0.41.3)', test: 'test/interop/presets-node.test.ts' },
  sources: [
    { title: 'Auth.js: Installation (Express)', section: 'ExpressAuth at /auth/*, AUTH_SECRET', url: 'https://authjs.dev/getting-started/installation?framework=express', version: '@auth/express 0.12' },
    { title: 'Auth.js: Configuring OAuth providers', section: 'Using a custom provider (type "oidc", issuer)', url: 'https://authjs.dev/guides/configuring-oauth-providers', version: '@auth/core 0.41' },
  ],
  caveats: ['Auth.js checks the state and PKCE by default for OIDC providers; Gatehouse requires nothing more.'],
  client: { tokenEndpointAuthMethod: 'client_secret_basic', pkce: true, scopes: ['openid', 'profile', 'email'] },
  application: (inputs) => oidcApplication({ redirectUris: [`${baseOf(inputs)}/auth/callback/gatehouse`] }),
  requirements: () => [{ kind: 'claim', claim: 'email', text: 'email is in the ID token (the session user\'s email)' }],
  setup: (c) => ({
    settings: oidcSettings(c, { redirect: c.app.redirectUris[0] }),
    files: [
      {
        name: '.env',
        content: envBlock([
          ['AUTH_URL', `${baseOf(c.inputs)}/auth`],
          ['AUTH_SECRET', PLACEHOLDERS.appSecret],
          ['AUTH_GATEHOUSE_ISSUER', c.issuer],
          ['AUTH_GATEHOUSE_ID', c.app.id],
          ['AUTH_GATEHOUSE_SECRET', PLACEHOLDERS.clientSecret],
        ]),
      },
      {
        name: 'auth-provider.json',
        content: `${JSON.stringify({ id: 'gatehouse', name: 'Gatehouse', type: 'oidc', issuer: c.issuer, clientId: c.app.id, clientSecret: PLACEHOLDERS.clientSecret }, null, 2)}\n`,
      },
    ],
    notes: [
      'Give the provider object to ExpressAuth({ providers: [provider], secret }) mounted at /auth/* (the id gatehouse is part of the callback address).',
      `Replace ${PLACEHOLDERS.appSecret} with a long random string (AUTH_SECRET encrypts the session).`,
      PLACEHOLDER_NOTE,
      ...caTrust.runtime(c),
      TEST_SIGN_IN_NOTE,
    ],
  }),
};
